/**
 * /v1/application/: automation lists, creates and revokes the account's applications (key
 * rotation); only keys with every scope may; another account's application is a 404.
 */
import { describe, expect, it } from "vitest";
import { expectJson } from "../../../test/helpers/api.js";
import { createTestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";

describe("/v1/application/", () => {
  const h = useHarness({ other: true });

  it("rotates a key: create a new application, use its key, revoke the old one", async () => {
    const created = expectJson(
      await h.call("POST", "/v1/application/", { name: "Rotated", scopes: ["requests", "media:read"] }),
      201,
    );
    expect(created.api_key).toMatch(/^fry_sbx_/);
    expect(created.application).toMatchObject({
      name: "Rotated",
      scopes: "requests media:read",
      active: true,
    });
    expect(created.application).not.toHaveProperty("key_hash");
    const token = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload: { api_key: created.api_key, email: h.owner.email },
    });
    expect(token.statusCode).toBe(200);
    const list = expectJson(await h.call("GET", "/v1/application/"), 200);
    expect(list.results.map((a: { id: number }) => a.id)).toEqual([
      created.application.id,
      h.owner.applicationId,
    ]);
    expect(JSON.stringify(list)).not.toContain(created.api_key);

    // A key without scope * may not manage applications.
    const scoped = await h.t.app.inject({
      method: "GET",
      url: "/v1/application/",
      headers: { authorization: `JWT ${token.json().token}` },
    });
    expect(scoped.statusCode).toBe(403);

    const spare = await createTestAccount(h.t, { email: `spare-${Date.now()}@example.com` });
    const newer = expectJson(await h.call("POST", "/v1/application/", { name: "Spare" }, spare), 201);
    expect(
      (await h.call("DELETE", `/v1/application/${spare.applicationId}/`, undefined, spare)).statusCode,
    ).toBe(204);
    // The revoked application's token stops working at once.
    expect((await h.call("GET", "/v1/account/", undefined, spare)).statusCode).toBe(401);
    expect(newer.application.scopes).toBe("*");
  });

  it("keeps accounts apart: another account's application is 404", async () => {
    const other = h.other.applicationId;
    expect((await h.call("GET", `/v1/application/${other}/`)).statusCode).toBe(404);
    expect((await h.call("DELETE", `/v1/application/${other}/`)).statusCode).toBe(404);
    expect((await h.call("GET", "/v1/account/", undefined, h.other)).statusCode).toBe(200);
  });

  it("answers field messages for a bad name or scope", async () => {
    const res = await h.call("POST", "/v1/application/", { name: "", scopes: ["nope"] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      name: [expect.any(String)],
      scopes: [expect.stringContaining("nope")],
    });
  });

  it("refuses to revoke twice", async () => {
    const created = expectJson(await h.call("POST", "/v1/application/", { name: "Twice" }), 201);
    expect((await h.call("DELETE", `/v1/application/${created.application.id}/`)).statusCode).toBe(204);
    expect((await h.call("DELETE", `/v1/application/${created.application.id}/`)).statusCode).toBe(404);
    const read = expectJson(await h.call("GET", `/v1/application/${created.application.id}/`), 200);
    expect(read).toMatchObject({ active: false, revoked_at: expect.any(String) });
  });
});
