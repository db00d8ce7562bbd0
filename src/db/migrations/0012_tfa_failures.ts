import type { Kysely } from "kysely";

/**
 * Two-factor failures in total: the wrong codes entered for a request (or a container, same id
 * space) since its last correct code or the owner's last reset. At TFA_MAX_FAILURES the link is
 * locked until the owner sends it again or changes its two-factor setting.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("requests")
    .addColumn("tfa_failures", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("requests").dropColumn("tfa_failures").execute();
}
