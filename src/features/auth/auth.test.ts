import { describe, expect, it } from "vitest";
import { createTestAccount, type TestApp } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";

const HOUR = 3600_000;

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
}

/** An anonymous JSON POST to a token endpoint (they take no token header). */
const tokenPost = (t: TestApp, action: "get_token" | "token_refresh" | "token_verify", payload: object) =>
  t.app.inject({ method: "POST", url: `/v1/auth/${action}/`, payload });

describe("token operations", () => {
  const h = useHarness();

  const getToken = (payload: string | Record<string, unknown>, contentType?: string) =>
    h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload,
      headers: contentType ? { "content-type": contentType } : {},
    });

  it("issues a token for JSON, form-urlencoded and multipart bodies, with and without trailing slash", async () => {
    const json = await getToken({ api_key: h.owner.apiKey, email: h.owner.email });
    expect(json.statusCode).toBe(200);
    const form = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams({ api_key: h.owner.apiKey, email: h.owner.email }).toString(),
    });
    expect(form.statusCode).toBe(200);
    const boundary = "----ferryboundary";
    const multipartBody = [
      `--${boundary}\r\nContent-Disposition: form-data; name="api_key"\r\n\r\n${h.owner.apiKey}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="email"\r\n\r\n${h.owner.email}\r\n`,
      `--${boundary}--\r\n`,
    ].join("");
    const multi = await getToken(multipartBody, `multipart/form-data; boundary=${boundary}`);
    expect(multi.statusCode).toBe(200);
    for (const res of [json, form, multi]) {
      const body = res.json();
      expect(Object.keys(body)).toEqual(["token", "expires_in", "exp"]);
      const claims = claimsOf(body.token);
      expect(claims).toMatchObject({ app_id: h.owner.applicationId, account_id: h.owner.accountId });
      expect(claims.exp).toBe((claims.iat as number) + 8 * 3600);
      expect(claims.orig_iat).toBe(claims.iat);
      const header = JSON.parse(Buffer.from(body.token.split(".")[0], "base64url").toString());
      expect(header).toEqual({ alg: "HS256", typ: "JWT", kid: h.t.ferry.keyRing.activeKid });
    }
  });

  it("matches the owner's email case-insensitively", async () => {
    const res = await getToken({ api_key: h.owner.apiKey, email: h.owner.email.toUpperCase() });
    expect(res.statusCode).toBe(200);
  });

  it("refuses a wrong key, a wrong email, another account's email, and missing fields", async () => {
    const other = await createTestAccount(h.t);
    for (const payload of [
      { api_key: "fry_sbx_wrong", email: h.owner.email },
      { api_key: h.owner.apiKey, email: "nobody@example.com" },
      { api_key: h.owner.apiKey, email: other.email },
    ]) {
      const res = await getToken(payload);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        code: "AUTHENTICATION_FAILURE",
        detail: "Unable to log in with the provided credentials.",
      });
    }
    const missing = await getToken({});
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      api_key: ["This field is required."],
      email: ["This field is required."],
    });
  });

  it("audits AAA-0001 on success and AAA-0002 on failure, without secrets", async () => {
    const fresh = await createTestAccount(h.t);
    await getToken({ api_key: "fry_sbx_wrong", email: fresh.email });
    const rows = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .selectAll()
      .where("account_id", "=", fresh.accountId)
      .orderBy("seq")
      .execute();
    expect(rows.map((r) => r.code)).toEqual(["AAA-0001", "AAA-0002"]);
    expect(rows[0]).toMatchObject({
      api_key_id: String(fresh.applicationId),
      method: "POST",
      path: "/v1/auth/get_token/",
    });
    const text = JSON.stringify(rows);
    expect(text).not.toContain(fresh.apiKey);
    expect(text).not.toContain(fresh.token);
  });

  it("records AAA-0010 for an authenticated call with method, path, address, key id and status", async () => {
    const caller = await createTestAccount(h.t);
    const res = await h.call("GET", "/v1/account/?x=1", undefined, {
      as: caller,
      remoteAddress: "203.0.113.9",
    });
    expect(res.statusCode).toBe(200);
    const row = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .selectAll()
      .where("account_id", "=", caller.accountId)
      .where("code", "=", "AAA-0010")
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      method: "GET",
      path: "/v1/account/",
      from_address: "203.0.113.9",
      api_key_id: String(caller.applicationId),
      value: "200",
    });
  });

  it("verifies a valid token by returning it, and refuses an invalid one", async () => {
    const ok = await tokenPost(h.t, "token_verify", { token: h.owner.token });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ token: h.owner.token });
    const bad = await tokenPost(h.t, "token_verify", { token: `${h.owner.token}x` });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().code).toBe("AUTHENTICATION_FAILURE");
  });

  it("refreshes with a new exp and the same orig_iat; the new token works", async () => {
    h.t.clock.advance(2 * HOUR);
    const res = await tokenPost(h.t, "token_refresh", { token: h.owner.token });
    expect(res.statusCode).toBe(200);
    const fresh = res.json().token as string;
    const before = claimsOf(h.owner.token);
    const after = claimsOf(fresh);
    expect(after.orig_iat).toBe(before.orig_iat);
    expect(after.exp).toBe((before.exp as number) + 2 * 3600);
    const withFresh = await h.call("GET", "/v1/account/", undefined, {
      headers: { authorization: `JWT ${fresh}` },
    });
    expect(withFresh.statusCode).toBe(200);
  });
});

describe("token expiry, refresh window and revocation (fixed clock)", () => {
  const h = useHarness();
  const account = (owner: Parameters<typeof h.call>[3]) => h.call("GET", "/v1/account/", undefined, owner);

  it("refuses an expired token with 401", async () => {
    const owner = await createTestAccount(h.t);
    h.t.clock.advance(8 * HOUR - 1000);
    expect((await account(owner)).statusCode).toBe(200);
    h.t.clock.advance(2000);
    const res = await account(owner);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: "AUTHENTICATION_FAILURE", detail: "Signature has expired." });
    const refresh = await tokenPost(h.t, "token_refresh", { token: owner.token });
    expect(refresh.statusCode).toBe(401);
  });

  it("allows refresh chains while orig_iat is within 7 days, refuses after", async () => {
    const owner = await createTestAccount(h.t);
    let token = owner.token;
    for (let i = 0; i < 23; i++) {
      h.t.clock.advance(7 * HOUR);
      const res = await tokenPost(h.t, "token_refresh", { token });
      expect(res.statusCode).toBe(200);
      token = res.json().token;
    }
    // 161 h after orig_iat. At 167 h a refresh is still within 7 days (168 h); at 169 h it is not.
    h.t.clock.advance(6 * HOUR);
    const inside = await tokenPost(h.t, "token_refresh", { token });
    expect(inside.statusCode).toBe(200);
    token = inside.json().token;
    h.t.clock.advance(2 * HOUR);
    const outside = await tokenPost(h.t, "token_refresh", { token });
    expect(outside.statusCode).toBe(401);
    expect(outside.json()).toEqual({ code: "AUTHENTICATION_FAILURE", detail: "Refresh has expired." });
  });

  it("refuses tokens and keys of a revoked application at once", async () => {
    const owner = await createTestAccount(h.t);
    expect((await account(owner)).statusCode).toBe(200);
    await h.t.ferry.auth.revokeApplication(owner.applicationId);
    const call = await account(owner);
    expect(call.statusCode).toBe(401);
    expect(call.json()).toEqual({
      code: "AUTHENTICATION_FAILURE",
      detail: "The application of this token has been revoked.",
    });
    const login = await tokenPost(h.t, "get_token", { api_key: owner.apiKey, email: owner.email });
    expect(login.statusCode).toBe(401);
    const refresh = await tokenPost(h.t, "token_refresh", { token: owner.token });
    expect(refresh.statusCode).toBe(401);
  });

  it("stores API keys only as hashes", async () => {
    const owner = await createTestAccount(h.t);
    const rows = await h.t.ferry.database.db.selectFrom("applications").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(owner.apiKey);
    expect(rows.find((r) => r.id === owner.applicationId)?.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("PATCH /v1/account/", () => {
  const h = useHarness({ other: true });

  it("renames the account: GET answers the new name, another account keeps its own", async () => {
    const otherBefore = (await h.call("GET", "/v1/account/", undefined, h.other)).json().name;
    const patched = await h.call("PATCH", "/v1/account/", { name: "  Harbour Legal  " });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().name).toBe("Harbour Legal");
    expect((await h.call("GET", "/v1/account/")).json().name).toBe("Harbour Legal");
    expect((await h.call("GET", "/v1/account/", undefined, h.other)).json().name).toBe(otherBefore);
  });

  it("answers 400 naming a read-only field or a bad name, and changes nothing", async () => {
    const before = (await h.call("GET", "/v1/account/")).json();
    const readOnly = await h.call("PATCH", "/v1/account/", { name: "Changed", email: "x@example.com" });
    expect(readOnly.statusCode).toBe(400);
    expect(readOnly.json()).toEqual({ email: ["This field is read-only."] });
    const empty = await h.call("PATCH", "/v1/account/", { name: "   ", default_language: "de" });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ name: ["Enter a name of 1 to 200 characters."] });
    const long = await h.call("PATCH", "/v1/account/", { name: "n".repeat(201) });
    expect(long.statusCode).toBe(400);
    expect((await h.call("GET", "/v1/account/")).json()).toEqual(before);
  });
});
