import type { Insertable, Updateable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { RequestsTable } from "../../db/schema.js";
import type { MediaRow, RequestRow } from "./requests.presenter.js";

/** Inserts a request. */
export async function insertRequest(ex: Executor, values: Insertable<RequestsTable>): Promise<RequestRow> {
  return ex.insertInto("requests").values(values).returningAll().executeTakeFirstOrThrow();
}

/** Finds a request by id within an account (undefined for absent or foreign ids). */
export async function findRequest(
  ex: Executor,
  accountId: number,
  id: number,
  opts: { forUpdate?: boolean } = {},
): Promise<RequestRow | undefined> {
  // forUpdate locks the row until the transaction ends (PostgreSQL; SQLite serialises writers).
  let q = ex.selectFrom("requests").selectAll().where("account_id", "=", accountId).where("id", "=", id);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Finds a request by its public identifier (any account). */
export async function findRequestByIdentifier(
  ex: Executor,
  identifier: string,
): Promise<RequestRow | undefined> {
  return ex.selectFrom("requests").selectAll().where("identifier", "=", identifier).executeTakeFirst();
}

/**
 * The query of one page of the account's requests, newest first (walks the (account_id, id) index
 * backwards). Exported so the benchmark can print its plan.
 */
export function listRequestsQuery(ex: Executor, accountId: number, page: { offset: number; limit: number }) {
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id", "desc")
    .limit(page.limit)
    .offset(page.offset);
}

/** One page of the account's requests, newest first. */
export async function listRequests(
  ex: Executor,
  accountId: number,
  page: { offset: number; limit: number },
): Promise<RequestRow[]> {
  return listRequestsQuery(ex, accountId, page).execute();
}

/** The query counting the account's requests (`sentOnly`: not drafts); exported for the benchmark. */
export function countRequestsQuery(ex: Executor, accountId: number, sentOnly = false) {
  let q = ex
    .selectFrom("requests")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId);
  if (sentOnly) q = q.where("is_draft", "=", 0);
  return q;
}

/** Number of the account's requests; `sentOnly` counts those that are not drafts. */
export async function countRequests(ex: Executor, accountId: number, sentOnly = false): Promise<number> {
  const row = await countRequestsQuery(ex, accountId, sentOnly).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Updates the given columns of a request; returns the fresh row. */
export async function updateRequestRow(
  ex: Executor,
  id: number,
  values: Updateable<RequestsTable>,
): Promise<RequestRow> {
  return ex.updateTable("requests").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/** Deletes a request; its media, media parts and contact links cascade. */
export async function deleteRequestRow(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("requests").where("id", "=", id).execute();
}

/** Replaces the request's contact links with `contactIds` in that order (`fresh`: none exist yet). */
export async function setRequestContacts(
  ex: Executor,
  requestId: number,
  contactIds: number[],
  opts: { fresh?: boolean } = {},
): Promise<void> {
  if (!opts.fresh) await ex.deleteFrom("request_contacts").where("request_id", "=", requestId).execute();
  if (contactIds.length === 0) return;
  await ex
    .insertInto("request_contacts")
    .values(
      contactIds.map((contactId, position) => ({ request_id: requestId, contact_id: contactId, position })),
    )
    .execute();
}

/** Contact links of the given requests, in request order. */
export async function contactLinksOf(
  ex: Executor,
  requestIds: number[],
): Promise<{ request_id: number; contact_id: number }[]> {
  if (requestIds.length === 0) return [];
  return ex
    .selectFrom("request_contacts")
    .select(["request_id", "contact_id"])
    .where("request_id", "in", requestIds)
    .orderBy("request_id")
    .orderBy("position")
    .execute();
}

/** Media rows of the given requests, oldest first. */
export async function mediaOfRequests(ex: Executor, requestIds: number[]): Promise<MediaRow[]> {
  if (requestIds.length === 0) return [];
  return ex.selectFrom("media").selectAll().where("request_id", "in", requestIds).orderBy("id").execute();
}

/** Number of the request's media still uploading (incomplete). */
export async function countUploadingMedia(ex: Executor, requestId: number): Promise<number> {
  const row = await ex
    .selectFrom("media")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("request_id", "=", requestId)
    .where("state", "=", "uploading")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The stored blobs of every part of the request's media (to delete once the rows are gone). */
export async function blobsOfRequest(
  ex: Executor,
  requestId: number,
): Promise<{ store: string; key: string }[]> {
  const rows = await ex
    .selectFrom("media_parts")
    .innerJoin("media", "media.id", "media_parts.media_id")
    .select(["media_parts.blob_store as store", "media_parts.blob_key as key"])
    .where("media.request_id", "=", requestId)
    .execute();
  return rows.map((r) => ({ store: r.store, key: r.key }));
}

/** The owner's name and settings JSON (accounts table, read-only). */
export async function findAccountProfile(
  ex: Executor,
  accountId: number,
): Promise<{ name: string; email: string; settings: string } | undefined> {
  return ex
    .selectFrom("accounts")
    .select(["name", "email", "settings"])
    .where("id", "=", accountId)
    .executeTakeFirst();
}
