import { beforeAll, describe, expect, it } from "vitest";
import { createTestAccount, renewToken, type TestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { AuditCode, type AuditEvent, AuditWriter } from "./audit.writer.js";

const DAY = 24 * 3600 * 1000;
const CODES = [AuditCode.ENTITY_CREATED, AuditCode.ENTITY_DELETED, AuditCode.ENTITY_UPDATED];

/** Filter query parameter → the event field it matches (values no search call writes). */
const FILTERS: [string, (e: AuditEvent) => string][] = [
  ["code", (e) => e.code],
  ["path", (e) => e.path ?? ""],
  ["related_model", (e) => e.relatedModel ?? ""],
  ["from", (e) => e.from ?? ""],
  ["method", (e) => e.method ?? ""],
  ["content_type", (e) => e.contentType ?? ""],
];

describe("audit writer: chain and search counts under mixed writers", () => {
  const h = useHarness({ env: { AUDIT_RETENTION_DAYS: "30" } });
  let reader: TestAccount;
  /** Entries of the reader's account that committed, with the day partition each went to. */
  const written: { event: AuditEvent; partition: string }[] = [];
  let n = 0;
  let firstDay = "";

  const eventFor = (accountId: number): AuditEvent => {
    const i = n++;
    return {
      accountId,
      code: CODES[i % 3] ?? AuditCode.ENTITY_CREATED,
      path: `/v1/x/${i % 4}/`,
      relatedModel: i % 2 ? "contact" : "request",
      method: i % 2 ? "PUT" : "PATCH",
      from: `198.51.100.${i % 5}`,
      contentType: i % 2 ? "text/csv" : "text/xml",
      relationKey: i,
    };
  };
  const partition = () =>
    `${reader.accountId}-${h.t.clock.now().toISOString().slice(0, 10).replaceAll("-", "")}`;

  const search = (query: Record<string, string>) =>
    h.call("GET", "/v1/logentry/search/", undefined, { as: reader, query });

  /** Every filter value's expected count among `entries`, searched with page_size 1 (total_pages = count). */
  const expectExactCounts = async (entries: typeof written) => {
    const queries: [Record<string, string>, number][] = [];
    for (const [param, field] of FILTERS) {
      const counts = new Map<string, number>();
      for (const { event } of entries) counts.set(field(event), (counts.get(field(event)) ?? 0) + 1);
      for (const [value, count] of counts) queries.push([{ [param]: value }, count]);
    }
    for (const p of new Set(entries.map((e) => e.partition))) {
      // Day 1 also holds the AAA-0001 of the reader's first token.
      const token = p === firstDay ? 1 : 0;
      queries.push([{ PartitionKey: p }, entries.filter((e) => e.partition === p).length + token]);
    }
    // Two filters: counted by rows.
    queries.push([
      { code: AuditCode.ENTITY_CREATED, method: "PATCH" },
      entries.filter((e) => e.event.code === AuditCode.ENTITY_CREATED && e.event.method === "PATCH").length,
    ]);
    for (const [query, count] of queries) {
      const res = await search({ ...query, page_size: "1" });
      expect(res.statusCode, JSON.stringify(query)).toBe(200);
      expect(res.json().total_pages, JSON.stringify(query)).toBe(count);
      // The last page answers; the one after it (no rows at that offset) is 404.
      const last = await search({ ...query, page_size: "1", page: String(count) });
      expect(last.statusCode, JSON.stringify(query)).toBe(200);
      expect(last.json().next_marker).toBeNull();
      const past = await search({ ...query, page_size: "1", page: String(count + 1) });
      expect(past.statusCode, JSON.stringify(query)).toBe(404);
      // From a marker, pages are counted from there.
      const page = (await search({ ...query, page_size: "3" })).json();
      if (count > 3) {
        const rest = await search({ ...query, page_size: "1", marker: JSON.stringify(page.next_marker) });
        expect(rest.json().total_pages, JSON.stringify(query)).toBe(count - 3);
        const second = await search({
          ...query,
          page_size: "1",
          page: "2",
          marker: JSON.stringify(page.next_marker),
        });
        expect(second.json().total_pages, JSON.stringify(query)).toBe(count - 3);
      }
    }
  };

  beforeAll(async () => {
    reader = h.owner;
    firstDay = partition();
  });

  it("keeps one chain and exact one-filter counts across processes, transactions, rollbacks and retention", async () => {
    const { db } = h.t.ferry.database;
    const here = h.t.ferry.audit.writer;
    // A second writer on the same database stands for another process (worker, another replica).
    const elsewhere = new AuditWriter(h.t.ferry.database, h.t.clock);
    const write = async (writer: AuditWriter) => {
      const event = eventFor(reader.accountId);
      await writer.write(db, event);
      written.push({ event, partition: partition() });
    };

    // Day 1: entries that retention will delete later.
    for (let i = 0; i < 12; i++) await write(i % 4 === 3 ? elsewhere : here);

    h.t.clock.advance(31 * DAY);
    // Day 32: sequential writers of both processes, interleaved.
    for (let i = 0; i < 20; i++) await write(i % 3 === 0 ? elsewhere : here);
    // Entries in the transaction of a change, two per transaction.
    for (let i = 0; i < 3; i++) {
      const events = [eventFor(reader.accountId), eventFor(reader.accountId)];
      await db.transaction().execute(async (trx) => {
        for (const event of events) await here.write(trx, event);
      });
      for (const event of events) written.push({ event, partition: partition() });
    }
    // A transaction that rolls back leaves no entry (and the writer's idea of the head is stale).
    await expect(
      db.transaction().execute(async (trx) => {
        await here.write(trx, eventFor(reader.accountId));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    // Concurrent standalone writers of both processes.
    await Promise.all(Array.from({ length: 30 }, (_, i) => write(i % 2 ? elsewhere : here)));
    await write(here);

    const chain = await h.t.ferry.audit.chain.verifyAccount(reader.accountId);
    expect(chain.ok, JSON.stringify(chain.problem)).toBe(true);

    // Search on the next day: this test's searches (AAA-0010, AAA-0001) land in another partition.
    h.t.clock.advance(DAY);
    await renewToken(h.t, reader);
    await expectExactCounts(written);

    // Retention deletes day 1: counts start after the deleted entries.
    const pruned = await h.t.ferry.audit.retention.prune();
    expect(pruned.deleted).toBeGreaterThanOrEqual(12);
    await expectExactCounts(written.slice(12));
    const after = await h.t.ferry.audit.chain.verifyAccount(reader.accountId);
    expect(after.ok, JSON.stringify(after.problem)).toBe(true);
  });

  it("group-commits concurrent entries of several accounts, some with stale heads, into exact chains", async () => {
    const { db } = h.t.ferry.database;
    const here = h.t.ferry.audit.writer;
    const elsewhere = new AuditWriter(h.t.ferry.database, h.t.clock);
    const accounts = [h.owner, await createTestAccount(h.t), await createTestAccount(h.t)];
    const count = async (accountId: number, path: string) =>
      Number(
        (
          await db
            .selectFrom("audit_entries")
            .select((eb) => eb.fn.countAll().as("n"))
            .where("account_id", "=", accountId)
            .where("path", "=", path)
            .executeTakeFirstOrThrow()
        ).n,
      );
    for (let round = 0; round < 3; round++) {
      // Each writer's heads go stale in turn: the other wrote to the same accounts in between.
      const writes = [];
      for (let i = 0; i < 24; i++) {
        const account = accounts[i % accounts.length]!;
        const writer = (i + round) % 4 === 0 ? elsewhere : here;
        writes.push(
          writer.write(db, {
            accountId: account.accountId,
            code: AuditCode.API_CALL,
            method: "GET",
            path: `/v1/batch/${round}/`,
            from: "203.0.113.7",
          }),
        );
      }
      await Promise.all(writes);
    }
    for (const account of accounts) {
      const chain = await h.t.ferry.audit.chain.verifyAccount(account.accountId);
      expect(chain.ok, JSON.stringify(chain.problem)).toBe(true);
      for (let round = 0; round < 3; round++) {
        expect(await count(account.accountId, `/v1/batch/${round}/`)).toBe(8);
        // The one-filter count comes from the stored ordinals: it must agree with the rows.
        const res = await h.call("GET", "/v1/logentry/search/", undefined, {
          as: account,
          query: { path: `/v1/batch/${round}/`, page_size: "1" },
        });
        expect(res.json().total_pages).toBe(8);
      }
    }
  });
});
