import type { Kysely } from "kysely";

/**
 * The owner's request list walks an account's requests newest first, skipping `offset` of them:
 * with `kind` and `id` in one index beside the account, the walk reads the index alone (the list
 * selects ids; the page's rows and relations are loaded by id afterwards).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("requests_account_kind_id_idx")
    .on("requests")
    .columns(["account_id", "kind", "id"])
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("requests_account_kind_id_idx").ifExists().execute();
}
