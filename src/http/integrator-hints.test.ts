import { describe, expect, it } from "vitest";
import { useHarness } from "../../test/helpers/harness.js";

describe("hints for integrators", () => {
  const h = useHarness();

  it("tells a caller who sends the API key as a token to exchange it, with a WWW-Authenticate challenge", async () => {
    for (const scheme of ["Bearer", "JWT"]) {
      const res = await h.t.app.inject({
        method: "GET",
        url: "/v1/request/",
        headers: { authorization: `${scheme} ${h.owner.apiKey}` },
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('JWT realm="ferry", charset="UTF-8"');
      expect(res.json()).toEqual({
        code: "AUTHENTICATION_FAILURE",
        detail: expect.stringContaining(
          "This is an API key, not a token. Exchange it at POST /v1/auth/get_token/",
        ),
      });
    }
    for (const headers of [{}, { authorization: "JWT not.a.jwt" }]) {
      const res = await h.t.app.inject({ method: "GET", url: "/v1/request/", headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('JWT realm="ferry", charset="UTF-8"');
    }
  });

  it("says when a token from get_token or token_refresh expires", async () => {
    const res = await h.call("POST", "/v1/auth/get_token/", {
      api_key: h.owner.apiKey,
      email: h.owner.email,
    });
    expect(res.statusCode).toBe(200);
    const issued = res.json();
    // The fixed clock stands at 2026-01-15T10:00:00Z; tokens live TOKEN_TTL_SECONDS (8 hours).
    expect(issued).toEqual({
      token: expect.any(String),
      expires_in: 28800,
      exp: Date.parse("2026-01-15T18:00:00Z") / 1000,
    });
    const refreshed = await h.call("POST", "/v1/auth/token_refresh/", { token: issued.token });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json()).toMatchObject({ expires_in: 28800, exp: issued.exp });
  });
});
