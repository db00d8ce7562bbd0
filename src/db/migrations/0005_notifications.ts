import type { Kysely } from "kysely";
import { fk, withId, withTimestamps } from "./portable.js";

/**
 * Notifications (one per contact method per send_notification call), email templates, captured
 * messages (capture mailer / capture SMS) and per-account custom SMTP settings.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable("notifications"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("request_id", "integer", (c) => c.notNull().references("requests.id").onDelete("cascade"))
      .addColumn("contact_id", "integer", fk("contacts", "set null"))
      .addColumn("contact_method_id", "integer", fk("contact_methods", "set null"))
      .addColumn("contact_first_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("contact_last_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("contact_method_value", "text", (c) => c.notNull())
      .addColumn("contact_method_interface_class", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("was_sent", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("removed", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("error", "text")
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("sent_at", "text", (c) => c.notNull())
      .addColumn("delivered_at", "text")
      .addColumn("provider_message_id", "text")
      .addColumn("open_token", "text", (c) => c.unique())
      .addColumn("opened_at", "text"),
  ).execute();
  await db.schema
    .createIndex("notifications_request_idx")
    .on("notifications")
    .columns(["request_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("email_templates"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("slug", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("html", "text", (c) => c.notNull())
      .addUniqueConstraint("email_templates_account_slug_uq", ["account_id", "slug"]),
  ).execute();

  await withId(db, db.schema.createTable("captured_messages"))
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("to_address", "text", (c) => c.notNull())
    .addColumn("from_address", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("subject", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("text_body", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("html_body", "text")
    .addColumn("links", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("notification_id", "integer", fk("notifications", "set null"))
    .addColumn("created", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("captured_messages_account_idx")
    .on("captured_messages")
    .columns(["account_id", "id"])
    .execute();

  await withTimestamps(
    db.schema
      .createTable("account_smtp_settings")
      .addColumn("account_id", "integer", (c) =>
        c.primaryKey().notNull().references("accounts.id").onDelete("cascade"),
      )
      .addColumn("host", "text", (c) => c.notNull())
      .addColumn("port", "integer", (c) => c.notNull())
      .addColumn("tls", "text", (c) => c.notNull())
      .addColumn("username", "text")
      .addColumn("password_ciphertext", "text")
      .addColumn("password_kid", "text")
      .addColumn("from_email", "text", (c) => c.notNull()),
  ).execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["account_smtp_settings", "captured_messages", "email_templates", "notifications"]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
