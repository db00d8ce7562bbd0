import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  type TestAccount,
  type TestApp,
} from "../../test/helpers/app.js";

/** Sends GET `path` exactly as written (no client-side normalisation) to the listening server. */
function rawGet(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method: "GET", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("one canonical path before any protection", () => {
  let t: TestApp;
  let owner: TestAccount;
  let port: number;
  let identifier: string;
  let requestId: number;

  beforeAll(async () => {
    t = await createTestApp({ RECIPIENT_RATE_LIMIT_PER_IP: "6", RATE_LIMIT_PER_IP: "6" });
    owner = await createTestAccount(t);
    ({ port } = await listenOnLoopback(t.app));
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: owner.headers,
      payload: { type: "pull", message: "Upload please" },
    });
    requestId = created.json().id;
    identifier = created.json().identifier;
  });
  afterAll(async () => t?.close());

  const pageCalls = async () =>
    (
      await t.ferry.database.db
        .selectFrom("audit_entries")
        .select("id")
        .where("account_id", "=", owner.accountId)
        .where("code", "=", "AAA-0011")
        .where("relation_key", "=", String(requestId))
        .execute()
    ).length;

  it.each([
    ["doubled leading slash", () => `//r/${identifier}/`],
    ["doubled inner slash", () => `/r//${identifier}/`],
    ["dot segment", () => `/./r/${identifier}/`],
    ["encoded dot segment", () => `/%2e/r/${identifier}/`],
    ["climbing dot-dot", () => `/r/x/../${identifier}/`],
  ])(
    "a recipient page reached through a %s carries the page protections and its audit entry",
    async (_name, path) => {
      const before = await pageCalls();
      const res = await rawGet(port, path());
      expect(res.status).toBe(200);
      expect(res.body).toContain("Upload please");
      expect(res.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["cache-control"]).toMatch(/no-store/);
      expect(await pageCalls()).toBe(before + 1);
    },
  );

  it("an encoded slash is data, not a separator: no recipient page answers", async () => {
    const res = await rawGet(port, `/%2Fr%2F${identifier}/`);
    expect(res.status).toBe(404);
    expect(res.body).not.toContain("Upload please");
    const inside = await rawGet(port, `/r/${identifier}%2F/`);
    expect(inside.body).not.toContain("Upload please");
  });

  it("the recipient rate limit counts every spelling of a page", async () => {
    const spellings = [`//r/${identifier}/`, `/r//${identifier}/`, `/./r/${identifier}/`];
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await rawGet(port, spellings[i % 3]!)).status);
    expect(statuses).toContain(429);
  });

  it("//v1/ is the API: authenticated, audited and counted by the per-IP limit", async () => {
    const unauthenticated = await rawGet(port, "//v1/account/");
    expect(unauthenticated.status).toBe(401);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await rawGet(port, "//v1//account/", owner.headers)).status);
    expect(statuses).toContain(429);
    expect(statuses[0]).toBe(200);
  });
});
