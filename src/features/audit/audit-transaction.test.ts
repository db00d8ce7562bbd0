import { describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { AuditCode, type AuditEvent, AuditWriter } from "./audit.writer.js";

const statements: string[] = [];
const h = useHarness({ app: { onQuery: (sql) => statements.push(sql) } });

describe("audit entries written inside a transaction", () => {
  it("are appended together when it commits, after what committed meanwhile; none when it rolls back", async () => {
    const database = h.t.ferry.database;
    const account = await createTestAccount(h.t);
    const writer = new AuditWriter(database, h.t.clock);
    const event = (name: string): AuditEvent => ({
      accountId: account.accountId,
      code: AuditCode.ENTITY_UPDATED,
      apiKeyId: 7,
      method: "PATCH",
      relatedModel: "probe",
      relationKey: name,
    });
    await writer.write(database.db, event("before"));

    let appendsAtCommit = 0;
    await database.db.transaction().execute(async (trx) => {
      await writer.write(trx, event("in transaction 1"));
      await trx.selectFrom("accounts").select("id").where("id", "=", account.accountId).execute();
      await writer.write(trx, event("in transaction 2"));
      if (database.dialect === "postgres") {
        // The open transaction holds no lock on the account's chain yet: an entry of its own
        // commits meanwhile (it would wait for this transaction's commit, and so never, if the
        // transaction's entries had been appended as they were written). SQLite has one
        // connection, so nothing else can commit while this transaction is open.
        await writer.write(database.db, event("meanwhile"));
      }
      statements.length = 0;
    });
    appendsAtCommit = statements.filter((s) => s.includes('insert into "audit_entries"')).length;

    await expect(
      database.db.transaction().execute(async (trx) => {
        await writer.write(trx, event("rolled back"));
        throw new Error("abandoned");
      }),
    ).rejects.toThrow("abandoned");
    await writer.write(database.db, event("after"));

    const rows = await database.db
      .selectFrom("audit_entries")
      .select(["seq", "relation_key"])
      .where("account_id", "=", account.accountId)
      .where("related_model", "=", "probe")
      .orderBy("seq")
      .execute();
    const order =
      database.dialect === "postgres"
        ? ["before", "meanwhile", "in transaction 1", "in transaction 2", "after"]
        : ["before", "in transaction 1", "in transaction 2", "after"];
    expect(rows.map((r) => r.relation_key)).toEqual(order);
    // The transaction's two entries are consecutive, appended by the commit: one statement on
    // PostgreSQL (the arrays of a batch), one insert each on SQLite.
    const first = rows.findIndex((r) => r.relation_key === "in transaction 1");
    expect(Number(rows[first + 1]?.seq)).toBe(Number(rows[first]?.seq) + 1);
    expect(appendsAtCommit).toBe(database.dialect === "postgres" ? 1 : 2);

    const chain = await h.t.ferry.audit.chain.verifyAccount(account.accountId);
    expect(chain.ok, JSON.stringify(chain.problem)).toBe(true);
    // Every one-filter count comes from the stored ordinals.
    const res = await h.call("GET", "/v1/logentry/search/", undefined, {
      as: account,
      query: { related_model: "probe", page_size: "1" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().total_pages).toBe(order.length);
  });

  it("fail the commit, and leave nothing of the transaction, when they cannot be appended", async () => {
    const database = h.t.ferry.database;
    const account = await createTestAccount(h.t);
    const writer = new AuditWriter(database, h.t.clock);
    const name = `kept-${account.accountId}`;
    await expect(
      database.db.transaction().execute(async (trx) => {
        await trx.updateTable("accounts").set({ name }).where("id", "=", account.accountId).execute();
        // An account that does not exist: its chain head cannot be created (foreign key).
        await writer.write(trx, { accountId: 987_654_321, code: AuditCode.ENTITY_UPDATED });
      }),
    ).rejects.toThrow();
    const row = await database.db
      .selectFrom("accounts")
      .select("name")
      .where("id", "=", account.accountId)
      .executeTakeFirstOrThrow();
    expect(row.name).not.toBe(name);
  });
});
