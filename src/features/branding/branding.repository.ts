import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { AccountBrandingTable } from "../../db/schema.js";

/** An account's branding row. */
export type BrandingRow = Selectable<AccountBrandingTable>;

/** The branding of an account, or undefined when it has none. */
export async function findBranding(ex: Executor, accountId: number): Promise<BrandingRow | undefined> {
  return ex.selectFrom("account_branding").selectAll().where("account_id", "=", accountId).executeTakeFirst();
}

/** The account's custom recipient host name, or null when it has none (reads no logo or CSS). */
export async function findRecipientHost(ex: Executor, accountId: number): Promise<string | null> {
  const row = await ex
    .selectFrom("account_branding")
    .select("recipient_host")
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row?.recipient_host ?? null;
}

/** The branding that claims a recipient host name, or undefined. */
export async function findBrandingByHost(ex: Executor, host: string): Promise<BrandingRow | undefined> {
  return ex.selectFrom("account_branding").selectAll().where("recipient_host", "=", host).executeTakeFirst();
}

/** Inserts or replaces an account's branding row. */
export async function upsertBranding(ex: Executor, row: BrandingRow): Promise<void> {
  await ex
    .insertInto("account_branding")
    .values(row)
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet({
        css: row.css,
        css_hash: row.css_hash,
        logo_base64: row.logo_base64,
        logo_content_type: row.logo_content_type,
        logo_hash: row.logo_hash,
        recipient_host: row.recipient_host,
        updated: row.updated,
      }),
    )
    .execute();
}

/** Deletes an account's branding; true when there was one. */
export async function deleteBranding(ex: Executor, accountId: number): Promise<boolean> {
  const res = await ex.deleteFrom("account_branding").where("account_id", "=", accountId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
