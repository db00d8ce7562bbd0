import { type Kysely, sql } from "kysely";
import { isPostgres } from "./portable.js";

/**
 * More lists kept in `list_counts` (ADR 0070): an account's containers, its notifications, and its
 * notifications per delivery state (`notifications_queued`, `_sent`, `_failed`: the list's `state`
 * filter). Same triggers as migration 0036 (per row on SQLite, per statement over transition tables
 * on PostgreSQL), filled from the rows present. Also indexes notifications by (account_id, status,
 * id) so a page of one state reads its ids from one index range.
 * Frozen with the migrations: the reconcile command keeps its own copy of the definitions.
 */
interface CountedList {
  list: string;
  table: string;
  /** SQL condition over the row `R` (replaced by NEW or OLD): the row belongs to the list. */
  where: string;
}

const LISTS: CountedList[] = [
  { list: "containers", table: "containers", where: "1 = 1" },
  { list: "notifications", table: "notifications", where: "1 = 1" },
  { list: "notifications_queued", table: "notifications", where: "R.status = 'queued'" },
  { list: "notifications_sent", table: "notifications", where: "R.status = 'sent'" },
  { list: "notifications_failed", table: "notifications", where: "R.status = 'failed'" },
];

/** Columns whose change can move a row between lists (or accounts). */
const MOVING_COLUMNS: Record<string, string[]> = {
  containers: ["account_id"],
  notifications: ["account_id", "status"],
};

function bump(l: CountedList, row: "NEW" | "OLD", delta: 1 | -1): string {
  return (
    `INSERT INTO list_counts (account_id, list, n) SELECT ${row}.account_id, '${l.list}', ${delta} ` +
    `WHERE ${l.where.replaceAll("R.", `${row}.`)} ` +
    "ON CONFLICT (account_id, list) DO UPDATE SET n = list_counts.n + excluded.n;"
  );
}

async function createPostgresTriggers(db: Kysely<any>, table: string, lists: CountedList[]): Promise<void> {
  const delta = (l: CountedList, from: string, sign: 1 | -1) =>
    `SELECT R.account_id, ${sign} AS d FROM ${from} R WHERE ${l.where}`;
  const upsert = (l: CountedList, parts: string[]) =>
    `INSERT INTO list_counts (account_id, list, n) SELECT account_id, '${l.list}', sum(d) FROM (${parts.join(
      " UNION ALL ",
    )}) x GROUP BY account_id HAVING sum(d) <> 0 ` +
    "ON CONFLICT (account_id, list) DO UPDATE SET n = list_counts.n + excluded.n;";
  const ops: [string, string, string, (l: CountedList) => string[]][] = [
    ["ins", "INSERT", "NEW TABLE AS new_rows", (l) => [delta(l, "new_rows", 1)]],
    ["del", "DELETE", "OLD TABLE AS old_rows", (l) => [delta(l, "old_rows", -1)]],
    [
      "upd",
      "UPDATE",
      "OLD TABLE AS old_rows NEW TABLE AS new_rows",
      (l) => [delta(l, "new_rows", 1), delta(l, "old_rows", -1)],
    ],
  ];
  for (const [suffix, op, referencing, parts] of ops) {
    await sql
      .raw(
        `CREATE FUNCTION ${table}_list_counts_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  ${lists.map((l) => upsert(l, parts(l))).join("\n  ")}
  RETURN NULL;
END $$`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER ${table}_list_counts_${suffix} AFTER ${op} ON ${table} REFERENCING ${referencing} ` +
          `FOR EACH STATEMENT EXECUTE FUNCTION ${table}_list_counts_${suffix}()`,
      )
      .execute(db);
  }
}

async function createSqliteTriggers(db: Kysely<any>, table: string, lists: CountedList[]): Promise<void> {
  const body = (parts: string[]) => `BEGIN ${parts.join(" ")} END`;
  const cols = MOVING_COLUMNS[table]!.join(", ");
  await sql
    .raw(
      `CREATE TRIGGER ${table}_list_counts_ins AFTER INSERT ON ${table} FOR EACH ROW ${body(lists.map((l) => bump(l, "NEW", 1)))}`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${table}_list_counts_del AFTER DELETE ON ${table} FOR EACH ROW ${body(lists.map((l) => bump(l, "OLD", -1)))}`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${table}_list_counts_upd AFTER UPDATE OF ${cols} ON ${table} FOR EACH ROW ${body([
        ...lists.map((l) => bump(l, "OLD", -1)),
        ...lists.map((l) => bump(l, "NEW", 1)),
      ])}`,
    )
    .execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  for (const table of Object.keys(MOVING_COLUMNS)) {
    const lists = LISTS.filter((l) => l.table === table);
    if (pg) await createPostgresTriggers(db, table, lists);
    else await createSqliteTriggers(db, table, lists);
  }
  for (const l of LISTS) {
    await sql
      .raw(
        `INSERT INTO list_counts (account_id, list, n) SELECT R.account_id, '${l.list}', count(*) ` +
          `FROM ${l.table} R WHERE ${l.where} GROUP BY R.account_id`,
      )
      .execute(db);
  }
  await db.schema
    .createIndex("notifications_account_status_idx")
    .on("notifications")
    .columns(["account_id", "status", "id"])
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema.dropIndex("notifications_account_status_idx").ifExists().execute();
  for (const table of Object.keys(MOVING_COLUMNS)) {
    for (const op of ["ins", "del", "upd"]) {
      if (pg) {
        await sql.raw(`DROP TRIGGER IF EXISTS ${table}_list_counts_${op} ON ${table}`).execute(db);
        await sql.raw(`DROP FUNCTION IF EXISTS ${table}_list_counts_${op}()`).execute(db);
      } else {
        await sql.raw(`DROP TRIGGER IF EXISTS ${table}_list_counts_${op}`).execute(db);
      }
    }
  }
  const lists = LISTS.map((l) => `'${l.list}'`).join(", ");
  await sql.raw(`DELETE FROM list_counts WHERE list IN (${lists})`).execute(db);
}
