import type { Kysely } from "kysely";

/**
 * Encrypted media additions: each part keeps its blob's 21-byte header (so reads need no extra
 * fetch and an older blob put back in place is refused), and a download-once claim carries a token
 * so only its holder can complete or release it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("media_parts").addColumn("header", "text").execute();
  await db.schema.alterTable("media").addColumn("download_claim_token", "text").execute();
  await db.schema.createIndex("media_parts_blob_key_idx").on("media_parts").column("blob_key").execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("media_parts_blob_key_idx").ifExists().execute();
  await db.schema.alterTable("media").dropColumn("download_claim_token").execute();
  await db.schema.alterTable("media_parts").dropColumn("header").execute();
}
