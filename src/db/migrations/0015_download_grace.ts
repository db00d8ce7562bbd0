import type { Kysely } from "kysely";
import { withId, withTimestamps } from "./portable.js";

/**
 * Downloads of files with a download limit (ADR 0021): one row per counted download, with who made
 * it, whether a transfer of it completed, until when that downloader may resume it with Range, and
 * the lease of resumes in progress (the file is not destroyed under them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable("media_downloads"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("media_id", "integer", (c) => c.notNull().references("media.id").onDelete("cascade"))
      .addColumn("downloader", "text", (c) => c.notNull())
      .addColumn("complete", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("grace_until", "text", (c) => c.notNull())
      .addColumn("resuming_until", "text"),
  ).execute();
  await db.schema
    .createIndex("media_downloads_media_idx")
    .on("media_downloads")
    .columns(["media_id", "downloader", "grace_until"])
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("media_downloads").ifExists().execute();
}
