import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";

describe("POST /v1/module_container/container/", () => {
  let t: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  it("says containers are not available, with or without a body", async () => {
    for (const payload of [undefined, { name: "x" }]) {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/module_container/container/",
        headers: { authorization: `JWT ${owner.token}` },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        code: "RESOURCE_NOT_FOUND",
        detail: expect.stringContaining("Containers (/v1/module_container/) are not available in Ferry"),
      });
    }
  });

  it("asks for a token first, like every API call", async () => {
    const res = await t.app.inject({ method: "POST", url: "/v1/module_container/container/" });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe("AUTHENTICATION_FAILURE");
  });

  it("is listed in the OpenAPI document", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    expect(doc.paths["/v1/module_container/container/"].post.summary).toContain("Not available in Ferry");
  });
});
