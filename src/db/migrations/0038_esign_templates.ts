import type { Kysely } from "kysely";
import { withId, withTimestamps } from "./portable.js";

/**
 * Signing templates (ADR 0071): an account's PDF (a media id, checked by the PDF engine when the
 * template is made, its SHA-256 and page sizes kept) with named fields per role, from which esign
 * steps are created.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable("esign_templates"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("document", "integer", (c) => c.notNull())
      .addColumn("document_sha256", "text", (c) => c.notNull())
      // JSON: [{width, height}] per page; the roles; the fields.
      .addColumn("pages", "text", (c) => c.notNull())
      .addColumn("roles", "text", (c) => c.notNull())
      .addColumn("fields", "text", (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex("esign_templates_account_idx")
    .on("esign_templates")
    .columns(["account_id", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("esign_templates").execute();
}
