import type { Kysely } from "kysely";
import { bigint, withId, withTimestamps } from "./portable.js";

/**
 * The container module: containers (sharing the requests' id space through a `requests` row of kind
 * 'container'), their recipients and recipient items with session links, the email text, chat
 * messages and replies, features of every kind in one table with per-recipient permissions and
 * media tags; media and notifications gain their container links.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("requests")
    .addColumn("kind", "text", (c) => c.notNull().defaultTo("request"))
    .execute();
  // Every request query filters on kind: the counters' covering index gains it, so counting an
  // account's requests still never visits the table rows.
  await db.schema.dropIndex("requests_account_draft_idx").execute();
  await db.schema
    .createIndex("requests_account_kind_draft_idx")
    .on("requests")
    .columns(["account_id", "kind", "is_draft"])
    .execute();

  await withTimestamps(
    db.schema
      .createTable("containers")
      .addColumn("id", "integer", (c) => c.primaryKey().references("requests.id").onDelete("cascade"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("page_type", "text", (c) => c.notNull())
      .addColumn("display_chat", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("state", "text", (c) => c.notNull().defaultTo("draft"))
      .addColumn("auth_send_as", "text")
      .addColumn("auth_to", "text")
      .addColumn("sent_at", "text")
      .addColumn("completed_at", "text"),
  ).execute();
  await db.schema
    .createIndex("containers_account_idx")
    .on("containers")
    .columns(["account_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_emails"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("container_id", "integer", (c) =>
        c.notNull().unique().references("containers.id").onDelete("cascade"),
      )
      .addColumn("subject", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("body", "text", (c) => c.notNull().defaultTo("")),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_recipients"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("container_id", "integer", (c) =>
        c.notNull().references("containers.id").onDelete("cascade"),
      )
      .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("last_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("active", "integer", (c) => c.notNull().defaultTo(1)),
  ).execute();
  await db.schema
    .createIndex("container_recipients_container_idx")
    .on("container_recipients")
    .columns(["container_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_recipient_items"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("container_id", "integer", (c) =>
        c.notNull().references("containers.id").onDelete("cascade"),
      )
      .addColumn("recipient_id", "integer", (c) =>
        c.notNull().references("container_recipients.id").onDelete("cascade"),
      )
      .addColumn("interface_class", "text", (c) => c.notNull())
      .addColumn("value", "text", (c) => c.notNull())
      // The session link's secret: set once, at the first send_notification that includes the item.
      .addColumn("session_token", "text", (c) => c.unique())
      .addColumn("notified_at", "text")
      // The first time the session was opened (session_opened is sent once).
      .addColumn("opened_at", "text"),
  ).execute();
  await db.schema
    .createIndex("container_recipient_items_recipient_idx")
    .on("container_recipient_items")
    .columns(["recipient_id", "id"])
    .execute();
  await db.schema
    .createIndex("container_recipient_items_container_idx")
    .on("container_recipient_items")
    .columns(["container_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_messages"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("container_id", "integer", (c) =>
        c.notNull().references("containers.id").onDelete("cascade"),
      )
      .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("body", "text", (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex("container_messages_container_idx")
    .on("container_messages")
    .columns(["container_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_message_replies"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("container_id", "integer", (c) =>
        c.notNull().references("containers.id").onDelete("cascade"),
      )
      .addColumn("recipient_id", "integer", (c) =>
        c.notNull().references("container_recipients.id").onDelete("cascade"),
      )
      .addColumn("body", "text", (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex("container_message_replies_container_idx")
    .on("container_message_replies")
    .columns(["container_id", "id"])
    .execute();
  await db.schema
    .createIndex("container_message_replies_recipient_idx")
    .on("container_message_replies")
    .columns(["recipient_id", "id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_features"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("container_id", "integer", (c) =>
        c.notNull().references("containers.id").onDelete("cascade"),
      )
      // pushpull, pull, push; later kinds (signing, payment, ...) are new values.
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("direction", "text", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("requester_privatenotes", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("receiver_message", "text")
      .addColumn("state", "text", (c) => c.notNull().defaultTo("pending"))
      .addColumn("expires_at", "text")
      .addColumn("allowed_file_extensions", "text")
      .addColumn("max_file_size", bigint)
      .addColumn("max_files", "integer")
      .addColumn("max_file_downloads", "integer")
      .addColumn("settings", "text", (c) => c.notNull().defaultTo("{}"))
      .addColumn("completed_at", "text"),
  ).execute();
  await db.schema
    .createIndex("container_features_container_idx")
    .on("container_features")
    .columns(["container_id", "id"])
    .execute();
  await db.schema
    .createIndex("container_features_due_idx")
    .on("container_features")
    .columns(["state", "expires_at"])
    .execute();

  await db.schema
    .createTable("container_feature_permissions")
    .addColumn("feature_id", "integer", (c) =>
      c.notNull().references("container_features.id").onDelete("cascade"),
    )
    .addColumn("recipient_id", "integer", (c) =>
      c.notNull().references("container_recipients.id").onDelete("cascade"),
    )
    .addPrimaryKeyConstraint("container_feature_permissions_pk", ["feature_id", "recipient_id"])
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("container_media_tags"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("feature_id", "integer", (c) =>
        c.notNull().references("container_features.id").onDelete("cascade"),
      )
      .addColumn("name", "text", (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex("container_media_tags_feature_idx")
    .on("container_media_tags")
    .columns(["feature_id", "id"])
    .execute();

  await db.schema
    .alterTable("media")
    .addColumn("feature_id", "integer", (c) => c.references("container_features.id").onDelete("cascade"))
    .execute();
  await db.schema.createIndex("media_feature_idx").on("media").column("feature_id").execute();

  await db.schema
    .alterTable("notifications")
    .addColumn("recipient_item_id", "integer", (c) =>
      c.references("container_recipient_items.id").onDelete("set null"),
    )
    .execute();
  // A message composed when it was queued (containers), sealed under the key ring.
  await db.schema.alterTable("notifications").addColumn("sealed_message", "text").execute();
  // JSON merged into the outcome's callback body instead of the Request object (containers).
  await db.schema.alterTable("notifications").addColumn("event_context", "text").execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("notifications").dropColumn("event_context").execute();
  await db.schema.alterTable("notifications").dropColumn("sealed_message").execute();
  await db.schema.alterTable("notifications").dropColumn("recipient_item_id").execute();
  await db.schema.dropIndex("media_feature_idx").ifExists().execute();
  await db.schema.alterTable("media").dropColumn("feature_id").execute();
  for (const table of [
    "container_media_tags",
    "container_feature_permissions",
    "container_features",
    "container_message_replies",
    "container_messages",
    "container_recipient_items",
    "container_recipients",
    "container_emails",
    "containers",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
  await db.schema.dropIndex("requests_account_kind_draft_idx").ifExists().execute();
  await db.schema.alterTable("requests").dropColumn("kind").execute();
  await db.schema
    .createIndex("requests_account_draft_idx")
    .on("requests")
    .columns(["account_id", "is_draft"])
    .execute();
}
