/**
 * Dashboard: the owner's request list pages with DASHBOARD_BENCH_ROWS (default 100,000) requests
 * in one account, each with its own contact. A dashboard user is invited with `ferry admin invite`
 * and enrolled over HTTP (password, then TOTP computed from the shown secret); its session cookie
 * signs every load request. For each page (first, filtered, deep): requests/s under load (10
 * connections) as a ratio to the bare route, and the latency of one client at a time (p50, p99)
 * against the 50 ms per page target, then the plans of the list queries.
 */
import autocannon from "autocannon";
import { sql } from "kysely";
import { createDatabase, type Database, databaseOptionsFromConfig } from "../src/db/database.js";
import { totpCodeAt } from "../src/features/dashboard/index.js";
import { searchOwnerRequestsQuery } from "../src/features/requests/requests.repository.js";
import { randomId } from "../src/shared/ids.js";
import { toTimestamp } from "../src/shared/time.js";
import { runFerry } from "../test/helpers/process.js";
import { type BenchModule, benchSeconds, printPlan, report, startBenchFerry } from "./lib.js";

const ROWS = Number(process.env.DASHBOARD_BENCH_ROWS ?? 100_000);
/** The page's size (requests.pages.tsx). */
const PAGE_SIZE = 25;
/** The per-page latency target, in milliseconds. */
const TARGET_MS = 50;

/** Inserts `count` requests for the account, each with its own contact and email method, in batches. */
async function seed(database: Database, accountId: number, count: number): Promise<void> {
  const now = toTimestamp(new Date());
  const batch = 400;
  await database.db.transaction().execute(async (trx) => {
    for (let done = 0; done < count; ) {
      const n = Math.min(batch, count - done);
      const contacts = await trx
        .insertInto("contacts")
        .values(
          Array.from({ length: n }, (_, k) => ({
            account_id: accountId,
            first_name: "Seed",
            last_name: `Contact ${done + k}`,
            created: now,
            updated: now,
          })),
        )
        .returning("id")
        .execute();
      await trx
        .insertInto("contact_methods")
        .values(
          contacts.map((c, k) => ({
            account_id: accountId,
            contact_id: c.id,
            interface_class: "email",
            value: `seed-${done + k}@example.com`,
            created: now,
            updated: now,
          })),
        )
        .execute();
      const rows = [];
      for (let k = 0; k < n; k++) {
        const i = done + k;
        rows.push({
          account_id: accountId,
          identifier: randomId(24),
          type: i % 3 === 0 ? ("push" as const) : ("pull" as const),
          message: `Seeded request ${i}`,
          requester_privatenotes: "",
          is_draft: i % 10 === 0 ? 1 : 0,
          complete: i % 10 === 1 ? 1 : 0,
          is_expired: i % 10 === 2 ? 1 : 0,
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
          sent_at: i % 10 === 0 ? null : now,
          completed_at: i % 10 === 1 ? now : null,
          callback_status: null,
          callback_tries: 0,
          created: now,
          updated: now,
        });
      }
      const ids = await trx.insertInto("requests").values(rows).returning("id").execute();
      await trx
        .insertInto("request_contacts")
        .values(ids.map((r, k) => ({ request_id: r.id, contact_id: contacts[k]!.id, position: 0 })))
        .execute();
      done += n;
    }
  });
}

/** A minimal cookie jar over fetch (no redirects followed). */
class Jar {
  cookies = new Map<string, string>();
  csrf = "";

  header(): Record<string, string> {
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
  }

  async send(url: string, form?: Record<string, string>): Promise<{ status: number; body: string }> {
    const init: RequestInit = { redirect: "manual", headers: this.header() };
    if (form) {
      init.method = "POST";
      init.headers = { ...this.header(), "content-type": "application/x-www-form-urlencoded" };
      init.body = new URLSearchParams({ csrf_token: this.csrf, ...form }).toString();
    }
    const res = await fetch(url, init);
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      if (/Max-Age=0/i.test(line)) this.cookies.delete(pair!.slice(0, eq));
      else this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const body = await res.text();
    const token = /name="csrf_token" value="([^"]+)"/.exec(body);
    if (token) this.csrf = token[1]!;
    return { status: res.status, body };
  }
}

function expect(res: { status: number; body: string }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: ${res.status}: ${res.body.slice(0, 300)}`);
}

/** Invites a dashboard user and enrols it; returns the signed-in session's Cookie header. */
async function signedInCookie(base: string, env: Record<string, string>, accountId: number) {
  const password = "correct horse battery staple";
  const invited = JSON.parse(
    (
      await runFerry(
        ["admin", "invite", "--account", String(accountId), "--email", "owner@example.com", "--json"],
        env,
      )
    ).stdout,
  ) as { setup_url: string };
  const jar = new Jar();
  const setup = `${base}${new URL(invited.setup_url).pathname}`;
  expect(await jar.send(setup), 200, "setup page");
  expect(await jar.send(setup, { password, password_confirm: password }), 303, "set password");
  const enrol = await jar.send(`${base}/dashboard/setup/two-factor`);
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)?.[1];
  if (!secret) throw new Error("no TOTP secret on the enrolment page");
  const done = await jar.send(`${base}/dashboard/setup/two-factor`, { code: totpCodeAt(secret, new Date()) });
  expect(done, 200, "confirm enrolment");
  return jar.header();
}

/** One autocannon run; throws on errors or non-2xx answers. */
async function load(url: string, headers: Record<string, string>, connections: number) {
  const r = await autocannon({ url, headers, connections, duration: benchSeconds });
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

/** The owner's request list pages over a large account. */
export const dashboardBench: BenchModule = {
  name: "dashboard",
  async run(ctx) {
    const ferry = await startBenchFerry();
    const database = createDatabase(
      databaseOptionsFromConfig({
        DATABASE_URL: ferry.env.DATABASE_URL,
        DATABASE_POOL_SIZE: 2,
        dataDir: ferry.database.dataDir,
      }),
    );
    try {
      const account = await database.db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", "bench@example.com")
        .executeTakeFirstOrThrow();
      const seedStart = performance.now();
      await seed(database, account.id, ROWS);
      report(
        `seeded ${ROWS.toLocaleString("en")} requests (a contact each)`,
        (performance.now() - seedStart) / 1000,
        "s",
      );
      if (database.dialect === "sqlite") await sql`ANALYZE`.execute(database.db);
      else await sql`VACUUM ANALYZE`.execute(database.db);
      const headers = await signedInCookie(ferry.base, ferry.env, account.id);

      const deep = Math.max(1, Math.floor(ROWS / PAGE_SIZE / 2));
      const pages: [string, string][] = [
        ["first page", "/dashboard/requests"],
        ["filtered (pull, sent)", "/dashboard/requests?type=pull&state=sent"],
        [`deep page ${deep}`, `/dashboard/requests?page=${deep}`],
      ];
      const bare = { label: "bare route", value: ctx.bareRps };
      const verdicts: string[] = [];
      for (const [label, path] of pages) {
        const url = `${ferry.base}${path}`;
        const check = await fetch(url, { headers });
        const html = await check.text();
        const rows = (html.match(/<tr/g) ?? []).length - 1;
        if (check.status !== 200 || rows < PAGE_SIZE)
          throw new Error(`${path}: ${check.status}, ${rows} rows`);
        const under = await load(url, headers, 10);
        console.log(`GET ${path}`);
        report(`   ${label}, 10 connections`, under.rps, "req/s", bare);
        report("   latency p50 / p99 under load", under.p50, `ms / ${under.p99} ms`);
        const single = await load(url, headers, 1);
        report(`   ${label}, one client`, single.rps, "req/s", bare);
        report("   one client: latency p50 / p99", single.p50, `ms / ${single.p99} ms`);
        const met = single.p50 < TARGET_MS && single.p99 < TARGET_MS;
        verdicts.push(
          `${label}: ${met ? "met" : "NOT met"} (one client p50 ${single.p50} ms, p99 ${single.p99} ms)`,
        );
      }
      console.log(`   target < ${TARGET_MS} ms per page (${database.dialect}):`);
      for (const v of verdicts) console.log(`      ${v}`);

      await printPlan(
        database,
        "first page",
        searchOwnerRequestsQuery(database.db, account.id, {}, { offset: 0, limit: PAGE_SIZE + 1 }).compile(),
      );
      await printPlan(
        database,
        "filtered (pull, sent)",
        searchOwnerRequestsQuery(
          database.db,
          account.id,
          { type: "pull", state: "sent" },
          { offset: 0, limit: PAGE_SIZE + 1 },
        ).compile(),
      );
      await printPlan(
        database,
        `deep page ${deep}`,
        searchOwnerRequestsQuery(
          database.db,
          account.id,
          {},
          { offset: (deep - 1) * PAGE_SIZE, limit: PAGE_SIZE + 1 },
        ).compile(),
      );
    } finally {
      await database.destroy();
      await ferry.stop();
    }
  },
};
