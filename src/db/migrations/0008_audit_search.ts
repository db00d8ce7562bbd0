import { type Kysely, sql } from "kysely";
import { bigint } from "./portable.js";

/**
 * Filter columns of `GET /v1/logentry/search/` and their ordinal columns. An entry's ordinal for a
 * column is its position among the account's entries with the same value in that column (1, 2, 3…
 * in seq order), so `total_pages` of a one-filter search is a subtraction of two ordinals instead of
 * a COUNT over every matching entry.
 */
const ORDINALS: [string, string][] = [
  ["partition_key", "partition_key_ord"],
  ["code", "code_ord"],
  ["related_model", "related_model_ord"],
  ["path", "path_ord"],
  ["from_address", "from_address_ord"],
  ["method", "method_ord"],
  ["content_type", "content_type_ord"],
];

/**
 * Audit log search and retention: one (account_id, <filter>, seq) index per exact filter of
 * `GET /v1/logentry/search/` not covered by 0001 (code and path are), so every filter reads
 * newest-first from an index; a per-filter ordinal column on each entry (backfilled here), so a
 * one-filter count costs two index seeks; and the per-account retention checkpoint that lets
 * `ferry audit verify` start after entries deleted by retention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const filters: [string, string][] = [
    ["partition", "partition_key"],
    ["model", "related_model"],
    ["from", "from_address"],
    ["method", "method"],
    ["ctype", "content_type"],
  ];
  for (const [name, column] of filters) {
    await db.schema
      .createIndex(`audit_entries_account_${name}_seq_idx`)
      .on("audit_entries")
      .columns(["account_id", column, "seq"])
      .execute();
  }

  for (const [column, ordinal] of ORDINALS) {
    await db.schema
      .alterTable("audit_entries")
      .addColumn(ordinal, bigint, (c) => c.notNull().defaultTo(0))
      .execute();
    // UPDATE … FROM and window functions: PostgreSQL, and SQLite 3.33+ (better-sqlite3 bundles newer).
    await sql`
      UPDATE audit_entries SET ${sql.ref(ordinal)} = numbered.n
      FROM (
        SELECT id, row_number() OVER (PARTITION BY account_id, ${sql.ref(column)} ORDER BY seq) AS n
        FROM audit_entries
      ) AS numbered
      WHERE audit_entries.id = numbered.id`.execute(db);
  }

  // The last entry retention deleted per account: the chain continues from (seq, hash).
  await db.schema
    .createTable("audit_checkpoints")
    .addColumn("account_id", "integer", (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
    .addColumn("seq", bigint, (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("timestamp", "text", (c) => c.notNull())
    .addColumn("deleted_count", bigint, (c) => c.notNull().defaultTo(0))
    .addColumn("updated", "text", (c) => c.notNull())
    .execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("audit_checkpoints").ifExists().execute();
  for (const [, ordinal] of ORDINALS) {
    await db.schema.alterTable("audit_entries").dropColumn(ordinal).execute();
  }
  for (const name of ["partition", "model", "from", "method", "ctype"]) {
    await db.schema.dropIndex(`audit_entries_account_${name}_seq_idx`).ifExists().execute();
  }
}
