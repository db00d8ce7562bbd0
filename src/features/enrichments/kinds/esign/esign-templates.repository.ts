/** The `esign_templates` table (migration 0038): an account's signing templates. */
import type { Insertable, Selectable } from "kysely";
import type { Executor } from "../../../../db/database.js";
import type { EsignTemplatesTable } from "../../../../db/schema.js";

export type EsignTemplateRow = Selectable<EsignTemplatesTable>;

/** Inserts a template and returns its row. */
export async function insertTemplate(
  ex: Executor,
  values: Insertable<EsignTemplatesTable>,
): Promise<EsignTemplateRow> {
  return ex.insertInto("esign_templates").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The account's template `id`, or undefined (absent or another account's). */
export async function findTemplate(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<EsignTemplateRow | undefined> {
  return ex
    .selectFrom("esign_templates")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

/** A page of the account's templates, oldest first, and their count. */
export async function listTemplates(
  ex: Executor,
  accountId: number,
  page: { offset: number; limit: number },
): Promise<{ rows: EsignTemplateRow[]; count: number }> {
  const rows = await ex
    .selectFrom("esign_templates")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const total = await ex
    .selectFrom("esign_templates")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return { rows, count: Number(total.n) };
}

/** Deletes the account's template `id`; true when one was deleted. */
export async function deleteTemplate(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const res = await ex
    .deleteFrom("esign_templates")
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
