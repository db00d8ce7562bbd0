import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { AccountBrandingFontsTable, AccountBrandingTable } from "../../db/schema.js";

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

/** A font file of an account's branding. */
export type BrandingFontRow = Selectable<AccountBrandingFontsTable>;

/** The account's fonts by name, without their bytes. */
export async function listBrandingFonts(
  ex: Executor,
  accountId: number,
): Promise<Omit<BrandingFontRow, "data_base64">[]> {
  return ex
    .selectFrom("account_branding_fonts")
    .select(["account_id", "name", "content_type", "bytes", "sha256", "created", "updated"])
    .where("account_id", "=", accountId)
    .orderBy("name")
    .execute();
}

/** One font of the account, with its bytes, or undefined. */
export async function findBrandingFont(
  ex: Executor,
  accountId: number,
  name: string,
): Promise<BrandingFontRow | undefined> {
  return ex
    .selectFrom("account_branding_fonts")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("name", "=", name)
    .executeTakeFirst();
}

/** Inserts or replaces a font of the account. */
export async function upsertBrandingFont(ex: Executor, row: BrandingFontRow): Promise<void> {
  await ex
    .insertInto("account_branding_fonts")
    .values(row)
    .onConflict((oc) =>
      oc.columns(["account_id", "name"]).doUpdateSet({
        content_type: row.content_type,
        data_base64: row.data_base64,
        bytes: row.bytes,
        sha256: row.sha256,
        updated: row.updated,
      }),
    )
    .execute();
}

/** Deletes one font (or every font when `name` is undefined); the number deleted. */
export async function deleteBrandingFonts(ex: Executor, accountId: number, name?: string): Promise<number> {
  let query = ex.deleteFrom("account_branding_fonts").where("account_id", "=", accountId);
  if (name !== undefined) query = query.where("name", "=", name);
  const res = await query.executeTakeFirst();
  return Number(res.numDeletedRows);
}
