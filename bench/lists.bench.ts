/**
 * Lists at scale, against a real `ferry serve`: 1,000,000 requests in one account (bulk inserted by
 * SQL, each with one contact), 200,000 containers, 200,000 notifications (a third failed) and
 * 100,000 chained audit entries in the same account. Times page 1, page 500 and the last page
 * (page_size 10) of GET /v1/request/, /v1/module_container/container/, /v1/notification/ (also
 * filtered by state=failed) and /v1/logentry/search/ in three alternating rounds; each prints
 * min/median/max wall time per request and the server's CPU per request from /proc.
 * LISTS_BENCH_REQUESTS overrides the request count, LISTS_BENCH_OTHERS the container and
 * notification count (audit entries: half of it); the seeding time of each is printed.
 */
import { sql } from "kysely";
import { createDatabase, databaseOptionsFromConfig } from "../src/db/database.js";
import { seedAuditEntries } from "./audit.bench.js";
import { type BenchFerry, type BenchModule, cpuSeconds, median, startBenchFerry } from "./lib.js";

const COUNT = Number(process.env.LISTS_BENCH_REQUESTS ?? 1_000_000);
const OTHERS = Number(process.env.LISTS_BENCH_OTHERS ?? 200_000);
const AUDIT_ENTRIES = Math.floor(OTHERS / 2);
const PAGE_SIZE = 10;
const ROUNDS = 3;
const CALLS = 5;
const TS = "2026-01-15T10:00:00.000000Z";

/** One list to time: its path and query, and the count its pages must report. */
interface TimedList {
  name: string;
  path: string;
  query: string;
  total: number;
}

/** Times page 1, 500 and last of each list, in alternating rounds, and prints one row per page. */
async function timePages(ferry: BenchFerry, lists: TimedList[]): Promise<void> {
  const pid = ferry.process.child.pid!;
  const pages = lists.flatMap((l) => {
    const last = Math.ceil(l.total / PAGE_SIZE);
    return [
      { list: l, label: "page 1", page: 1 },
      // page 500 when the list has that many pages (a smaller LISTS_BENCH_* count), else its middle.
      last >= 500
        ? { list: l, label: "page 500", page: 500 }
        : { list: l, label: `page ${Math.ceil(last / 2)}`, page: Math.ceil(last / 2) },
      { list: l, label: `last page (${last})`, page: last },
    ];
  });
  const wall = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const key = (p: (typeof pages)[number]) => `${p.list.name} ${p.label}`;
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of pages) {
      const url = `${ferry.base}${p.list.path}?${p.list.query}page=${p.page}&page_size=${PAGE_SIZE}`;
      const times: number[] = [];
      const cpuBefore = await cpuSeconds(pid);
      for (let i = 0; i < CALLS; i++) {
        const started = performance.now();
        const res = await fetch(url, { headers: ferry.headers });
        const body = (await res.json()) as { count?: number; total_pages?: number; results: unknown[] };
        times.push(performance.now() - started);
        // The log search answers total_pages, and grows by the entries of these very calls.
        const ok =
          body.count === undefined
            ? (body.total_pages ?? 0) >= Math.ceil(p.list.total / PAGE_SIZE)
            : body.count === p.list.total;
        if (res.status !== 200 || !ok || !body.results?.length) {
          throw new Error(
            `${url}: ${res.status} ${JSON.stringify({ ...body, results: body.results?.length })}`,
          );
        }
      }
      const cpuMs = ((await cpuSeconds(pid)) - cpuBefore) * 1000;
      wall.set(key(p), [...(wall.get(key(p)) ?? []), median(times)]);
      cpu.set(key(p), [...(cpu.get(key(p)) ?? []), cpuMs / CALLS]);
    }
  }
  for (const p of pages) {
    const w = [...(wall.get(key(p)) ?? [])].sort((a, b) => a - b);
    const c = median(cpu.get(key(p)) ?? []);
    console.log(
      `GET ${`${p.list.name} ${p.label}`.padEnd(58)} wall ms min/median/max ${w
        .map((v) => v.toFixed(1))
        .join(" / ")}   server CPU ${c.toFixed(1)} ms/request`,
    );
  }
}

/** List pages of 1,000,000 requests and 200,000 containers, notifications (100,000 audit entries). */
export const listsBench: BenchModule = {
  name: "lists",
  async run() {
    const ferry = await startBenchFerry();
    const database = createDatabase(
      databaseOptionsFromConfig({
        DATABASE_URL: ferry.env.DATABASE_URL,
        DATABASE_POOL_SIZE: 2,
        dataDir: ferry.database.dataDir,
      }),
    );
    try {
      const { db } = database;
      const account = await db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", "bench@example.com")
        .executeTakeFirstOrThrow();
      const accountId = account.id;
      const contact = await db
        .insertInto("contacts")
        .values({ account_id: accountId, first_name: "Jane", last_name: "Doe", created: TS, updated: TS })
        .returning("id")
        .executeTakeFirstOrThrow();
      const numbers = (n: number) =>
        database.dialect === "postgres"
          ? sql`SELECT g AS x FROM generate_series(1, ${n}) g`
          : sql`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${n}) SELECT x FROM n`;
      const seeded = async (what: string, seed: () => Promise<void>) => {
        const started = performance.now();
        await seed();
        console.log(`seeded ${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      };
      await seeded(`${COUNT.toLocaleString("en")} requests in one account`, () =>
        db.transaction().execute(async (trx) => {
          await sql`INSERT INTO requests (account_id, identifier, type, message, created, updated)
            SELECT ${accountId}, 'bench-' || s.x, 'pull', 'Please upload your passport.', ${TS}, ${TS}
            FROM (${numbers(COUNT)}) s`.execute(trx);
          await sql`INSERT INTO request_contacts (request_id, contact_id, position)
            SELECT id, ${contact.id}, 0 FROM requests WHERE account_id = ${accountId}`.execute(trx);
        }),
      );
      await seeded(`${OTHERS.toLocaleString("en")} containers`, () =>
        db.transaction().execute(async (trx) => {
          await sql`INSERT INTO requests (account_id, identifier, kind, type, message, created, updated)
            SELECT ${accountId}, 'bench-c-' || s.x, 'container', 'pull', '', ${TS}, ${TS}
            FROM (${numbers(OTHERS)}) s`.execute(trx);
          await sql`INSERT INTO containers (id, account_id, page_type, created, updated)
            SELECT id, account_id, 'p2', ${TS}, ${TS} FROM requests
            WHERE account_id = ${accountId} AND kind = 'container'`.execute(trx);
        }),
      );
      // Each notification of one of the first requests; every third one failed.
      await seeded(`${OTHERS.toLocaleString("en")} notifications`, () =>
        sql`INSERT INTO notifications (account_id, request_id, contact_method_value,
            contact_method_interface_class, status, sent_at, created, updated)
          SELECT ${accountId}, r.id, 'jane@example.com', 'email',
            CASE WHEN r.id % 3 = 0 THEN 'failed' ELSE 'sent' END, ${TS}, ${TS}, ${TS}
          FROM requests r WHERE r.account_id = ${accountId} AND r.kind = 'request'
          ORDER BY r.id LIMIT ${OTHERS}`
          .execute(db)
          .then(() => undefined),
      );
      await seeded(`${AUDIT_ENTRIES.toLocaleString("en")} chained audit entries`, () =>
        seedAuditEntries(database, accountId, AUDIT_ENTRIES),
      );
      if (database.dialect === "sqlite") await sql`ANALYZE`.execute(db);
      else await sql`VACUUM ANALYZE`.execute(db);
      const counted = async (list: string) =>
        Number(
          (
            await db
              .selectFrom("list_counts")
              .select("n")
              .where("account_id", "=", accountId)
              .where("list", "=", list)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const entries = await sql<{ n: number }>`SELECT count(*) AS n FROM audit_entries
        WHERE account_id = ${accountId}`.execute(db);

      await fetch(`${ferry.base}/healthz`).catch(() => undefined);
      await timePages(ferry, [
        { name: "/v1/request/", path: "/v1/request/", query: "", total: COUNT },
        {
          name: "/v1/module_container/container/",
          path: "/v1/module_container/container/",
          query: "",
          total: OTHERS,
        },
        { name: "/v1/notification/", path: "/v1/notification/", query: "", total: OTHERS },
        {
          name: "/v1/notification/?state=failed",
          path: "/v1/notification/",
          query: "state=failed&",
          total: await counted("notifications_failed"),
        },
        {
          name: "/v1/logentry/search/",
          path: "/v1/logentry/search/",
          query: "",
          total: Number(entries.rows[0]!.n),
        },
      ]);
      console.log(
        `(${COUNT.toLocaleString("en")} requests; ${OTHERS.toLocaleString("en")} containers and notifications and ${AUDIT_ENTRIES.toLocaleString("en")} audit entries, fewer than the requests to keep seeding short; page_size ${PAGE_SIZE})`,
      );
    } finally {
      await database.destroy();
      await ferry.stop();
    }
  },
};
