import type { Kysely } from "kysely";
import { withTimestamps } from "./portable.js";

/**
 * Font files of an account's branding (WOFF2 or WOFF, at most 512 KB each, a few per account),
 * stored in the database as the logo is, and served under the recipient pages by name.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    db.schema
      .createTable("account_branding_fonts")
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("content_type", "text", (c) => c.notNull())
      .addColumn("data_base64", "text", (c) => c.notNull())
      .addColumn("bytes", "integer", (c) => c.notNull())
      .addColumn("sha256", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("account_branding_fonts_pk", ["account_id", "name"]),
  ).execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("account_branding_fonts").ifExists().execute();
}
