import type { Kysely } from "kysely";

/**
 * A container's chat can be closed by its owner (ADR 0057): when, or null while it is open. The chat
 * also ends when the container expires or is deleted; those need no column.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("containers").addColumn("chat_closed_at", "text").execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("containers").dropColumn("chat_closed_at").execute();
}
