/**
 * Child process for the SQLite checkpoint tests: opens the database at argv[2] as the server does,
 * commits argv[3] transactions of one row each into table `t`, prints each committed number, then
 * dies with SIGKILL (no clean close, no final checkpoint).
 */
import { sql } from "kysely";
import { createDatabase } from "../../src/db/database.js";

const database = createDatabase({ sqlitePath: process.argv[2]!, checkpointEveryMs: 20 });
const count = Number(process.argv[3]);
await sql`create table if not exists t (n integer primary key, pad text)`.execute(database.db);
for (let n = 1; n <= count; n++) {
  await database.db.transaction().execute(async (trx) => {
    await sql`insert into t (n, pad) values (${n}, ${"x".repeat(2000)})`.execute(trx);
  });
  process.stdout.write(`${n}\n`);
  // Let the checkpointer run between some of them.
  if (n % 50 === 0) await new Promise((r) => setTimeout(r, 25));
}
process.kill(process.pid, "SIGKILL");
