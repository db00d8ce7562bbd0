import { type Kysely, sql } from "kysely";
import { isPostgres } from "./portable.js";

/**
 * List counts kept per account (ADR 0070): `list_counts` holds, for each account and each list a
 * list response counts (`requests`, `requests_sent`, `contacts`, `media`), the number of rows in
 * it. Triggers on the listed tables (per row on SQLite, per statement over transition tables on
 * PostgreSQL) add and subtract in the statement that inserts, deletes or moves a row between lists, so a count commits or rolls back with the change it counts, whatever
 * code path (or cascade) made it. The migration fills the table from the rows already present.
 * Frozen with the migrations: the reconcile command keeps its own copy of the definitions.
 */
interface CountedList {
  list: string;
  table: string;
  /** SQL condition over the row `R` (replaced by NEW or OLD): the row belongs to the list. */
  where: string;
}

const LISTS: CountedList[] = [
  { list: "requests", table: "requests", where: "R.kind = 'request'" },
  { list: "requests_sent", table: "requests", where: "R.kind = 'request' AND R.is_draft = 0" },
  { list: "contacts", table: "contacts", where: "1 = 1" },
  { list: "media", table: "media", where: "1 = 1" },
];

/** Columns whose change can move a row between lists (or accounts). */
const MOVING_COLUMNS: Record<string, string[]> = {
  requests: ["account_id", "kind", "is_draft"],
  contacts: ["account_id"],
  media: ["account_id"],
};

function bump(l: CountedList, row: "NEW" | "OLD", delta: 1 | -1): string {
  return (
    `INSERT INTO list_counts (account_id, list, n) SELECT ${row}.account_id, '${l.list}', ${delta} ` +
    `WHERE ${l.where.replaceAll("R.", `${row}.`)} ` +
    "ON CONFLICT (account_id, list) DO UPDATE SET n = list_counts.n + excluded.n;"
  );
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("list_counts")
    .addColumn("account_id", "integer", (c) => c.notNull())
    .addColumn("list", "text", (c) => c.notNull())
    .addColumn("n", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("list_counts_pk", ["account_id", "list"])
    .execute();
  const pg = isPostgres(db);
  for (const table of Object.keys(MOVING_COLUMNS)) {
    const lists = LISTS.filter((l) => l.table === table);
    const cols = MOVING_COLUMNS[table]!.join(", ");
    if (pg) {
      // Statement triggers over transition tables: one grouped upsert per statement, so a bulk
      // change (an account's cascade, an import) touches each counter row once, not once a row.
      const delta = (l: CountedList, from: string, sign: 1 | -1) =>
        `SELECT R.account_id, ${sign} AS d FROM ${from} R WHERE ${l.where}`;
      const upsert = (l: CountedList, parts: string[]) =>
        `INSERT INTO list_counts (account_id, list, n) SELECT account_id, '${l.list}', sum(d) FROM (${parts.join(
          " UNION ALL ",
        )}) x GROUP BY account_id HAVING sum(d) <> 0 ` +
        "ON CONFLICT (account_id, list) DO UPDATE SET n = list_counts.n + excluded.n;";
      const ops: [string, string, (l: CountedList) => string[]][] = [
        ["ins", "INSERT", (l) => [delta(l, "new_rows", 1)]],
        ["del", "DELETE", (l) => [delta(l, "old_rows", -1)]],
        ["upd", "UPDATE", (l) => [delta(l, "new_rows", 1), delta(l, "old_rows", -1)]],
      ];
      for (const [suffix, op, parts] of ops) {
        const referencing =
          op === "INSERT"
            ? "NEW TABLE AS new_rows"
            : op === "DELETE"
              ? "OLD TABLE AS old_rows"
              : "OLD TABLE AS old_rows NEW TABLE AS new_rows";
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
    } else {
      const body = (parts: string[]) => `BEGIN ${parts.join(" ")} END`;
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
  }
  for (const l of LISTS) {
    await sql
      .raw(
        `INSERT INTO list_counts (account_id, list, n) SELECT R.account_id, '${l.list}', count(*) ` +
          `FROM ${l.table} R WHERE ${l.where} GROUP BY R.account_id`,
      )
      .execute(db);
  }
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  for (const table of Object.keys(MOVING_COLUMNS)) {
    if (pg) {
      for (const op of ["ins", "del", "upd"]) {
        await sql.raw(`DROP TRIGGER IF EXISTS ${table}_list_counts_${op} ON ${table}`).execute(db);
        await sql.raw(`DROP FUNCTION IF EXISTS ${table}_list_counts_${op}()`).execute(db);
      }
    } else {
      for (const op of ["ins", "del", "upd"]) {
        await sql.raw(`DROP TRIGGER IF EXISTS ${table}_list_counts_${op}`).execute(db);
      }
    }
  }
  await db.schema.dropTable("list_counts").ifExists().execute();
}
