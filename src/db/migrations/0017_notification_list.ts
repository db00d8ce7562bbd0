import type { Kysely } from "kysely";

/** GET /v1/notification/ lists an account's notifications newest first: one index range. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("notifications_account_id_idx")
    .on("notifications")
    .columns(["account_id", "id"])
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("notifications_account_id_idx").ifExists().execute();
}
