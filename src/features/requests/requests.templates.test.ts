import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTwoAccountApp } from "../../../test/helpers/api.js";
import type { TestAccount, TestApp } from "../../../test/helpers/app.js";

describe("email_template_slug on requests", () => {
  let t: TestApp;
  let owner: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    ({ t, owner, other } = await createTwoAccountApp());
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/email_template/",
      headers: other.headers,
      payload: { slug: "welcome", subject: "Hi", html: "<p>{{ message }}</p>" },
    });
    expect(created.statusCode).toBe(201);
  });
  afterAll(async () => t?.close());

  it("refuses a slug that names no template of the account with 422, on create and on update", async () => {
    const create = await t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: owner.headers,
      payload: { email_template_slug: "welcome" },
    });
    expect(create.statusCode).toBe(422);
    expect(create.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: 'The email template "welcome" does not exist.',
    });

    const plain = await t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: owner.headers,
      payload: { is_draft: true },
    });
    expect(plain.statusCode).toBe(201);
    const patch = await t.app.inject({
      method: "PATCH",
      url: `/v1/request/${plain.json().id}/`,
      headers: owner.headers,
      payload: { email_template_slug: "welcome" },
    });
    expect(patch.statusCode).toBe(422);
  });

  it("accepts the slug of one of the account's own templates", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: other.headers,
      payload: { email_template_slug: "welcome" },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().email_template_slug).toBe("welcome");
  });
});
