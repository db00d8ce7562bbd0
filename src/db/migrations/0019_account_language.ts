import type { Kysely } from "kysely";

/**
 * The language an account's recipients read pages and messages in when their browser names none
 * Ferry supports (and every email and text message: ADR 0033). Two-letter code, English by default.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("accounts")
    .addColumn("default_language", "text", (c) => c.notNull().defaultTo("en"))
    .execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("accounts").dropColumn("default_language").execute();
}
