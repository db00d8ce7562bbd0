import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useHarness } from "../../../test/helpers/harness.js";
import type { Executor } from "../../db/database.js";
import { type AuditFilters, compileSearch } from "./audit.repository.js";
import { AuditCode, type AuditEvent, AuditWriter } from "./audit.writer.js";

const statements: { sql: string; parameters: readonly unknown[] }[] = [];
const h = useHarness({ app: { onQuery: (text, parameters) => statements.push({ sql: text, parameters }) } });

/** The filter indexes that hold only entries with their value set, by the column they filter. */
const PARTIAL = {
  path: "audit_entries_account_path_seq_idx",
  related_model: "audit_entries_account_model_seq_idx",
  from_address: "audit_entries_account_from_seq_idx",
  method: "audit_entries_account_method_seq_idx",
  content_type: "audit_entries_account_ctype_seq_idx",
} as const;
const RELATION = "audit_entries_account_relation_seq_idx";

/** The plan of `query` (PostgreSQL: with sequential scans priced out, so any usable index is taken). */
async function planOf(query: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  const database = h.t.ferry.database;
  if (database.dialect === "sqlite") {
    const res = await database.db.executeQuery(
      CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]),
    );
    return (res.rows as { detail: string }[]).map((r) => r.detail).join("\n");
  }
  return database.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    const res = await trx.executeQuery(CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]));
    return (res.rows as { "QUERY PLAN": string }[]).map((r) => r["QUERY PLAN"]).join("\n");
  });
}

describe("the audit search's filter indexes", () => {
  it("hold only entries with the value set, and every search and append reaches them", async () => {
    const { t, owner } = h;
    const database = t.ferry.database;
    const write = (writer: AuditWriter, event: Omit<AuditEvent, "accountId">) =>
      writer.write(database.db, { accountId: owner.accountId, apiKeyId: owner.applicationId, ...event });
    const shared = t.ferry.audit.writer;
    const apiCall = (method: string, path: string, from: string, contentType?: string) =>
      write(shared, { code: AuditCode.API_CALL, method, path, from, contentType, value: "200" });

    await apiCall("DELETE", "/v1/request/1/", "10.0.0.1");
    await apiCall("POST", "/v1/request/", "10.0.0.2", "application/vnd.probe+json");
    // Written by a job: no path, address, method or content type.
    await write(shared, { code: AuditCode.ENTITY_UPDATED, relatedModel: "request", relationKey: 7 });
    await apiCall("DELETE", "/v1/request/1/", "10.0.0.1");
    const everything = {
      code: AuditCode.ENTITY_UPDATED,
      method: "PATCH",
      path: "/v1/request/7/",
      from: "10.0.0.3",
      contentType: "application/vnd.probe+json",
      relatedModel: "request",
      relationKey: 7,
    };
    // Every value set: each of the entry's ordinals is looked up on its filter's index. Appended
    // after the remembered head, then by a writer that knows no head (the locking path).
    statements.length = 0;
    await write(shared, everything);
    await write(new AuditWriter(database, t.clock), everything);
    const appends = statements.filter((s) => s.sql.includes('insert into "audit_entries"'));
    expect(appends).toHaveLength(2);

    // Each index is partial…
    for (const name of [...Object.values(PARTIAL), RELATION]) {
      const definition =
        database.dialect === "sqlite"
          ? await sql<{ sql: string }>`select sql from sqlite_master where name = ${name}`.execute(
              database.db,
            )
          : await sql<{
              sql: string;
            }>`select indexdef as sql from pg_indexes where indexname = ${name}`.execute(database.db);
      expect(definition.rows[0]?.sql, name).toMatch(/WHERE \(?\(?"?\w+"?\)? <> ''/i);
    }
    // …and each append's ordinal lookups use them.
    for (const append of appends) {
      const plan = await planOf(append);
      for (const name of Object.values(PARTIAL)) expect(plan, plan).toContain(name);
    }

    // Searching by each filter reads its index and finds exactly the entries with that value.
    const ex: Executor = database.db;
    const searches: [AuditFilters, string, number][] = [
      [{ path: "/v1/request/1/" }, PARTIAL.path, 2],
      [{ method: "DELETE" }, PARTIAL.method, 2],
      [{ method: "PATCH" }, PARTIAL.method, 2],
      [{ from_address: "10.0.0.2" }, PARTIAL.from_address, 1],
      [{ content_type: "application/vnd.probe+json" }, PARTIAL.content_type, 3],
      [{ related_model: "request" }, PARTIAL.related_model, 3],
    ];
    const query: Record<keyof AuditFilters, string> = {
      partition_key: "partition_key",
      code: "code",
      related_model: "related_model",
      path: "path",
      from_address: "from",
      method: "method",
      content_type: "content_type",
    };
    for (const [filters, index, count] of searches) {
      const plan = await planOf(compileSearch(ex, { accountId: owner.accountId, filters }, 10, 0));
      expect(plan, JSON.stringify(filters)).toContain(index);
      const [column, value] = Object.entries(filters)[0] as [keyof AuditFilters, string];
      // total_pages of one filter comes from the stored ordinals; page_size 1 makes it the count.
      const res = await h.call("GET", "/v1/logentry/search/", undefined, {
        query: { [query[column]]: value, page_size: "1" },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().total_pages, JSON.stringify(filters)).toBe(count);
      const all = await h.call("GET", "/v1/logentry/search/", undefined, {
        query: { [query[column]]: value },
      });
      const rows = all.json().results as Record<string, string>[];
      expect(rows).toHaveLength(count);
      const field = column === "from_address" ? "from" : column;
      for (const row of rows) expect(row[field], JSON.stringify(row)).toBe(value);
    }

    const relation = { accountId: owner.accountId, filters: { related_model: "request" }, relationKey: "7" };
    expect(await planOf(compileSearch(ex, relation, 10, 0))).toMatch(
      new RegExp(`${RELATION}|${PARTIAL.related_model}`),
    );
    const history = await h.call("GET", "/v1/logentry/search/", undefined, {
      query: { related_model: "request", relation_key: "7" },
    });
    expect(history.json().results.map((r: { method: string }) => r.method)).toEqual(["PATCH", "PATCH", ""]);

    // Two filters: the DELETE calls on one path.
    const both = await h.call("GET", "/v1/logentry/search/", undefined, {
      query: { method: "DELETE", path: "/v1/request/1/" },
    });
    expect(both.json().results).toHaveLength(2);
    expect(both.json().total_pages).toBe(1);

    // An empty filter filters nothing: it does not narrow the search to the entries without a
    // value (the indexes do not hold those), nor to those with one.
    const unfiltered = await h.call("GET", "/v1/logentry/search/", undefined, {
      query: { page_size: "100" },
    });
    for (const empty of ["path", "related_model", "from", "method", "content_type"]) {
      const res = await h.call("GET", "/v1/logentry/search/", undefined, {
        query: { [empty]: "", page_size: "100" },
      });
      expect(res.statusCode, empty).toBe(200);
      const seqs = (res.json().results as { RowKey: string }[]).map((r) => r.RowKey);
      // Each call appends its own AAA-0010 entry, so compare the entries both pages can see.
      const before = (unfiltered.json().results as { RowKey: string }[]).map((r) => r.RowKey);
      expect(seqs.slice(-before.length), empty).toEqual(before);
    }

    const chain = await t.ferry.audit.chain.verifyAccount(owner.accountId);
    expect(chain.ok, JSON.stringify(chain.problem)).toBe(true);
  });
});
