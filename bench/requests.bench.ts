/**
 * Requests: create-request and get-request throughput as ratios to the bare route, then
 * list latency for page 1 and page 500 with REQUESTS_BENCH_ROWS (default 100,000) requests in one
 * account, with the query plans of the list and count queries. REQUESTS_BENCH_ROWS=0 measures only
 * the throughputs; BENCH_REDIS_URL runs the server with that REDIS_URL (cached applications on
 * PostgreSQL: ADR 0036).
 */
import { sql } from "kysely";
import { createDatabase, type Database, databaseOptionsFromConfig } from "../src/db/database.js";
import { countRequestsQuery, listRequestsQuery } from "../src/features/requests/requests.repository.js";
import { randomId } from "../src/shared/ids.js";
import { toTimestamp } from "../src/shared/time.js";
import { type BenchModule, median, printPlan, report, requestsPerSecond, startBenchFerry } from "./lib.js";

const ROWS = Number(process.env.REQUESTS_BENCH_ROWS ?? 100_000);
const RUNS = 15;

const createBody = JSON.stringify({
  type: "pull",
  message: "Please upload last year's tax return.",
  short_message: "Upload please",
  contact: [
    {
      first_name: "Jane",
      last_name: "Doe",
      contactmethod: [
        { interface_class: "email", value: "jane@example.com" },
        { interface_class: "sms", value: "+14155550123" },
      ],
    },
  ],
});

/** Inserts `count` requests for the account, each linked to one shared contact, in batches. */
async function seed(database: Database, accountId: number, count: number): Promise<void> {
  const { db } = database;
  const now = toTimestamp(new Date());
  const contact = await db
    .insertInto("contacts")
    .values({ account_id: accountId, first_name: "Seed", last_name: "Contact", created: now, updated: now })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db
    .insertInto("contact_methods")
    .values({
      account_id: accountId,
      contact_id: contact.id,
      interface_class: "email",
      value: "seed@example.com",
      created: now,
      updated: now,
    })
    .execute();
  const batch = 500;
  await db.transaction().execute(async (trx) => {
    for (let done = 0; done < count; ) {
      const rows = [];
      for (let k = 0; k < batch && done < count; k++, done++) {
        rows.push({
          account_id: accountId,
          identifier: randomId(24),
          type: done % 3 === 0 ? ("push" as const) : ("pull" as const),
          message: `Seeded request ${done}`,
          requester_privatenotes: "",
          is_draft: done % 10 === 0 ? 1 : 0,
          complete: 0,
          is_expired: 0,
          receiver_message: null,
          short_message: "",
          long_message_subject: "",
          long_message: "",
          callback_url: null,
          requester_id: null,
          email_template_slug: null,
          tfa_send_to: null,
          tfa_send_to_value: null,
          tfa_times_sent: 0,
          allowed_extensions: null,
          max_file_bytes: null,
          expires_at: null,
          sent_at: null,
          completed_at: null,
          callback_status: null,
          callback_tries: 0,
          created: now,
          updated: now,
        });
      }
      const ids = await trx.insertInto("requests").values(rows).returning("id").execute();
      await trx
        .insertInto("request_contacts")
        .values(ids.map((r) => ({ request_id: r.id, contact_id: contact.id, position: 0 })))
        .execute();
    }
  });
}

/** Request create/read throughput and list latency over a large account. */
export const requestsBench: BenchModule = {
  name: "requests",
  async run(ctx) {
    const ferry = await startBenchFerry(
      process.env.BENCH_REDIS_URL ? { REDIS_URL: process.env.BENCH_REDIS_URL } : {},
    );
    const database = createDatabase(
      databaseOptionsFromConfig({
        DATABASE_URL: ferry.env.DATABASE_URL,
        DATABASE_POOL_SIZE: 2,
        dataDir: ferry.database.dataDir,
      }),
    );
    try {
      const bare = { label: "bare route", value: ctx.bareRps };
      const jsonHeaders = { ...ferry.headers, "content-type": "application/json" };
      const createRps = await requestsPerSecond(`${ferry.base}/v1/request/`, {
        method: "POST",
        headers: jsonHeaders,
        body: createBody,
      });
      report("POST /v1/request/ (one contact, two methods)", createRps, "req/s", bare);

      const created = (await (
        await fetch(`${ferry.base}/v1/request/`, { method: "POST", headers: jsonHeaders, body: createBody })
      ).json()) as { id: number };
      const getRps = await requestsPerSecond(`${ferry.base}/v1/request/${created.id}/`, {
        headers: ferry.headers,
      });
      report("GET /v1/request/{id}/", getRps, "req/s", bare);

      if (ROWS === 0) return;
      const account = await database.db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", "bench@example.com")
        .executeTakeFirstOrThrow();
      const seedStart = performance.now();
      await seed(database, account.id, ROWS);
      report(`seeded ${ROWS.toLocaleString("en")} requests`, (performance.now() - seedStart) / 1000, "s");
      if (database.dialect === "sqlite") await sql`ANALYZE`.execute(database.db);
      else await sql`VACUUM ANALYZE requests`.execute(database.db);

      for (const page of [1, 500]) {
        const url = `${ferry.base}/v1/request/?page=${page}`;
        const times: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          const res = await fetchRetryingReset(url, ferry.headers);
          const body = (await res.json()) as { results: unknown[] };
          times.push(performance.now() - started);
          if (res.status !== 200 || body.results.length !== 10) throw new Error(`${url}: ${res.status}`);
        }
        report(`GET /v1/request/?page=${page} (median of ${RUNS}, HTTP)`, median(times), "ms");
      }
      await printPlan(
        database,
        "list page 500",
        listRequestsQuery(database.db, account.id, { offset: 4990, limit: 10 }).compile(),
      );
      await printPlan(database, "count", countRequestsQuery(database.db, account.id).compile());
      await printPlan(
        database,
        "counter (sent only)",
        countRequestsQuery(database.db, account.id, true).compile(),
      );
    } finally {
      await database.destroy();
      await ferry.stop();
    }
  },
};

/**
 * GET `url`; sent again once if the connection was reset. After seeding (which can outlast the
 * server's 10 s keep-alive timeout on a busy machine) the pooled socket may be closed by the
 * server just as the request goes out.
 */
async function fetchRetryingReset(url: string, headers: Record<string, string>): Promise<Response> {
  try {
    return await fetch(url, { headers });
  } catch {
    return fetch(url, { headers });
  }
}
