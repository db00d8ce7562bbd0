/**
 * A database that cannot be reached, or that another process holds locked beyond the busy
 * timeout, is a dependency fault the caller may retry: 503 SERVICE_UNAVAILABLE with Retry-After,
 * never a 500; once the database is back the same call succeeds.
 */
import { createServer, type Server, Socket } from "node:net";
import { join } from "node:path";
import BetterSqlite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPeerApp,
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../test/helpers/app.js";
import { testDialect } from "../../test/helpers/db.js";

/** A TCP proxy to PostgreSQL that can be taken down (connections cut, new ones refused) and back up. */
async function startSwitchableProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = new Socket();
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        upstream.connect(targetPort, "127.0.0.1");
        client.pipe(upstream);
        upstream.pipe(client);
      });
      server.listen(port, "127.0.0.1", () => {
        const address = server?.address();
        if (address && typeof address === "object") port = address.port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    async down() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    },
    up: listen,
  };
}

let t: TestApp;
let owner: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
});

afterAll(async () => {
  await t?.close();
});

function expectRetryLater(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) {
  expect(res.statusCode).toBe(503);
  expect(res.headers["retry-after"]).toBe("5");
  expect(res.json()).toEqual({
    code: "SERVICE_UNAVAILABLE",
    detail: "The database is not reachable right now. Try again shortly.",
  });
}

describe.runIf(testDialect === "postgres")("PostgreSQL out of reach", () => {
  it("answers 503 with Retry-After while the server is unreachable, then serves again", async () => {
    const url = new URL(t.database.url!);
    const proxy = await startSwitchableProxy(Number(url.port || 5432));
    url.port = String(proxy.port);
    const node = await createPeerApp(t, { DATABASE_URL: url.toString() });
    try {
      const list = () => node.app.inject({ method: "GET", url: "/v1/contact/", headers: owner.headers });
      expect((await list()).statusCode).toBe(200);

      await proxy.down();
      expectRetryLater(await list());
      expectRetryLater(
        await node.app.inject({
          method: "POST",
          url: "/v1/contact/",
          headers: owner.headers,
          payload: { first_name: "While", last_name: "Down" },
        }),
      );

      await proxy.up();
      expect((await list()).statusCode).toBe(200);
    } finally {
      await proxy.down().catch(() => {});
      await node.close();
    }
  });
});

describe.runIf(testDialect === "sqlite")("SQLite locked by another process", () => {
  it("answers 503 with Retry-After when a write waits past the busy timeout, then writes", async () => {
    const other = new BetterSqlite(join(t.database.dataDir, "ferry.db"));
    const create = (first_name: string) =>
      t.app.inject({
        method: "POST",
        url: "/v1/contact/",
        headers: owner.headers,
        payload: { first_name, last_name: "Tester" },
      });
    try {
      other.exec("BEGIN EXCLUSIVE");
      expectRetryLater(await create("Locked"));
    } finally {
      if (other.inTransaction) other.exec("ROLLBACK");
      other.close();
    }
    expect((await create("Unlocked")).statusCode).toBe(201);
    const list = await t.app.inject({ method: "GET", url: "/v1/contact/", headers: owner.headers });
    const names = (list.json() as { results: { first_name: string }[] }).results.map((c) => c.first_name);
    expect(names).toEqual(["Unlocked"]);
  });
});
