import type { Kysely } from "kysely";

/**
 * Requests: a covering index for GET /v1/request/counter/ (requests sent = not drafts, per
 * account), so the count never visits the table rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("requests_account_draft_idx")
    .on("requests")
    .columns(["account_id", "is_draft"])
    .execute();
}

/** Drops the index created above. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("requests_account_draft_idx").ifExists().execute();
}
