import type { Kysely } from "kysely";
import { bigint, withId, withTimestamps } from "./portable.js";

/** Accounts, applications (API keys), the audit log with its hash-chain heads, and the job queue. */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable("accounts"))
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("settings", "text", (c) => c.notNull().defaultTo("{}")),
  ).execute();

  await withTimestamps(
    withId(db, db.schema.createTable("applications"))
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("key_prefix", "text", (c) => c.notNull())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("scopes", "text", (c) => c.notNull().defaultTo("*"))
      .addColumn("revoked_at", "text")
      .addColumn("last_used_at", "text"),
  ).execute();
  await db.schema.createIndex("applications_account_idx").on("applications").column("account_id").execute();

  // Audit log: the spec's Log entry fields plus the per-account hash chain (seq, prev_hash, hash).
  await withId(db, db.schema.createTable("audit_entries"))
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("seq", bigint, (c) => c.notNull())
    .addColumn("partition_key", "text", (c) => c.notNull())
    .addColumn("row_key", "text", (c) => c.notNull())
    .addColumn("timestamp", "text", (c) => c.notNull())
    .addColumn("code", "text", (c) => c.notNull())
    .addColumn("api_key_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("related_model", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("relation_key", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("value", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("from_address", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("method", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("path", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("data", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("content_type", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("etag", "text", (c) => c.notNull())
    .addColumn("prev_hash", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("audit_entries_account_seq_uq")
    .on("audit_entries")
    .columns(["account_id", "seq"])
    .unique()
    .execute();
  await db.schema
    .createIndex("audit_entries_account_code_seq_idx")
    .on("audit_entries")
    .columns(["account_id", "code", "seq"])
    .execute();
  await db.schema
    .createIndex("audit_entries_account_path_seq_idx")
    .on("audit_entries")
    .columns(["account_id", "path", "seq"])
    .execute();

  await db.schema
    .createTable("audit_chain_heads")
    .addColumn("account_id", "integer", (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
    .addColumn("seq", bigint, (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .execute();

  // Job queue / transactional outbox.
  await withTimestamps(
    withId(db, db.schema.createTable("jobs"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("run_at", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("max_attempts", "integer", (c) => c.notNull())
      .addColumn("locked_by", "text")
      .addColumn("locked_until", "text")
      .addColumn("last_error", "text")
      .addColumn("finished_at", "text"),
  ).execute();
  await db.schema.createIndex("jobs_ready_idx").on("jobs").columns(["state", "run_at"]).execute();
  await db.schema.createIndex("jobs_lease_idx").on("jobs").columns(["state", "locked_until"]).execute();
  await db.schema.createIndex("jobs_finished_idx").on("jobs").columns(["state", "finished_at"]).execute();
}

/** Drops everything created above. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["jobs", "audit_chain_heads", "audit_entries", "applications", "accounts"]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
