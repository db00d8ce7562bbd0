import type { Kysely } from "kysely";
import { fk, withId, withTimestamps } from "./portable.js";

/**
 * Callbacks: per-account signing secrets, events (one per outbox event of a request with
 * a callback_url), their deliveries and every delivery attempt.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable("callback_secrets"))
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("generation", "integer", (c) => c.notNull())
    .addColumn("wrapped_secret", "text", (c) => c.notNull())
    .addColumn("expires_at", "text")
    .addColumn("created", "text", (c) => c.notNull())
    .addUniqueConstraint("callback_secrets_generation_uq", ["account_id", "generation"])
    .execute();

  await withId(db, db.schema.createTable("callback_events"))
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("request_id", "integer", fk("requests", "set null"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("webhook_id", "text", (c) => c.notNull().unique())
    .addColumn("source_job_id", "integer", (c) => c.unique())
    .addColumn("created", "text", (c) => c.notNull())
    .execute();

  await withTimestamps(
    withId(db, db.schema.createTable("callback_deliveries"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("event_id", "integer", (c) =>
        c.notNull().references("callback_events.id").onDelete("cascade"),
      )
      .addColumn("request_id", "integer", fk("requests", "set null"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("tries", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("round_attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("job_id", "integer")
      .addColumn("next_attempt_at", "text")
      .addColumn("last_attempt_at", "text")
      .addColumn("last_status_code", "integer")
      .addColumn("last_error", "text")
      .addColumn("delivered_at", "text"),
  ).execute();
  await db.schema
    .createIndex("callback_deliveries_account_idx")
    .on("callback_deliveries")
    .columns(["account_id", "id"])
    .execute();
  await db.schema
    .createIndex("callback_deliveries_request_idx")
    .on("callback_deliveries")
    .columns(["request_id", "id"])
    .execute();

  await withId(db, db.schema.createTable("callback_attempts"))
    .addColumn("delivery_id", "integer", (c) =>
      c.notNull().references("callback_deliveries.id").onDelete("cascade"),
    )
    .addColumn("job_id", "integer", (c) => c.unique())
    .addColumn("number", "integer", (c) => c.notNull())
    .addColumn("trigger", "text", (c) => c.notNull())
    .addColumn("attempted_at", "text", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("response_excerpt", "text")
    .execute();
  await db.schema
    .createIndex("callback_attempts_delivery_idx")
    .on("callback_attempts")
    .columns(["delivery_id", "id"])
    .execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["callback_attempts", "callback_deliveries", "callback_events", "callback_secrets"]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
