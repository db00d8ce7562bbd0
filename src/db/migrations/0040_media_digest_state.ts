import type { Kysely } from "kysely";

/**
 * The running MD5 and SHA-256 of a chunked upload, saved with each chunk that extends the hashed
 * prefix (ADR 0075), so whichever node receives the last chunk continues from it instead of
 * reading every part back. `digest_chunks` is how many chunks from the first it covers;
 * `digest_state` is JSON: hash-wasm's saved states (base64) and the SHA-256 of those chunks'
 * blob keys, which tells whether a chunk it covers was replaced since.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("media").addColumn("digest_chunks", "integer").execute();
  await db.schema.alterTable("media").addColumn("digest_state", "text").execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("media").dropColumn("digest_state").execute();
  await db.schema.alterTable("media").dropColumn("digest_chunks").execute();
}
