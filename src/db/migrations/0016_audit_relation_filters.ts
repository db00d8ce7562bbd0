import type { Kysely } from "kysely";

/**
 * Indexes for the log search filters `related_model` + `relation_key` (one entity's history) and
 * `since`/`until` (a time window): each reads one index range of one account, newest first.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("audit_entries_account_relation_seq_idx")
    .on("audit_entries")
    .columns(["account_id", "related_model", "relation_key", "seq"])
    .execute();
  await db.schema
    .createIndex("audit_entries_account_timestamp_idx")
    .on("audit_entries")
    .columns(["account_id", "timestamp"])
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("audit_entries_account_relation_seq_idx").ifExists().execute();
  await db.schema.dropIndex("audit_entries_account_timestamp_idx").ifExists().execute();
}
