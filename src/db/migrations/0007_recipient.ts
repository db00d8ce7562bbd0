import type { Kysely } from "kysely";
import { withId, withTimestamps } from "./portable.js";

/**
 * Recipient pages: two-factor codes of recipients and per-account branding (white-label
 * stylesheet, logo, custom recipient host name).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One row per code sent; the newest unconsumed one is the live code. Sends in a window are
  // counted from these rows, so the resend limit holds across nodes.
  await withId(db, db.schema.createTable("recipient_tfa_codes"))
    .addColumn("request_id", "integer", (c) => c.notNull().references("requests.id").onDelete("cascade"))
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("consumed_at", "text")
    .addColumn("created", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("recipient_tfa_codes_request_idx")
    .on("recipient_tfa_codes")
    .columns(["request_id", "created"])
    .execute();

  await withTimestamps(
    db.schema
      .createTable("account_branding")
      .addColumn("account_id", "integer", (c) =>
        c.primaryKey().notNull().references("accounts.id").onDelete("cascade"),
      )
      .addColumn("css", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("css_hash", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("logo_base64", "text")
      .addColumn("logo_content_type", "text")
      .addColumn("logo_hash", "text")
      .addColumn("recipient_host", "text", (c) => c.unique()),
  ).execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("account_branding").ifExists().execute();
  await db.schema.dropTable("recipient_tfa_codes").ifExists().execute();
}
