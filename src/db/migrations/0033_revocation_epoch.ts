import type { Kysely } from "kysely";

/**
 * The revocation epoch in the database (ADR 0067): one row whose counter every revocation bumps
 * in the database, next to the Redis counter. Nodes read it on a short timer, so a revocation is
 * refused everywhere within that period even when Redis lost its counter (a restart without
 * persistence) and the revocation message.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("revocation_epoch")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("epoch", "bigint", (c) => c.notNull())
    .execute();
  await db.insertInto("revocation_epoch").values({ id: 1, epoch: 0 }).execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("revocation_epoch").ifExists().execute();
}
