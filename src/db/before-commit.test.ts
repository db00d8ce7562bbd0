import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.js";
import { beforeCommit, createDatabase, type Database, databaseOptionsFromConfig } from "./database.js";

// Hooks registered with beforeCommit run inside the transaction, after its callback, just before
// the commit; a rollback drops them; a failing hook fails the commit.
let testDb: TestDatabase;
let database: Database;
const statements: string[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase({
    ...databaseOptionsFromConfig({
      DATABASE_URL: testDb.url,
      DATABASE_POOL_SIZE: 2,
      dataDir: testDb.dataDir,
    }),
    onQuery: (text) => statements.push(text),
  });
  await sql`create table hook_probe (step integer not null, what text not null)`.execute(database.db);
});
afterAll(async () => {
  await database?.destroy();
  await testDb?.drop();
});

async function probeRows(): Promise<string[]> {
  const rows = await sql<{ what: string }>`select what from hook_probe order by step`.execute(database.db);
  return rows.rows.map((r) => r.what);
}

async function clear(): Promise<void> {
  await sql`delete from hook_probe`.execute(database.db);
}

describe("beforeCommit", () => {
  it("runs the hooks in order after the callback, inside the transaction, before the commit", async () => {
    await clear();
    statements.length = 0;
    const result = await database.db.transaction().execute(async (trx) => {
      await beforeCommit(trx, async () => {
        await sql`insert into hook_probe values (2, 'first hook')`.execute(trx);
      });
      await beforeCommit(trx, async () => {
        await sql`insert into hook_probe values (3, 'second hook')`.execute(trx);
      });
      await sql`insert into hook_probe values (1, 'callback')`.execute(trx);
      return "done";
    });
    expect(result).toBe("done");
    expect(await probeRows()).toEqual(["callback", "first hook", "second hook"]);
    // The registrations are not statements: the log holds the callback's insert, then the hooks', then the commit.
    const inserts = statements.filter((s) => s.startsWith("insert into hook_probe"));
    expect(inserts).toHaveLength(3);
    const commit = statements.findIndex((s) => /^commit$/i.test(s));
    expect(commit).toBeGreaterThan(statements.lastIndexOf(inserts[2] as string));
    expect(statements.some((s) => s.includes("before commit"))).toBe(false);
  });

  it("runs no hook when the transaction rolls back, nor in the next transaction on the connection", async () => {
    await clear();
    let ran = 0;
    await expect(
      database.db.transaction().execute(async (trx) => {
        await beforeCommit(trx, async () => {
          ran++;
        });
        await sql`insert into hook_probe values (1, 'rolled back')`.execute(trx);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(ran).toBe(0);
    // One connection on SQLite, two pooled on PostgreSQL: the next transactions reuse them.
    for (let i = 0; i < 3; i++) {
      await database.db.transaction().execute(async (trx) => {
        await sql`insert into hook_probe values (${i + 2}, ${`later ${i}`})`.execute(trx);
      });
    }
    expect(ran).toBe(0);
    expect(await probeRows()).toEqual(["later 0", "later 1", "later 2"]);
  });

  it("rolls the transaction back and rejects with the hook's error when a hook fails", async () => {
    await clear();
    let later = 0;
    await expect(
      database.db.transaction().execute(async (trx) => {
        await beforeCommit(trx, async () => {
          await sql`insert into hook_probe values (2, 'hook before the failure')`.execute(trx);
          throw new Error("hook failed");
        });
        await beforeCommit(trx, async () => {
          later++;
        });
        await sql`insert into hook_probe values (1, 'callback')`.execute(trx);
      }),
    ).rejects.toThrow("hook failed");
    expect(later).toBe(0);
    expect(await probeRows()).toEqual([]);
    // The connection is usable afterwards, with no hook left on it.
    await database.db.transaction().execute(async (trx) => {
      await sql`insert into hook_probe values (1, 'after')`.execute(trx);
    });
    expect(await probeRows()).toEqual(["after"]);
  });
});
