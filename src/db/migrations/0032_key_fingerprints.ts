import type { Kysely } from "kysely";

/**
 * The fingerprint of every master key a node started with (ADR 0066): a node whose key ring does
 * not match what the database recorded refuses to start, instead of issuing tokens and wrapping
 * keys no other node can read. A fingerprint is a one-way hash of a key derived for that purpose
 * only; it reveals nothing of the key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("key_fingerprints")
    .addColumn("kid", "text", (c) => c.primaryKey())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("recorded_at", "text", (c) => c.notNull())
    .execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("key_fingerprints").ifExists().execute();
}
