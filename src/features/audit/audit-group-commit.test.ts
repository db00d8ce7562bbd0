import { describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { AuditCode, type AuditEvent, AuditWriter } from "./audit.writer.js";

// Every statement run through the query builder (SQLite's begin/commit included).
const statements: string[] = [];
const h = useHarness({ app: { onQuery: (sql) => statements.push(sql) } });

/** A value with every character a PostgreSQL array literal or a CSV-ish encoding could trip on. */
const AWKWARD = "a,\"b\"\\c{d} NULL\t'e' é 🙂";

describe("audit group commit: concurrent standalone entries of one account", () => {
  it("share one commit, keep one exact chain, and store exact ordinals and values", async () => {
    const database = h.t.ferry.database;
    const account = await createTestAccount(h.t);
    const writer = new AuditWriter(database, h.t.clock);
    const event = (i: number): AuditEvent => ({
      accountId: account.accountId,
      // Codes and methods the searches below do not write themselves (AAA-0010, GET).
      code: i % 3 === 0 ? AuditCode.ENTITY_DELETED : AuditCode.ENTITY_UPDATED,
      method: i % 2 ? "PATCH" : "PUT",
      path: `/v1/group/${i % 4}/`,
      from: `198.51.100.${i % 5}`,
      contentType: i % 2 ? "" : "text/csv",
      relatedModel: i % 3 === 0 ? "" : "request",
      relationKey: i,
      value: i === 7 ? AWKWARD : String(i),
    });
    // The writer learns the head with a first entry of its own.
    await writer.write(database.db, event(0));
    statements.length = 0;

    const events = Array.from({ length: 40 }, (_, i) => event(i + 1));
    await Promise.all(events.map((e) => writer.write(database.db, e)));

    const commits = statements.filter((s) => /^commit\b/i.test(s)).length;
    if (database.dialect === "postgres") {
      // The first entry goes at once; the 39 that arrive while it runs go in one statement, each
      // committed on its own (no transaction).
      expect(statements.filter((s) => s.includes('insert into "audit_entries"'))).toHaveLength(2);
      expect(commits).toBe(0);
    } else {
      // All 40 arrived in one turn of the event loop: one transaction.
      expect(commits).toBe(1);
    }

    const chain = await h.t.ferry.audit.chain.verifyAccount(account.accountId);
    expect(chain.ok, JSON.stringify(chain.problem)).toBe(true);

    // Stored in order, each with its own fields.
    const rows = await database.db
      .selectFrom("audit_entries")
      .select(["seq", "relation_key", "value", "content_type", "related_model"])
      .where("account_id", "=", account.accountId)
      .where("path", "like", "/v1/group/%")
      .orderBy("seq")
      .execute();
    expect(rows.map((r) => r.relation_key)).toEqual(Array.from({ length: 41 }, (_, i) => String(i)));
    expect(rows[7]?.value).toBe(AWKWARD);
    expect(rows[2]?.content_type).toBe("text/csv");
    expect(rows[3]?.related_model).toBe("");

    // Every one-filter count comes from the stored ordinals: each must agree with the rows.
    const all = [event(0), ...events];
    const filters: [string, (e: AuditEvent) => string][] = [
      ["code", (e) => e.code],
      ["method", (e) => e.method ?? ""],
      ["path", (e) => e.path ?? ""],
      ["from", (e) => e.from ?? ""],
      ["content_type", (e) => e.contentType ?? ""],
      ["related_model", (e) => e.relatedModel ?? ""],
    ];
    for (const [param, field] of filters) {
      const counts = new Map<string, number>();
      for (const e of all) if (field(e)) counts.set(field(e), (counts.get(field(e)) ?? 0) + 1);
      for (const [value, count] of counts) {
        const res = await h.call("GET", "/v1/logentry/search/", undefined, {
          as: account,
          query: { [param]: value, page_size: "1" },
        });
        expect(res.statusCode).toBe(200);
        expect(res.json().total_pages, `${param}=${value}`).toBe(count);
      }
    }
  });
});
