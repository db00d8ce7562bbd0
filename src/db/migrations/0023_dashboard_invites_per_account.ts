import { type Kysely, sql } from "kysely";

/**
 * An email may be invited to several accounts; it signs in to one. The email stays unique among
 * users who have set a password (the one sign-in names one account) and within each account, so an
 * invitation never has to answer that the address belongs to another account: whoever follows a
 * link for an address that already signs in elsewhere is told so at setup.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("dashboard_users_email_uq").execute();
  await db.schema
    .createIndex("dashboard_users_signin_email_uq")
    .on("dashboard_users")
    .column("email")
    .unique()
    .where(sql.ref("password_hash"), "is not", null)
    .execute();
  await db.schema
    .createIndex("dashboard_users_account_email_uq")
    .on("dashboard_users")
    .columns(["account_id", "email"])
    .unique()
    .execute();
}

/** Restores the one email per user index (fails while an email is invited to two accounts). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("dashboard_users_account_email_uq").ifExists().execute();
  await db.schema.dropIndex("dashboard_users_signin_email_uq").ifExists().execute();
  await db.schema
    .createIndex("dashboard_users_email_uq")
    .on("dashboard_users")
    .column("email")
    .unique()
    .execute();
}
