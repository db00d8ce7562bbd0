import { type Kysely, sql } from "kysely";

/**
 * A feature's files are destroyed at its expiry whatever its state, pending or complete (ADR 0058):
 * `files_destroyed_at` says when that was done, so the sweep takes each feature once. Features that
 * already expired had their files destroyed then; complete features past their expiry get theirs
 * destroyed by the next sweep. The sweep's index holds only the features still to be swept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("container_features").addColumn("files_destroyed_at", "text").execute();
  await db
    .updateTable("container_features")
    .set({ files_destroyed_at: sql.ref("completed_at") })
    .where("state", "=", "expired")
    .execute();
  await db.schema
    .createIndex("container_features_files_due_idx")
    .on("container_features")
    .column("expires_at")
    .where(sql.ref("files_destroyed_at"), "is", null)
    .execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("container_features_files_due_idx").ifExists().execute();
  await db.schema.alterTable("container_features").dropColumn("files_destroyed_at").execute();
}
