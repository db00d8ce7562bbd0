import type { Kysely } from "kysely";

/**
 * Files a recipient uploads in a container session name their recipient, so each recipient sees
 * and resumes only their own uploads and the owner knows who sent what.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("media")
    .addColumn("recipient_id", "integer", (c) => c.references("container_recipients.id").onDelete("set null"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("media").dropColumn("recipient_id").execute();
}
