import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { EmailTemplatesTable } from "../../db/schema.js";

/** An email template row. */
export type EmailTemplateRow = Selectable<EmailTemplatesTable>;

/** A template of `accountId` by slug, or undefined. */
export async function findTemplate(
  ex: Executor,
  accountId: number,
  slug: string,
): Promise<EmailTemplateRow | undefined> {
  return ex
    .selectFrom("email_templates")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("slug", "=", slug)
    .executeTakeFirst();
}

/** Inserts a template; the caller has checked the slug is free. */
export async function insertTemplate(
  ex: Executor,
  v: { accountId: number; slug: string; subject: string; html: string; now: string },
): Promise<EmailTemplateRow> {
  return ex
    .insertInto("email_templates")
    .values({
      account_id: v.accountId,
      slug: v.slug,
      subject: v.subject,
      html: v.html,
      created: v.now,
      updated: v.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Updates a template's fields; returns the new row. */
export async function updateTemplate(
  ex: Executor,
  id: number,
  patch: { slug?: string; subject?: string; html?: string; now: string },
): Promise<EmailTemplateRow> {
  const { now, ...fields } = patch;
  return ex
    .updateTable("email_templates")
    .set({ ...fields, updated: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a template by id. */
export async function deleteTemplate(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("email_templates").where("id", "=", id).execute();
}

/** A page of an account's templates ordered by slug. */
export async function listTemplates(
  ex: Executor,
  accountId: number,
  limit: number,
  offset: number,
): Promise<EmailTemplateRow[]> {
  return ex
    .selectFrom("email_templates")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("slug")
    .limit(limit)
    .offset(offset)
    .execute();
}

/** How many templates the account has. */
export async function countTemplates(ex: Executor, accountId: number): Promise<number> {
  const row = await ex
    .selectFrom("email_templates")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
