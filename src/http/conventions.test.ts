import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createTestAccount } from "../../test/helpers/app.js";
import { useHarness } from "../../test/helpers/harness.js";

describe("HTTP conventions and the auth guard", () => {
  const h = useHarness({
    app: {
      extraRoutes: [
        async (app) => {
          app.get("/v1/scoped-probe/", { config: { scope: "requests" } }, async () => ({ ok: true }));
          app.post("/v1/echo/", { config: { scope: "requests" } }, async (request) => ({
            body: request.body,
          }));
        },
      ],
    },
  });
  const { call } = h;

  it("serves paths with and without the trailing slash, without redirecting", async () => {
    for (const url of ["/v1/account/", "/v1/account"]) {
      const res = await call("GET", url);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        id: h.owner.accountId,
        email: h.owner.email,
        application: { id: h.owner.applicationId },
      });
    }
  });

  it("puts a request id on every response", async () => {
    const a = await h.t.app.inject({ method: "GET", url: "/v1/account/" });
    const b = await h.t.app.inject({ method: "GET", url: "/healthz" });
    expect(a.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers["x-request-id"]).not.toBe(b.headers["x-request-id"]);
  });

  it("answers 404 naming the supported versions for a missing or unknown version", async () => {
    const missing = await h.t.app.inject({ method: "GET", url: "/request/" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      code: "RESOURCE_NOT_FOUND",
      detail: expect.stringContaining("Supported versions: v1"),
    });
    const unknown = await h.t.app.inject({ method: "GET", url: "/v2/account/" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      code: "RESOURCE_NOT_FOUND",
      detail: "API version v2 is not supported. Supported versions: v1.",
    });
    const nothing = await h.t.app.inject({ method: "GET", url: "/v1/no-such-thing/" });
    expect(nothing.statusCode).toBe(404);
    expect(nothing.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Not found." });
  });

  it("answers 405 with Allow for a wrong method on a known path", async () => {
    const res = await h.t.app.inject({ method: "DELETE", url: "/v1/auth/get_token" });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(res.json()).toEqual({ code: "METHOD_NOT_SUPPORTED", detail: 'Method "DELETE" not allowed.' });
  });

  it("refuses unsupported content types with 415", async () => {
    const res = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      headers: { "content-type": "application/xml" },
      payload: "<api_key>x</api_key>",
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 400 with a JSON body for malformed JSON and broken multipart", async () => {
    const json = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      headers: { "content-type": "application/json" },
      payload: "{bad",
    });
    expect(json.statusCode).toBe(400);
    expect(json.json()).toEqual({
      code: "INVALID_REQUEST",
      detail: "JSON parse error: the body is not valid JSON.",
    });
    const multi = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      headers: { "content-type": "multipart/form-data" },
      payload: "api_key=x",
    });
    expect(multi.statusCode).toBe(400);
    expect(multi.json()).toEqual({
      code: "INVALID_REQUEST",
      detail: "Malformed multipart body (missing or wrong boundary).",
    });
  });

  it("treats an empty JSON body as {} and accepts charset parameters and ISO-8859-1", async () => {
    const empty = await call("POST", "/v1/echo/", undefined, { contentType: "application/json" });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ body: {} });
    for (const ct of ["application/json; charset=UTF-8", "application/json; charset=ISO-8859-1"]) {
      const res = await call("POST", "/v1/echo", '{"a":1}', { contentType: ct });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ body: { a: 1 } });
    }
  });

  it("limits body size with 413", async () => {
    const res = await call("POST", "/v1/echo/", { x: "a".repeat(2 * 1024 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("answers CORS preflights", async () => {
    const res = await h.t.app.inject({
      method: "OPTIONS",
      url: "/v1/request/",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers["access-control-allow-origin"]).toBe("https://app.example.com");
    expect(String(res.headers["access-control-allow-methods"])).toContain("POST");
    expect(String(res.headers["access-control-allow-headers"]).toLowerCase()).toContain("authorization");
  });

  describe("401 AUTHENTICATION_FAILURE", () => {
    const expect401 = async (headers: Record<string, string>, detail?: string) => {
      const res = await h.t.app.inject({ method: "GET", url: "/v1/account/", headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe("AUTHENTICATION_FAILURE");
      if (detail) expect(res.json().detail).toBe(detail);
    };

    it("missing header", () => expect401({}, "Authentication credentials were not provided."));
    it("malformed header", () => expect401({ authorization: "Token abc def" }));
    it("garbage token", () => expect401({ authorization: "JWT not.a.jwt" }, "Error decoding signature."));
    it("accepts Bearer as well as JWT", async () => {
      const res = await h.t.app.inject({
        method: "GET",
        url: "/v1/account/",
        headers: { authorization: `Bearer ${h.owner.token}` },
      });
      expect(res.statusCode).toBe(200);
    });
    it("tampered signature", async () => {
      const [head, p, s] = h.owner.token.split(".");
      const flipped = `${s!.slice(0, -2)}${s!.endsWith("AA") ? "BB" : "AA"}`;
      await expect401({ authorization: `JWT ${head}.${p}.${flipped}` }, "Error decoding signature.");
      const otherPayload = Buffer.from(
        JSON.stringify({
          app_id: h.owner.applicationId,
          account_id: 999,
          iat: 1,
          orig_iat: 1,
          exp: 9999999999,
        }),
      ).toString("base64url");
      await expect401({ authorization: `JWT ${head}.${otherPayload}.${s}` }, "Error decoding signature.");
    });
    it("alg: none", async () => {
      const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
      const payload = Buffer.from(
        JSON.stringify({
          app_id: h.owner.applicationId,
          account_id: h.owner.accountId,
          iat: 1,
          orig_iat: 1,
          exp: 9999999999,
        }),
      ).toString("base64url");
      await expect401({ authorization: `JWT ${header}.${payload}.` });
    });
    it("token signed with a key not in the ring", async () => {
      const forged = await new SignJWT({
        app_id: h.owner.applicationId,
        account_id: h.owner.accountId,
        orig_iat: 1,
      })
        .setProtectedHeader({ alg: "HS256", kid: h.t.ferry.keyRing.activeKid })
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(Buffer.alloc(32, 7));
      await expect401({ authorization: `JWT ${forged}` }, "Error decoding signature.");
    });
  });

  it("refuses a key without the route's scope with 403 NOT_AUTHORIZED, and allows it with the scope", async () => {
    const limited = await createTestAccount(h.t, { scopes: ["media"] });
    const denied = await call("GET", "/v1/scoped-probe/", undefined, limited);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe("NOT_AUTHORIZED");
    const reader = await createTestAccount(h.t, { scopes: ["requests:read"] });
    expect((await call("GET", "/v1/scoped-probe/", undefined, reader)).statusCode).toBe(200);
    const write = await call("POST", "/v1/echo/", {}, reader);
    expect(write.statusCode).toBe(403);
  });

  it("serves the OpenAPI 3.1 document and the docs page", async () => {
    const spec = await h.t.app.inject({ method: "GET", url: "/v1/openapi.json" });
    expect(spec.statusCode).toBe(200);
    const doc = spec.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/auth/get_token/",
        "/v1/auth/token_refresh/",
        "/v1/auth/token_verify/",
        "/v1/account/",
      ]),
    );
    expect(doc.paths["/v1/auth/get_token/"].post.requestBody.content).toHaveProperty(
      "application/x-www-form-urlencoded",
    );
    const docs = await h.t.app.inject({ method: "GET", url: "/docs/" });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain("<h1>Ferry: Secure File Exchange API</h1>");
    expect(docs.headers["content-security-policy"]).toContain("script-src 'self'");
    const home = await h.t.app.inject({ method: "GET", url: "/" });
    expect(home.statusCode).toBe(200);
    expect(home.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(home.body).toContain('<a href="/docs">/docs</a>');
    const icon = await h.t.app.inject({ method: "GET", url: "/favicon.ico" });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers["content-type"]).toBe("image/svg+xml");
  });

  it("renders the API reference's inline code as <code>, never as literal backticks", async () => {
    const docs = await h.t.app.inject({ method: "GET", url: "/docs" });
    expect(docs.statusCode).toBe(200);
    // The session chat route's description names its redirect targets in backticks.
    expect(docs.body).toContain("<code>?notice=replied#chat</code>");
    const text = docs.body.replace(/<[^>]+>/g, "");
    expect(text).not.toMatch(/`[^`\n]+`/);
  });

  it("reports health and readiness", async () => {
    expect((await h.t.app.inject({ method: "GET", url: "/healthz" })).json()).toEqual({ status: "ok" });
    expect((await h.t.app.inject({ method: "GET", url: "/readyz" })).json()).toEqual({ status: "ready" });
  });
});
