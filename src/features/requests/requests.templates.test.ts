import { beforeAll, describe, expect, it } from "vitest";
import { buildRequest, buildTemplate } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";

describe("email_template_slug on requests", () => {
  const h = useHarness({ other: true });

  beforeAll(async () => {
    await buildTemplate(h.t, h.other, { slug: "welcome", subject: "Hi" });
  });

  it("refuses a slug that names no template of the account with 422, on create and on update", async () => {
    const create = await h.call("POST", "/v1/request/", { email_template_slug: "welcome" });
    expect(create.statusCode).toBe(422);
    expect(create.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: 'The email template "welcome" does not exist.',
    });

    const plain = await buildRequest(h.t, h.owner, { is_draft: true });
    const patch = await h.call("PATCH", `/v1/request/${plain.id}/`, { email_template_slug: "welcome" });
    expect(patch.statusCode).toBe(422);
  });

  it("accepts the slug of one of the account's own templates", async () => {
    const res = await h.call("POST", "/v1/request/", { email_template_slug: "welcome" }, h.other);
    expect(res.statusCode).toBe(201);
    expect(res.json().email_template_slug).toBe("welcome");
  });
});
