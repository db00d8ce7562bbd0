import type { Kysely } from "kysely";
import { bigint, fk, withId, withTimestamps } from "./portable.js";

/** Contacts, contact methods, requesters, requests, media and their encrypted parts. */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable("contacts"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("last_name", "text", (c) => c.notNull().defaultTo("")),
  ).execute();
  await db.schema.createIndex("contacts_account_idx").on("contacts").columns(["account_id", "id"]).execute();

  await withTimestamps(
    withId(db, db.schema.createTable("contact_methods"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("contact_id", "integer", (c) => c.notNull().references("contacts.id").onDelete("cascade"))
      .addColumn("interface_class", "text", (c) => c.notNull())
      .addColumn("value", "text", (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex("contact_methods_contact_idx")
    .on("contact_methods")
    .column("contact_id")
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("requesters"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("first_name", "text", (c) => c.notNull())
      .addColumn("last_name", "text", (c) => c.notNull())
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("mobile", "text")
      .addColumn("company", "text")
      .addColumn("role", "text")
      .addColumn("location", "text")
      .addColumn("facebook", "text")
      .addColumn("linkedin", "text")
      .addColumn("twitter", "text")
      .addColumn("skype", "text")
      .addColumn("avatar", "text"),
  ).execute();
  await db.schema
    .createIndex("requesters_account_idx")
    .on("requesters")
    .columns(["account_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("requests"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("identifier", "text", (c) => c.notNull().unique())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("message", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("requester_privatenotes", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("is_draft", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("complete", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("is_expired", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("receiver_message", "text")
      .addColumn("short_message", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("long_message_subject", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("long_message", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("callback_url", "text")
      .addColumn("requester_id", "integer", fk("requesters", "set null"))
      .addColumn("email_template_slug", "text")
      .addColumn("tfa_send_to", "text")
      .addColumn("tfa_send_to_value", "text")
      .addColumn("tfa_times_sent", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("allowed_extensions", "text")
      .addColumn("max_file_bytes", bigint)
      .addColumn("expires_at", "text")
      .addColumn("sent_at", "text")
      .addColumn("completed_at", "text")
      .addColumn("callback_status", "text")
      .addColumn("callback_tries", "integer", (c) => c.notNull().defaultTo(0)),
  ).execute();
  await db.schema.createIndex("requests_account_idx").on("requests").columns(["account_id", "id"]).execute();
  await db.schema
    .createIndex("requests_expiry_idx")
    .on("requests")
    .columns(["complete", "expires_at"])
    .execute();

  await db.schema
    .createTable("request_contacts")
    .addColumn("request_id", "integer", (c) => c.notNull().references("requests.id").onDelete("cascade"))
    .addColumn("contact_id", "integer", (c) => c.notNull().references("contacts.id").onDelete("cascade"))
    .addColumn("position", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("request_contacts_pk", ["request_id", "contact_id"])
    .execute();
  await db.schema
    .createIndex("request_contacts_contact_idx")
    .on("request_contacts")
    .column("contact_id")
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("media"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("request_id", "integer", (c) => c.notNull().references("requests.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("content_type", "text", (c) => c.notNull())
      .addColumn("extension", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("file", "text", (c) => c.notNull())
      .addColumn("bytes", bigint, (c) => c.notNull().defaultTo(0))
      .addColumn("total_chunks", "integer", (c) => c.notNull().defaultTo(1))
      .addColumn("received_chunks", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("sha256", "text")
      .addColumn("md5", "text")
      .addColumn("wrapped_key", "text")
      .addColumn("uploaded_by", "text", (c) => c.notNull().defaultTo("owner"))
      .addColumn("times_downloaded", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("max_allowed_times_downloaded", "integer")
      .addColumn("download_claimed_until", "text")
      .addColumn("removed_at", "text"),
  ).execute();
  await db.schema.createIndex("media_account_idx").on("media").columns(["account_id", "id"]).execute();
  await db.schema.createIndex("media_request_idx").on("media").columns(["request_id", "state"]).execute();
  await db.schema.createIndex("media_state_updated_idx").on("media").columns(["state", "updated"]).execute();

  await db.schema
    .createTable("media_parts")
    .addColumn("media_id", "integer", (c) => c.notNull().references("media.id").onDelete("cascade"))
    .addColumn("part_index", "integer", (c) => c.notNull())
    .addColumn("plain_bytes", bigint, (c) => c.notNull())
    .addColumn("blob_key", "text", (c) => c.notNull())
    .addColumn("blob_store", "text", (c) => c.notNull())
    .addColumn("created", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("media_parts_pk", ["media_id", "part_index"])
    .execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    "media_parts",
    "media",
    "request_contacts",
    "requests",
    "requesters",
    "contact_methods",
    "contacts",
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
