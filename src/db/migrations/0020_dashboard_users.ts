import type { Kysely } from "kysely";
import { fk, withId, withTimestamps } from "./portable.js";

/**
 * Dashboard users of an account (password hash, sealed TOTP secret, hashed recovery codes, lockout
 * counters, one-time setup link hash) and their sign-in sessions (token hash, idle and absolute
 * expiry, which step of sign-in they reached).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable("dashboard_users"))
      .addColumn("account_id", "integer", (c) => fk("accounts")(c).notNull())
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("password_hash", "text")
      .addColumn("totp_secret", "text")
      .addColumn("totp_enabled_at", "text")
      .addColumn("totp_last_step", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("recovery_codes", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("locked_until", "text")
      .addColumn("setup_token_hash", "text")
      .addColumn("setup_expires_at", "text")
      .addColumn("invited_by", "integer")
      .addColumn("last_sign_in_at", "text"),
  ).execute();
  await db.schema
    .createIndex("dashboard_users_email_uq")
    .on("dashboard_users")
    .column("email")
    .unique()
    .execute();
  await db.schema
    .createIndex("dashboard_users_account_ix")
    .on("dashboard_users")
    .column("account_id")
    .execute();
  await db.schema
    .createIndex("dashboard_users_setup_uq")
    .on("dashboard_users")
    .column("setup_token_hash")
    .unique()
    .execute();

  await withId(db, db.schema.createTable("dashboard_sessions"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("user_id", "integer", (c) => fk("dashboard_users")(c).notNull())
    .addColumn("account_id", "integer", (c) => fk("accounts")(c).notNull())
    .addColumn("stage", "text", (c) => c.notNull())
    .addColumn("ip", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("user_agent", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created", "text", (c) => c.notNull())
    .addColumn("last_seen_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("dashboard_sessions_user_ix")
    .on("dashboard_sessions")
    .column("user_id")
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("dashboard_sessions").ifExists().execute();
  await db.schema.dropTable("dashboard_users").ifExists().execute();
}
