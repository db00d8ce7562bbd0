import { describe, expect, it } from "vitest";
import { useHarness } from "../../test/helpers/harness.js";
import { ConfigError, loadConfig } from "../config/config.js";

const PROXY = "10.0.0.5";
const CLIENT = "203.0.113.7";

describe("TRUST_PROXY settings", () => {
  it("reads true/false, a hop count and a list of addresses or CIDRs", () => {
    expect(loadConfig({ TRUST_PROXY: "false" }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "true" }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "2" }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, 127.0.0.1,::1, fd00::/8, loopback" }).TRUST_PROXY).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
      "::1",
      "fd00::/8",
      "loopback",
    ]);
    expect(() => loadConfig({ TRUST_PROXY: "10.0.0.0/33" })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: "proxy.example" })).toThrow(/proxy\.example/);
  });
});

/** Per-IP limit and audited address behind one proxy at PROXY, with the given TRUST_PROXY. */
function behindProxy(trust: string) {
  describe(`TRUST_PROXY=${trust}`, () => {
    const h = useHarness({ env: { TRUST_PROXY: trust, RATE_LIMIT_PER_IP: "3" } });
    const viaProxy = (forwardedFor: string, remoteAddress = PROXY) =>
      h.t.app.inject({
        method: "GET",
        url: "/v1/openapi.json",
        remoteAddress,
        headers: { "x-forwarded-for": forwardedFor },
      });

    it("limits the client by its real address however the leftmost hop is rotated", async () => {
      for (const spoofed of ["1.1.1.1", "2.2.2.2", "3.3.3.3"])
        expect((await viaProxy(`${spoofed}, ${CLIENT}`)).statusCode).toBe(200);
      const fourth = await viaProxy(`4.4.4.4, ${CLIENT}`);
      expect(fourth.statusCode).toBe(429);
      expect(fourth.json().code).toBe("RATE_LIMIT_REACHED");
      // Another client behind the same proxy keeps its own budget.
      expect((await viaProxy(`4.4.4.4, 203.0.113.8`)).statusCode).toBe(200);
    });

    it("audits the real client address of an API call", async () => {
      const res = await h.call("GET", "/v1/request/", undefined, {
        remoteAddress: PROXY,
        headers: { "x-forwarded-for": `198.51.100.99, 203.0.113.9` },
      });
      expect(res.statusCode).toBe(200);
      const row = await h.t.ferry.database.db
        .selectFrom("audit_entries")
        .select(["from_address"])
        .where("account_id", "=", h.owner.accountId)
        .where("path", "=", "/v1/request/")
        .orderBy("seq", "desc")
        .executeTakeFirstOrThrow();
      expect(row.from_address).toBe("203.0.113.9");
    });
  });
}

behindProxy("1");
behindProxy("10.0.0.0/8");

describe("TRUST_PROXY as a list, with a peer outside it", () => {
  const h = useHarness({ env: { TRUST_PROXY: "10.0.0.0/8", RATE_LIMIT_PER_IP: "2" } });

  it("ignores X-Forwarded-For from a client that is not a listed proxy", async () => {
    const direct = (forwardedFor: string) =>
      h.t.app.inject({
        method: "GET",
        url: "/v1/openapi.json",
        remoteAddress: "198.51.100.1",
        headers: { "x-forwarded-for": forwardedFor },
      });
    expect((await direct("1.1.1.1")).statusCode).toBe(200);
    expect((await direct("2.2.2.2")).statusCode).toBe(200);
    expect((await direct("3.3.3.3")).statusCode).toBe(429);
  });
});
