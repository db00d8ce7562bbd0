import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  KEY_RELOAD_INTERVAL_MS,
  openKeyRing,
  UNKNOWN_KID_TTL_MS,
  UnknownKeyError,
} from "../../adapters/key-ring/key-ring.js";

describe("token_verify and the account route", () => {
  const h = useHarness();

  it("refuses the token of a revoked application with 401", async () => {
    const account = await createTestAccount(h.t);
    const before = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/token_verify/",
      payload: { token: account.token },
    });
    expect(before.statusCode).toBe(200);
    await h.t.ferry.auth.revokeApplication(account.applicationId);
    const after = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/token_verify/",
      payload: { token: account.token },
    });
    expect(after.statusCode, after.body).toBe(401);
    expect(after.json()).toEqual({
      code: "AUTHENTICATION_FAILURE",
      detail: "The application of this token has been revoked.",
    });
  });

  it("answers GET /v1/account/ to a key of any scopes", async () => {
    for (const scopes of [["contacts:read"], ["media"], ["audit", "sandbox"]]) {
      const scoped = await createTestAccount(h.t, { scopes });
      const res = await h.t.app.inject({ method: "GET", url: "/v1/account/", headers: scoped.headers });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: scoped.accountId, application: { scopes: scopes.join(" ") } });
    }
    // Scopes still hold elsewhere.
    const readOnly = await createTestAccount(h.t, { scopes: ["contacts:read"] });
    const write = await h.t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: readOnly.headers,
      payload: {},
    });
    expect(write.statusCode).toBe(403);
  });
});

describe("key ring lookups of unknown kids", () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-keyring-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let now = 1_000_000;
  const ring = openKeyRing({ dataDir: dir, now: () => now });
  const file = join(dir, "master-keys.json");

  /** Adds `kid` to the key file as another process rotating the ring would. */
  const addKeyOnDisk = (kid: string) => {
    const state = JSON.parse(readFileSync(file, "utf8"));
    state.keys[kid] = Buffer.alloc(32, kid.length).toString("base64");
    writeFileSync(file, JSON.stringify(state));
  };

  it("answers a recently unknown kid from its cache, then reloads after the TTL", () => {
    expect(() => ring.derive("later", "jwt")).toThrow(UnknownKeyError);
    addKeyOnDisk("later");
    now += KEY_RELOAD_INTERVAL_MS * 2;
    // Still within the unknown-kid TTL: no reload for this kid.
    expect(() => ring.derive("later", "jwt")).toThrow(UnknownKeyError);
    now += UNKNOWN_KID_TTL_MS;
    expect(ring.derive("later", "jwt")).toHaveLength(32);
  });

  it("reloads the key file at most once per interval whatever kids are asked for", () => {
    now += KEY_RELOAD_INTERVAL_MS;
    expect(() => ring.derive("random-1", "jwt")).toThrow(UnknownKeyError);
    addKeyOnDisk("fresh");
    // A new kid within the interval does not trigger another read.
    expect(() => ring.derive("fresh", "jwt")).toThrow(UnknownKeyError);
    for (let i = 2; i < 50; i++) expect(() => ring.derive(`random-${i}`, "jwt")).toThrow(UnknownKeyError);
    now += UNKNOWN_KID_TTL_MS;
    expect(ring.derive("fresh", "jwt")).toHaveLength(32);
  });

  it("never reloads for a kid that cannot be one", () => {
    now += UNKNOWN_KID_TTL_MS;
    addKeyOnDisk("x".repeat(40));
    expect(() => ring.derive("x".repeat(40), "jwt")).toThrow(UnknownKeyError);
    expect(() => ring.derive("../../etc", "jwt")).toThrow(UnknownKeyError);
  });
});
