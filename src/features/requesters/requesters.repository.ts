import type { Insertable, Selectable, Updateable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { RequestersTable } from "../../db/schema.js";

/** A requester row. */
export type RequesterRow = Selectable<RequestersTable>;

/** The editable columns of a requester. */
export type RequesterFields = Omit<Insertable<RequestersTable>, "id" | "account_id" | "created" | "updated">;

/** Inserts a requester of `accountId`. */
export async function insertRequester(
  ex: Executor,
  accountId: number,
  fields: RequesterFields,
  now: string,
): Promise<RequesterRow> {
  return ex
    .insertInto("requesters")
    .values({ ...fields, account_id: accountId, created: now, updated: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Finds a requester by id within an account (undefined for absent or foreign ids). */
export async function findRequester(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<RequesterRow | undefined> {
  return ex
    .selectFrom("requesters")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Requesters by id (no account filter: ids come from the caller's own request rows). */
export async function findRequestersByIds(ex: Executor, ids: number[]): Promise<RequesterRow[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom("requesters").selectAll().where("id", "in", ids).execute();
}

/** One page of the account's requesters, newest first. */
export async function listRequesters(
  ex: Executor,
  accountId: number,
  page: { offset: number; limit: number },
): Promise<RequesterRow[]> {
  return ex
    .selectFrom("requesters")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Number of the account's requesters. */
export async function countRequesters(ex: Executor, accountId: number): Promise<number> {
  const row = await ex
    .selectFrom("requesters")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Updates the given columns and `updated`; returns the fresh row. */
export async function updateRequesterRow(
  ex: Executor,
  id: number,
  fields: Updateable<RequestersTable>,
  now: string,
): Promise<RequesterRow> {
  return ex
    .updateTable("requesters")
    .set({ ...fields, updated: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a requester; requests naming it fall back to the owner's profile (FK set null). */
export async function deleteRequesterRow(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("requesters").where("id", "=", id).execute();
}
