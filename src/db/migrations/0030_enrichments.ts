import type { Kysely } from "kysely";
import { withId, withTimestamps } from "./portable.js";

/**
 * Session enrichments (ADR 0063): feature kinds beyond push and pull share the container features'
 * id space and lifecycle; each has a row in `enrichment_features` with its kind-specific status,
 * payload and (sealed) result. `container_feature_prerequisites` holds the `after` order of any
 * feature. Providers: per-account connections with sealed credentials and a webhook secret (stored
 * as its SHA-256), an inbox of verified provider webhooks keyed by (connection, provider event id).
 * The consent ledger records every disclosure a recipient accepted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("container_feature_prerequisites")
    .addColumn("feature_id", "integer", (c) =>
      c.notNull().references("container_features.id").onDelete("cascade"),
    )
    .addColumn("after_id", "integer", (c) =>
      c.notNull().references("container_features.id").onDelete("cascade"),
    )
    .addPrimaryKeyConstraint("container_feature_prerequisites_pk", ["feature_id", "after_id"])
    .execute();
  await db.schema
    .createIndex("container_feature_prerequisites_after_idx")
    .on("container_feature_prerequisites")
    .column("after_id")
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("provider_connections"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull().defaultTo("test"))
      // JSON of the provider's settings, sealed with the key ring (kid + ciphertext).
      .addColumn("credentials_kid", "text")
      .addColumn("credentials", "text")
      // SHA-256 (hex) of the secret in the connection's webhook URL.
      .addColumn("webhook_secret_hash", "text", (c) => c.notNull().unique())
      .addColumn("webhook_secret_kid", "text", (c) => c.notNull())
      .addColumn("webhook_secret", "text", (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex("provider_connections_account_kind_idx")
    .on("provider_connections")
    .columns(["account_id", "kind"])
    .unique()
    .execute();

  await withTimestamps(
    db.schema
      .createTable("enrichment_features")
      .addColumn("feature_id", "integer", (c) =>
        c.primaryKey().references("container_features.id").onDelete("cascade"),
      )
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      // JSON of what the owner gave (the kind's create schema, validated).
      .addColumn("payload", "text", (c) => c.notNull().defaultTo("{}"))
      // JSON of the outcome, sealed with the key ring when the kind says it is sensitive.
      .addColumn("result_kid", "text")
      .addColumn("result", "text")
      .addColumn("provider", "text", (c) => c.notNull().defaultTo("local"))
      .addColumn("connection_id", "integer", (c) =>
        c.references("provider_connections.id").onDelete("set null"),
      )
      .addColumn("provider_ref", "text")
      .addColumn("result_purged_at", "text"),
  ).execute();
  await db.schema
    .createIndex("enrichment_features_kind_status_idx")
    .on("enrichment_features")
    .columns(["kind", "status"])
    .execute();
  await db.schema
    .createIndex("enrichment_features_provider_ref_idx")
    .on("enrichment_features")
    .columns(["connection_id", "provider_ref"])
    .execute();

  await withId(db, db.schema.createTable("provider_webhook_events"))
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("connection_id", "integer", (c) =>
      c.notNull().references("provider_connections.id").onDelete("cascade"),
    )
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("body_kid", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("received_at", "text", (c) => c.notNull())
    .addColumn("processed_at", "text")
    .addColumn("outcome", "text")
    .addUniqueConstraint("provider_webhook_events_event_uq", ["connection_id", "event_id"])
    .execute();

  await withId(db, db.schema.createTable("consents"))
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("container_id", "integer", (c) => c.notNull().references("containers.id").onDelete("cascade"))
    .addColumn("recipient_id", "integer", (c) =>
      c.notNull().references("container_recipients.id").onDelete("cascade"),
    )
    .addColumn("feature_id", "integer", (c) => c.references("container_features.id").onDelete("set null"))
    .addColumn("disclosure_id", "text", (c) => c.notNull())
    .addColumn("disclosure_version", "text", (c) => c.notNull())
    .addColumn("text_sha256", "text", (c) => c.notNull())
    .addColumn("accepted_at", "text", (c) => c.notNull())
    .addColumn("ip", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("user_agent", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("auth_method", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("consents_container_idx")
    .on("consents")
    .columns(["container_id", "id"])
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "consents",
    "provider_webhook_events",
    "enrichment_features",
    "provider_connections",
    "container_feature_prerequisites",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
