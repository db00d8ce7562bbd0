/**
 * Audit log: filtered log search with 1,000,000 entries in one account. Times the first
 * page and a page reached by marker, filtered by code and by path (HTTP round trip to a real
 * `ferry serve`), prints the query plans, and times audit writes and `ferry audit verify`.
 * AUDIT_BENCH_ENTRIES overrides the entry count; AUDIT_BENCH_ONLY=several times only the searches
 * with two or more filters (and skips the single-filter plans and `ferry audit verify`);
 * AUDIT_BENCH_ROUNDS repeats the timings over the same entries.
 */
import { sql } from "kysely";
import { createDatabase, type Database, databaseOptionsFromConfig } from "../src/db/database.js";
import {
  type AuditFilters,
  compileFindOrdinal,
  compileSample,
  compileSearch,
  countEntries,
  ORDINAL_COLUMNS,
  type OrdinalColumn,
} from "../src/features/audit/audit.repository.js";
import { AuditService } from "../src/features/audit/audit.service.js";
import {
  type ChainedFields,
  chainHash,
  etagForHash,
  partitionKeyFor,
  rowKeyForSeq,
} from "../src/features/audit/audit.writer.js";
import { toTimestamp } from "../src/shared/time.js";
import { runFerry } from "../test/helpers/process.js";
import { type BenchModule, median, printPlan, report, startBenchFerry } from "./lib.js";

const ENTRIES = Number(process.env.AUDIT_BENCH_ENTRIES ?? 1_000_000);
const RUNS = 15;
const ONLY_SEVERAL = process.env.AUDIT_BENCH_ONLY === "several";
/** AUDIT_BENCH_ROUNDS: how many times the searches are timed over the same entries (default 1). */
const ROUNDS = Number(process.env.AUDIT_BENCH_ROUNDS ?? 1);

/** Code mix of a busy account: mostly API calls. */
const CODES: [string, number][] = [
  ["AAA-0010", 0.7],
  ["ABA-0010", 0.08],
  ["ABA-0030", 0.08],
  ["ABB-0010", 0.05],
  ["ABA-0020", 0.03],
  ["AAA-0001", 0.02],
  ["ABC-0010", 0.02],
  ["ABD-0010", 0.01],
  ["AAA-0011", 0.005],
  ["ABB-0020", 0.005],
];

function pick(i: number): string {
  // Deterministic spread: position in [0,1) from a multiplicative hash of i.
  const x = ((i * 2654435761) % 4294967296) / 4294967296;
  let acc = 0;
  for (const [code, share] of CODES) {
    acc += share;
    if (x < acc) return code;
  }
  return "AAA-0010";
}

const PATHS = ["/v1/request/", "/v1/media/", "/v1/contact/", "/v1/requester/", "/v1/logentry/search/"];
const MODELS = ["request", "media", "contact", "requester"];
const METHODS = ["GET", "POST", "PATCH", "DELETE"];

/** Inserts `count` chained entries for `accountId` after its current head, in batches. */
export async function seedAuditEntries(database: Database, accountId: number, count: number): Promise<void> {
  const { db } = database;
  const head = await db
    .selectFrom("audit_chain_heads")
    .select(["seq", "hash"])
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  let seq = Number(head.seq);
  let prev = head.hash;
  // Ordinals continue from the entries already there (as the writer numbers them).
  const ordinals = new Map<string, number>();
  for (const [column, ordinal] of Object.entries(ORDINAL_COLUMNS) as [keyof AuditFilters, OrdinalColumn][]) {
    const rows = await db
      .selectFrom("audit_entries")
      .select([column, (eb) => eb.fn.max(ordinal).as("n")])
      .where("account_id", "=", accountId)
      .groupBy(column)
      .execute();
    for (const r of rows) ordinals.set(`${column}\n${r[column]}`, Number(r.n));
  }
  const next = (column: keyof AuditFilters, value: string) => {
    if (value === "") return 0;
    const key = `${column}\n${value}`;
    const n = (ordinals.get(key) ?? 0) + 1;
    ordinals.set(key, n);
    return n;
  };
  const start = Date.parse("2025-10-01T00:00:00Z");
  const step = (100 * 86_400_000) / count; // spread over 100 days
  const batch = database.dialect === "sqlite" ? 1000 : 2000;
  await db.transaction().execute(async (trx) => {
    for (let done = 0; done < count; ) {
      const rows = [];
      for (let k = 0; k < batch && done < count; k++, done++) {
        seq++;
        const code = pick(seq);
        const timestamp = toTimestamp(new Date(start + Math.floor(done * step)));
        const entity = (seq % 50_000) + 1;
        const path =
          code === "AAA-0010"
            ? seq % 3 === 0
              ? (PATHS[seq % PATHS.length] ?? "")
              : `/v1/request/${entity}/`
            : code.startsWith("ABA")
              ? "/v1/request/"
              : "";
        const fields: ChainedFields = {
          seq,
          partition_key: partitionKeyFor(accountId, timestamp),
          row_key: rowKeyForSeq(seq),
          timestamp,
          code,
          api_key_id: "1",
          related_model: code.startsWith("AB") ? (MODELS[seq % MODELS.length] ?? "") : "",
          relation_key: code.startsWith("AB") ? String(entity) : "",
          value: code === "AAA-0010" ? "200" : "",
          from_address: `203.0.113.${seq % 200}`,
          method: path ? (METHODS[seq % METHODS.length] ?? "") : "",
          path,
          data: "",
          content_type: path ? "application/json" : "",
        };
        const hash = chainHash(prev, fields);
        rows.push({
          ...fields,
          account_id: accountId,
          etag: etagForHash(hash),
          prev_hash: prev,
          hash,
          partition_key_ord: next("partition_key", fields.partition_key),
          code_ord: next("code", fields.code),
          related_model_ord: next("related_model", fields.related_model),
          path_ord: next("path", fields.path),
          from_address_ord: next("from_address", fields.from_address),
          method_ord: next("method", fields.method),
          content_type_ord: next("content_type", fields.content_type),
        });
        prev = hash;
      }
      await trx.insertInto("audit_entries").values(rows).execute();
    }
    await trx
      .updateTable("audit_chain_heads")
      .set({ seq, hash: prev })
      .where("account_id", "=", accountId)
      .execute();
  });
}

/** Filtered log search with 1,000,000 entries; write and verify costs. */
export const auditBench: BenchModule = {
  name: "audit",
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
      const account = await database.db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", "bench@example.com")
        .executeTakeFirstOrThrow();
      const accountId = account.id;

      const seedStart = performance.now();
      await seedAuditEntries(database, accountId, ENTRIES);
      report(
        `seeded ${ENTRIES.toLocaleString("en")} chained entries (bulk insert, 8 indexes)`,
        (performance.now() - seedStart) / 1000,
        "s",
      );
      if (database.dialect === "sqlite") await sql`ANALYZE`.execute(database.db);
      else await sql`VACUUM ANALYZE audit_entries`.execute(database.db);

      // The synchronous SQLite seeding blocked this event loop past the server's keep-alive
      // timeout: the pooled socket is dead, so spend one request to drop it.
      await fetch(`${ferry.base}/healthz`).catch(() => undefined);
      const get = async (query: Record<string, string>) => {
        const url = `${ferry.base}/v1/logentry/search/?${new URLSearchParams(query)}`;
        const started = performance.now();
        const res = await fetch(url, { headers: ferry.headers });
        const body = (await res.json()) as {
          next_marker: { nextpartitionkey: string; nextrowkey: string } | null;
          results: unknown[];
          total_pages: number;
        };
        const ms = performance.now() - started;
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
        return { ms, body };
      };
      const time = async (label: string, query: Record<string, string>) => {
        const times: number[] = [];
        let last: Awaited<ReturnType<typeof get>> | undefined;
        for (let i = 0; i < RUNS; i++) {
          last = await get(query);
          times.push(last.ms);
        }
        report(`${label} (median of ${RUNS}, HTTP)`, median(times), "ms");
        return last?.body;
      };

      // The same searches in this process (service + database, no HTTP, no AAA-0010 write).
      const service = new AuditService(database);
      const direct = async (label: string, query: Record<string, string>) => {
        const times: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          await service.search(accountId, query);
          times.push(performance.now() - started);
        }
        report(`${label} (median of ${RUNS}, in-process)`, median(times), "ms");
      };

      const markerAfter = async (query: Record<string, string>, hops: number) => {
        let marker: string | undefined;
        for (let i = 0; i < hops; i++) {
          const { body } = await get(marker ? { ...query, marker } : query);
          if (!body.next_marker) break;
          marker = JSON.stringify(body.next_marker);
        }
        return marker;
      };

      const cases: [string, Record<string, string>][] = [
        ["code=ABA-0010 (8%)", { code: "ABA-0010" }],
        ["path=/v1/request/ (common)", { path: "/v1/request/" }],
        ["path=/v1/request/123/ (rare)", { path: "/v1/request/123/" }],
        ["code=AAA-0010 (70%, worst case for a count)", { code: "AAA-0010" }],
        ["code=AAA-0010&method=GET (two broad filters)", { code: "AAA-0010", method: "GET" }],
        ["path=/v1/request/&method=POST (two broad filters)", { path: "/v1/request/", method: "POST" }],
        ["code=ABA-0010&related_model=request (two filters)", { code: "ABA-0010", related_model: "request" }],
        [
          "code=AAA-0010&method=GET&content_type=application/json (three filters)",
          { code: "AAA-0010", method: "GET", content_type: "application/json" },
        ],
        ["no filter", {}],
      ];
      for (let round = 1; round <= ROUNDS; round++) {
        if (ROUNDS > 1) console.log(`round ${round} of ${ROUNDS}`);
        for (const [label, query] of cases) {
          if (ONLY_SEVERAL && Object.keys(query).length < 2) continue;
          await time(`search ${label}: first page`, query);
          await direct(`search ${label}: first page`, query);
          const marker = await markerAfter(query, 10);
          if (marker) await time(`search ${label}: page after 10 markers`, { ...query, marker });
          const deep = JSON.stringify({
            nextpartitionkey: `${accountId}-20251110`,
            nextrowkey: rowKeyForSeq(Math.floor(ENTRIES / 2)),
          });
          await time(`search ${label}: page from a marker halfway`, { ...query, marker: deep });
          await direct(`search ${label}: page from a marker halfway`, { ...query, marker: deep });
        }
        // The count several filters used to take (a COUNT over one filter's range), same data.
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          await countEntries(database.db, { accountId, filters: { code: "AAA-0010", method: "GET" } });
          times.push(performance.now() - started);
        }
        report("previous exact COUNT(*) of code=AAA-0010&method=GET (median of 5)", median(times), "ms");
        // On SQLite that count blocked this event loop past the keep-alive timeout: drop the socket.
        await fetch(`${ferry.base}/healthz`).catch(() => undefined);
      }

      const filters: [string, Record<string, string>][] = ONLY_SEVERAL
        ? []
        : [
            ["code", { code: "ABA-0010" }],
            ["path", { path: "/v1/request/" }],
          ];
      for (const [label, f] of filters) {
        const scope = {
          accountId,
          filters: label === "code" ? { code: f.code } : { path: f.path },
          maxSeq: Math.floor(ENTRIES / 2),
        };
        const first = { ...scope, maxSeq: undefined };
        const ordinal = ORDINAL_COLUMNS[label === "code" ? "code" : "path"];
        await printPlan(database, `${label} first page`, compileSearch(database.db, first, 101, 0));
        await printPlan(database, `${label} page, with marker`, compileSearch(database.db, scope, 101, 0));
        await printPlan(
          database,
          `${label} count: oldest ordinal (the newest comes with the page)`,
          compileFindOrdinal(database.db, scope, ordinal, "oldest"),
        );
        await printPlan(
          database,
          `${label} count: newest ordinal, for a page past the end`,
          compileFindOrdinal(database.db, scope, ordinal, "newest"),
        );
      }
      {
        const scope = { accountId, filters: { code: "AAA-0010", method: "GET" } };
        await printPlan(
          database,
          "two filters: sample of the narrowest filter (method), other filters checked per row",
          compileSample(database.db, scope, "method", 10_001),
        );
      }
      if (ONLY_SEVERAL) return;

      const verifyStart = performance.now();
      const verify = await runFerry(["audit", "verify", "--account", String(accountId), "--json"], ferry.env);
      const verifyReport = JSON.parse(verify.stdout) as { ok: boolean };
      report(
        `ferry audit verify of ${ENTRIES.toLocaleString("en")} entries (ok=${verifyReport.ok})`,
        (performance.now() - verifyStart) / 1000,
        "s",
      );
    } finally {
      await database.destroy();
      await ferry.stop();
    }
  },
};
