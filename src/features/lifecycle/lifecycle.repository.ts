import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { RequestsTable } from "../../db/schema.js";

/** A request row. */
export type LifecycleRequestRow = Selectable<RequestsTable>;

/** Sent push requests still open whose expires_at has passed (oldest first), at most `limit`. */
export async function findDuePushExpiries(
  ex: Executor,
  now: string,
  limit: number,
): Promise<{ id: number; account_id: number }[]> {
  return ex
    .selectFrom("requests")
    .select(["id", "account_id"])
    .where("complete", "=", 0)
    .where("expires_at", "is not", null)
    .where("expires_at", "<=", now)
    .where("type", "=", "push")
    .where("is_draft", "=", 0)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
}

/** A request of the account (undefined for absent or foreign ids). */
export async function findAccountRequest(
  ex: Executor,
  accountId: number,
  requestId: number,
): Promise<LifecycleRequestRow | undefined> {
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", requestId)
    .executeTakeFirst();
}

/**
 * Marks an open, sent push request expired (complete, is_expired, completed_at). Unless `force`,
 * only when its expires_at has passed; with `force`, expires_at becomes `now`. False when nothing
 * matched (already complete, or another worker got there first).
 */
export async function markPushExpired(
  ex: Executor,
  requestId: number,
  now: string,
  force: boolean,
): Promise<boolean> {
  let q = ex
    .updateTable("requests")
    .set({
      complete: 1,
      is_expired: 1,
      completed_at: now,
      updated: now,
      ...(force ? { expires_at: now } : {}),
    })
    .where("id", "=", requestId)
    .where("type", "=", "push")
    .where("is_draft", "=", 0)
    .where("complete", "=", 0);
  if (!force) q = q.where("expires_at", "is not", null).where("expires_at", "<=", now);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Marks an open pull request complete with the recipient's message; false when it was already complete. */
export async function markPullComplete(
  ex: Executor,
  requestId: number,
  receiverMessage: string | null,
  now: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("requests")
    .set({ complete: 1, receiver_message: receiverMessage, completed_at: now, updated: now })
    .where("id", "=", requestId)
    .where("type", "=", "pull")
    .where("complete", "=", 0)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Removes every not-yet-removed media of a request: state 'removed', removed_at, data key destroyed
 * (wrapped_key NULL), parts deleted. Returns the blobs those parts pointed at, for deletion.
 */
export async function removeRequestMedia(
  ex: Executor,
  requestId: number,
  now: string,
): Promise<{ store: string; key: string }[]> {
  const media = await ex
    .selectFrom("media")
    .select("id")
    .where("request_id", "=", requestId)
    .where("state", "!=", "removed")
    .execute();
  const ids = media.map((m) => m.id);
  if (ids.length === 0) return [];
  const parts = await ex
    .selectFrom("media_parts")
    .select(["blob_store", "blob_key"])
    .where("media_id", "in", ids)
    .execute();
  await ex
    .updateTable("media")
    .set({
      state: "removed",
      removed_at: now,
      wrapped_key: null,
      download_claimed_until: null,
      download_claim_token: null,
      updated: now,
    })
    .where("id", "in", ids)
    .execute();
  await ex.deleteFrom("media_parts").where("media_id", "in", ids).execute();
  return parts.map((p) => ({ store: p.blob_store, key: p.blob_key }));
}
