import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { TestAccount } from "../../test/helpers/app.js";
import { createHarness, type Harness, type HarnessOptions } from "../../test/helpers/harness.js";
import { buildServer } from "../app/build-server.js";
import { openFerry } from "../app/processes.js";
import { randomId } from "../shared/ids.js";

const redisUrl = process.env.FERRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe.each([
  ["memory", {}],
  ["redis", { REDIS_URL: redisUrl }],
] as const)("rate limits (%s store)", (_store, storeEnv) => {
  const harnesses: Harness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.close();
  });
  /** A harness on this store with `env`, closed after the tests. */
  const start = async (env: Record<string, string>, options: HarnessOptions = {}) => {
    const h = await createHarness({ ...options, env: { ...storeEnv, ...env } });
    harnesses.push(h);
    return h;
  };

  it("limits each application and answers 429 RATE_LIMIT_REACHED with Retry-After and RateLimit headers", async () => {
    const h = await start(
      { RATE_LIMIT_PER_APPLICATION: "5", RATE_LIMIT_WINDOW_SECONDS: "60" },
      { other: true },
    );
    const { owner: a, other: b } = h;
    const call = (who: TestAccount) => h.call("GET", "/v1/account/", undefined, who);
    const first = await call(a);
    expect(first.headers["ratelimit-limit"]).toBe("5");
    expect(first.headers["ratelimit-remaining"]).toBe("4");
    for (let i = 0; i < 4; i++) expect((await call(a)).statusCode).toBe(200);
    const limited = await call(a);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({
      code: "RATE_LIMIT_REACHED",
      detail: expect.stringMatching(/^Request was throttled/),
    });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect(limited.headers["ratelimit-remaining"]).toBe("0");
    // Another application of the same deployment is not affected.
    expect((await call(b)).statusCode).toBe(200);
  });

  it("limits each client IP, and token operations more tightly", async () => {
    // The harness's own token request comes from another address (127.0.0.1).
    const { t } = await start({ RATE_LIMIT_PER_IP: "3", RATE_LIMIT_AUTH_PER_IP: "2" });
    const from = (ip: string) => t.app.inject({ method: "GET", url: "/v1/account/", remoteAddress: ip });
    for (let i = 0; i < 3; i++) expect((await from("198.51.100.1")).statusCode).toBe(401);
    const limited = await from("198.51.100.1");
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("RATE_LIMIT_REACHED");
    expect((await from("198.51.100.2")).statusCode).toBe(401);
    const login = () =>
      t.app.inject({
        method: "POST",
        url: "/v1/auth/get_token/",
        remoteAddress: "198.51.100.3",
        payload: { api_key: "x", email: "y@example.com" },
      });
    const first = await login();
    expect(first.statusCode).toBe(401);
    // The headers name the token operations' tighter limit from the first call.
    expect(first.headers["ratelimit-limit"]).toBe("2");
    expect(first.headers["ratelimit-remaining"]).toBe("1");
    expect((await login()).statusCode).toBe(401);
    expect((await login()).statusCode).toBe(429);
  });

  it("by default allows a client polling twice a second", async () => {
    const h = await start({ RATE_LIMIT_PER_APPLICATION: "", RATE_LIMIT_PER_IP: "" });
    const { config } = h.t.ferry;
    expect(config.RATE_LIMIT_PER_APPLICATION / config.RATE_LIMIT_WINDOW_SECONDS).toBeGreaterThanOrEqual(2);
    // One minute of polling at 2/s = 120 calls in one window: none is refused.
    for (let i = 0; i < 120; i++) expect((await h.call("GET", "/v1/account/")).statusCode).toBe(200);
  });
});

describe("rate limits across nodes", () => {
  /** Two separately built nodes (own containers, own limiter objects) on one database. */
  async function twoNodes(env: Record<string, string>) {
    const prefix = `ferry-test-${randomId(6)}`;
    const node1 = await createHarness({ env, app: { rateLimitPrefix: prefix } });
    const ferry2 = await openFerry(node1.t.ferry.config, {
      clock: node1.t.clock,
      logger: pino({ level: "silent" }),
      rateLimitPrefix: prefix,
    });
    const node2 = await buildServer(ferry2);
    await node2.ready();
    return {
      node1,
      node2,
      async close() {
        await node2.close();
        await ferry2.close();
        await node1.close();
      },
    };
  }

  async function alternate(nodes: Awaited<ReturnType<typeof twoNodes>>): Promise<number[]> {
    const { owner } = nodes.node1;
    const results: number[] = [];
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? nodes.node1.t.app : nodes.node2;
      results.push(
        (await app.inject({ method: "GET", url: "/v1/account/", headers: owner.headers })).statusCode,
      );
    }
    return results;
  }

  it("share one limit through Redis", async () => {
    const nodes = await twoNodes({ REDIS_URL: redisUrl, RATE_LIMIT_PER_APPLICATION: "4" });
    try {
      expect(await alternate(nodes)).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await nodes.close();
    }
  });

  it("count separately in memory (why Redis is needed for several nodes)", async () => {
    const nodes = await twoNodes({ RATE_LIMIT_PER_APPLICATION: "4" });
    try {
      expect(await alternate(nodes)).toEqual([200, 200, 200, 200, 200, 200]);
    } finally {
      await nodes.close();
    }
  });
});
