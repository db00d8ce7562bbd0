import { Migrator, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";
import { runFerry } from "../../test/helpers/process.js";
import { reconcileListCounts } from "./list-counts.js";
import { migrations } from "./migrations/index.js";
import { migrateToLatest } from "./migrator.js";

/** Kept list counts against COUNT(*) under concurrent creates, deletes and sends. */
describe("list counts", () => {
  const h = useHarness({ other: true });
  const { call } = h;

  async function actual(table: string, where = "1 = 1"): Promise<number> {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.raw(table)} WHERE account_id = ${
      h.owner.accountId
    } AND ${sql.raw(where)}`.execute(h.t.ferry.database.db);
    return Number(r.rows[0]!.n);
  }

  async function listed(path: string): Promise<number> {
    const res = await call("GET", path);
    expect(res.statusCode).toBe(200);
    return res.json().count;
  }

  it("keeps request counts equal to the rows through 40 concurrent creates, sends and deletes", async () => {
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        buildRequest(h.t, h.owner, i % 2 === 0 ? { is_draft: true } : {}).then((r) => r.id as number),
      ),
    );
    await buildRequest(h.t, h.other);
    expect(await listed("/v1/request/")).toBe(await actual("requests", "kind = 'request'"));
    expect(await actual("requests", "kind = 'request'")).toBeGreaterThanOrEqual(40);

    // 40 concurrent changes: deletes, and drafts sent (moving rows into the sent count).
    const results = await Promise.all(
      created.map((id, i) =>
        i % 4 === 0
          ? call("PATCH", `/v1/request/${id}/`, { is_draft: false })
          : i % 2 === 1
            ? call("DELETE", `/v1/request/${id}/`)
            : call("GET", `/v1/request/${id}/`),
      ),
    );
    for (const r of results) expect(r.statusCode).toBeLessThan(300);
    const all = await actual("requests", "kind = 'request'");
    const sent = await actual("requests", "kind = 'request' AND is_draft = 0");
    expect(await listed("/v1/request/")).toBe(all);
    const counter = await call("GET", "/v1/request/counter/");
    expect(counter.json()).toEqual({ count: sent, counter: sent });
    expect(sent).toBeLessThan(all);
  });

  it("keeps contact counts equal to the rows through 40 concurrent creates and deletes", async () => {
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call("POST", "/v1/contact/", { first_name: `C${i}` }).then((r) => r.json().id as number),
      ),
    );
    expect(await listed("/v1/contact/")).toBe(await actual("contacts"));
    const deletes = await Promise.all(ids.slice(0, 20).map((id) => call("DELETE", `/v1/contact/${id}/`)));
    for (const d of deletes) expect(d.statusCode).toBeLessThan(300);
    expect(await listed("/v1/contact/")).toBe(await actual("contacts"));
  });

  it("rebuilds counts that drifted from the rows (ferry admin reconcile-counts)", async () => {
    const db = h.t.ferry.database.db;
    await db
      .updateTable("list_counts")
      .set({ n: 999_999 })
      .where("account_id", "=", h.owner.accountId)
      .execute();
    await db.deleteFrom("list_counts").where("account_id", "=", h.other.accountId).execute();
    const env = { ...h.t.database.env, PUBLIC_BASE_URL: "http://ferry.test" };
    const run = await runFerry(["admin", "reconcile-counts", "--json"], env);
    expect(run.code).toBe(0);
    const { fixed } = JSON.parse(run.stdout) as { fixed: { account_id: number; list: string }[] };
    expect(fixed).toContainEqual(
      expect.objectContaining({ account_id: h.owner.accountId, list: "requests" }),
    );
    expect(fixed).toContainEqual(
      expect.objectContaining({ account_id: h.other.accountId, list: "requests" }),
    );
    expect(await listed("/v1/request/")).toBe(await actual("requests", "kind = 'request'"));
    expect(await listed("/v1/contact/")).toBe(await actual("contacts"));
    const again = await db
      .transaction()
      .execute((trx) => reconcileListCounts(trx, h.t.ferry.database.dialect === "postgres"));
    expect(again).toEqual([]);
  });

  it("pages through the requests newest first, the older half walked from the oldest end", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 23; i++) ids.push((await buildRequest(h.t, h.other)).id as number);
    const other = (path: string, query: Record<string, string>) =>
      h.t.app.inject({ method: "GET", url: path, query, headers: h.other.headers });
    const seen: number[] = [];
    for (const page of ["1", "2", "3", "4"]) {
      const res = await other("/v1/request/", { page, page_size: "7" });
      expect(res.statusCode).toBe(200);
      expect(res.json().count).toBe(await actualOf(h.other.accountId));
      seen.push(...res.json().results.map((r: { id: number }) => r.id));
    }
    const all = await h.t.ferry.database.db
      .selectFrom("requests")
      .select("id")
      .where("account_id", "=", h.other.accountId)
      .where("kind", "=", "request")
      .orderBy("id", "desc")
      .execute();
    expect(seen).toEqual(all.map((r) => r.id));
    expect(seen.slice(0, 23)).toEqual([...ids].reverse());
    const beyond = await other("/v1/request/", { page: "5", page_size: "7" });
    expect(beyond.statusCode).toBe(404);
  });

  async function actualOf(accountId: number): Promise<number> {
    const r = await h.t.ferry.database.db
      .selectFrom("requests")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .where("kind", "=", "request")
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  it("fills the counts from the rows already there when migrated (and drops them when undone)", async () => {
    const { db } = h.t.ferry.database;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const down = await migrator.migrateTo("0028_feature_files_destroyed");
    expect(down.error).toBeUndefined();
    for (let i = 0; i < 3; i++) await buildRequest(h.t, h.owner, i === 0 ? { is_draft: true } : {});
    await call("POST", "/v1/contact/", { first_name: "Before" });
    expect((await migrateToLatest(db)).length).toBeGreaterThan(0);
    expect(await listed("/v1/request/")).toBe(await actual("requests", "kind = 'request'"));
    expect(await listed("/v1/contact/")).toBe(await actual("contacts"));
    const counter = await call("GET", "/v1/request/counter/");
    expect(counter.json().count).toBe(await actual("requests", "kind = 'request' AND is_draft = 0"));
  });
});
