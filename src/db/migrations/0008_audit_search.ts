import type { Kysely } from "kysely";
import { bigint } from "./portable.js";

/**
 * Audit log search and retention: one (account_id, <filter>, seq) index per exact filter of
 * `GET /v1/logentry/search/` not covered by 0001 (code and path are), so every filter reads
 * newest-first from an index and counts by an index range; and the per-account retention
 * checkpoint that lets `ferry audit verify` start after entries deleted by retention.
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
  for (const name of ["partition", "model", "from", "method", "ctype"]) {
    await db.schema.dropIndex(`audit_entries_account_${name}_seq_idx`).ifExists().execute();
  }
}
