import type { Kysely } from "kysely";

/**
 * What a chunked upload says it is, recorded with its first chunk: the file's declared size in bytes
 * (its chunks must add up to it) and the client's fingerprint of the file (later chunks that carry
 * another are refused). Both null for uploads that declared neither (ADR 0022).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("media").addColumn("declared_bytes", "bigint").execute();
  await db.schema.alterTable("media").addColumn("fingerprint", "text").execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("media").dropColumn("fingerprint").execute();
  await db.schema.alterTable("media").dropColumn("declared_bytes").execute();
}
