/**
 * Lists at scale: 1,000,000 requests in one account (bulk inserted by SQL, each with one contact),
 * then page 1, page 500 and the last page of `GET /v1/request/` (page_size 10) against a real
 * `ferry serve`. Three alternating rounds; each prints min/median/max wall time per request and
 * the server's CPU per request from /proc. LISTS_BENCH_REQUESTS overrides the count.
 */
import { sql } from "kysely";
import { createDatabase, databaseOptionsFromConfig } from "../src/db/database.js";
import { type BenchModule, cpuSeconds, median, startBenchFerry } from "./lib.js";

const COUNT = Number(process.env.LISTS_BENCH_REQUESTS ?? 1_000_000);
const PAGE_SIZE = 10;
const ROUNDS = 3;
const CALLS = 5;
const TS = "2026-01-15T10:00:00.000000Z";

/** Request list pages of 1,000,000 requests: page 1, page 500, last page. */
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
      const seedStart = performance.now();
      const numbers =
        database.dialect === "postgres"
          ? sql`SELECT g AS x FROM generate_series(1, ${COUNT}) g`
          : sql`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${COUNT}) SELECT x FROM n`;
      await db.transaction().execute(async (trx) => {
        await sql`INSERT INTO requests (account_id, identifier, type, message, created, updated)
          SELECT ${accountId}, 'bench-' || s.x, 'pull', 'Please upload your passport.', ${TS}, ${TS}
          FROM (${numbers}) s`.execute(trx);
        await sql`INSERT INTO request_contacts (request_id, contact_id, position)
          SELECT id, ${contact.id}, 0 FROM requests WHERE account_id = ${accountId}`.execute(trx);
      });
      if (database.dialect === "sqlite") await sql`ANALYZE`.execute(db);
      else await sql`VACUUM ANALYZE`.execute(db);
      console.log(
        `seeded ${COUNT.toLocaleString("en")} requests in one account: ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
      );

      await fetch(`${ferry.base}/healthz`).catch(() => undefined);
      const last = Math.ceil(COUNT / PAGE_SIZE);
      const pages: [string, number][] = [
        ["page 1", 1],
        ["page 500", 500],
        [`last page (${last})`, last],
      ];
      const pid = ferry.process.child.pid!;
      const wall = new Map<string, number[]>();
      const cpu = new Map<string, number[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const [label, page] of pages) {
          const url = `${ferry.base}/v1/request/?page=${page}&page_size=${PAGE_SIZE}`;
          const times: number[] = [];
          const cpuBefore = await cpuSeconds(pid);
          for (let i = 0; i < CALLS; i++) {
            const started = performance.now();
            const res = await fetch(url, { headers: ferry.headers });
            const body = (await res.json()) as { count: number; results: unknown[] };
            times.push(performance.now() - started);
            if (res.status !== 200 || body.count !== COUNT || body.results.length === 0) {
              throw new Error(`${url}: ${res.status} count ${body.count}`);
            }
          }
          const cpuMs = ((await cpuSeconds(pid)) - cpuBefore) * 1000;
          wall.set(label, [...(wall.get(label) ?? []), median(times)]);
          cpu.set(label, [...(cpu.get(label) ?? []), cpuMs / CALLS]);
        }
      }
      for (const [label] of pages) {
        const w = [...(wall.get(label) ?? [])].sort((a, b) => a - b);
        const c = median(cpu.get(label) ?? []);
        console.log(
          `GET /v1/request/ ${label.padEnd(22)} wall ms min/median/max ${w
            .map((v) => v.toFixed(1))
            .join(" / ")}   server CPU ${c.toFixed(1)} ms/request`,
        );
      }
    } finally {
      await database.destroy();
      await ferry.stop();
    }
  },
};
