import { type Insertable, type Selectable, sql } from "kysely";
import type { Executor } from "../../db/database.js";
import type { MediaPartsTable, MediaTable, RequestsTable } from "../../db/schema.js";

/** A media row. */
export type MediaRow = Selectable<MediaTable>;
/** A media part row (one encrypted blob). */
export type MediaPartRow = Selectable<MediaPartsTable>;
/** The request columns media rules look at. */
export type RequestForMedia = Pick<
  Selectable<RequestsTable>,
  | "id"
  | "account_id"
  | "type"
  | "is_draft"
  | "complete"
  | "is_expired"
  | "expires_at"
  | "allowed_extensions"
  | "max_file_bytes"
>;

/** A blob a job should delete: which store wrote it and its key. */
export interface BlobRef {
  store: string;
  key: string;
}

const requestColumns = [
  "id",
  "account_id",
  "type",
  "is_draft",
  "complete",
  "is_expired",
  "expires_at",
  "allowed_extensions",
  "max_file_bytes",
] as const;

/** The request `id` of any account (undefined when absent); callers check the owner. */
export async function findRequestForMedia(ex: Executor, id: number): Promise<RequestForMedia | undefined> {
  return ex.selectFrom("requests").select(requestColumns).where("id", "=", id).executeTakeFirst();
}

/** Inserts a media row and returns it. */
export async function insertMedia(ex: Executor, values: Insertable<MediaTable>): Promise<MediaRow> {
  return ex.insertInto("media").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The media `id` of `accountId` (undefined for absent or foreign ids). */
export async function findMedia(ex: Executor, accountId: number, id: number): Promise<MediaRow | undefined> {
  return ex
    .selectFrom("media")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

/** The media `id` whatever its account (for jobs and recipient flows that checked the request). */
export async function findMediaById(ex: Executor, id: number): Promise<MediaRow | undefined> {
  return ex.selectFrom("media").selectAll().where("id", "=", id).executeTakeFirst();
}

/** A page of an account's media, newest first, optionally of one request. */
export async function listMedia(
  ex: Executor,
  accountId: number,
  filter: { requestId?: number | undefined },
  page: { offset: number; limit: number },
): Promise<{ rows: MediaRow[]; count: number }> {
  let base = ex.selectFrom("media").where("account_id", "=", accountId);
  if (filter.requestId !== undefined) base = base.where("request_id", "=", filter.requestId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id", "desc").limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

/** Every media of a request, in upload order. */
export async function listMediaOfRequest(ex: Executor, requestId: number): Promise<MediaRow[]> {
  return ex.selectFrom("media").selectAll().where("request_id", "=", requestId).orderBy("id").execute();
}

/** Parts of a media ordered by part index. */
export async function listParts(ex: Executor, mediaId: number): Promise<MediaPartRow[]> {
  return ex
    .selectFrom("media_parts")
    .selectAll()
    .where("media_id", "=", mediaId)
    .orderBy("part_index")
    .execute();
}

/** Bytes held by an account's media that are not removed. */
export async function storageUsed(ex: Executor, accountId: number): Promise<number> {
  const row = await ex
    .selectFrom("media")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("bytes"), sql<number>`0`).as("total"))
    .where("account_id", "=", accountId)
    .where("state", "!=", "removed")
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/**
 * Inserts or replaces part `partIndex` of a media; returns the replaced part (whose blob must be
 * deleted) or undefined.
 */
export async function upsertPart(
  ex: Executor,
  part: Insertable<MediaPartsTable>,
): Promise<MediaPartRow | undefined> {
  const previous = await ex
    .selectFrom("media_parts")
    .selectAll()
    .where("media_id", "=", part.media_id)
    .where("part_index", "=", part.part_index)
    .executeTakeFirst();
  if (previous) {
    await ex
      .updateTable("media_parts")
      .set({
        plain_bytes: part.plain_bytes,
        blob_key: part.blob_key,
        blob_store: part.blob_store,
        header: part.header ?? null,
        created: part.created,
      })
      .where("media_id", "=", part.media_id)
      .where("part_index", "=", part.part_index)
      .execute();
  } else {
    await ex.insertInto("media_parts").values(part).execute();
  }
  return previous;
}

/** Count and plaintext bytes of a media's parts. */
export async function partTotals(ex: Executor, mediaId: number): Promise<{ count: number; bytes: number }> {
  const row = await ex
    .selectFrom("media_parts")
    .select((eb) => [
      eb.fn.countAll<number>().as("n"),
      eb.fn.coalesce(eb.fn.sum<number>("plain_bytes"), sql<number>`0`).as("bytes"),
    ])
    .where("media_id", "=", mediaId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), bytes: Number(row.bytes) };
}

/** Updates columns of a media row. */
export async function updateMedia(
  ex: Executor,
  id: number,
  values: Partial<Omit<MediaRow, "id">>,
): Promise<void> {
  await ex.updateTable("media").set(values).where("id", "=", id).execute();
}

/**
 * Marks a media `available` with its digests, only if it is still uploading (another request may
 * have completed it first). Returns whether this call did it.
 */
export async function markAvailable(
  ex: Executor,
  id: number,
  values: { sha256: string; md5: string; bytes: number; now: string },
): Promise<boolean> {
  const res = await ex
    .updateTable("media")
    .set({
      state: "available",
      sha256: values.sha256,
      md5: values.md5,
      bytes: values.bytes,
      updated: values.now,
    })
    .where("id", "=", id)
    .where("state", "=", "uploading")
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Deletes a media's part rows; returns their blobs. */
export async function deleteParts(ex: Executor, mediaId: number): Promise<BlobRef[]> {
  const parts = await listParts(ex, mediaId);
  await ex.deleteFrom("media_parts").where("media_id", "=", mediaId).execute();
  return parts.map((p) => ({ store: p.blob_store, key: p.blob_key }));
}

/** Deletes a media row (its parts cascade; delete them first with deleteParts to learn their blobs). */
export async function deleteMediaRow(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("media").where("id", "=", id).execute();
}

/**
 * Takes the download-once claim: sets token and lease if the media is available, not claimed (or
 * the claim's lease ran out) and has downloads left. Returns whether the claim was taken.
 */
export async function claimDownload(
  ex: Executor,
  id: number,
  claim: { token: string; until: string; now: string },
): Promise<boolean> {
  const res = await ex
    .updateTable("media")
    .set({ download_claim_token: claim.token, download_claimed_until: claim.until })
    .where("id", "=", id)
    .where("state", "=", "available")
    .where((eb) =>
      eb.or([eb("download_claimed_until", "is", null), eb("download_claimed_until", "<", claim.now)]),
    )
    .where((eb) =>
      eb.or([
        eb("max_allowed_times_downloaded", "is", null),
        eb("times_downloaded", "<", eb.ref("max_allowed_times_downloaded")),
      ]),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Extends a held claim's lease; false when the claim is no longer ours. */
export async function extendClaim(ex: Executor, id: number, token: string, until: string): Promise<boolean> {
  const res = await ex
    .updateTable("media")
    .set({ download_claimed_until: until })
    .where("id", "=", id)
    .where("download_claim_token", "=", token)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Releases a held claim (a broken transfer); false when it was not ours any more. */
export async function releaseClaim(ex: Executor, id: number, token: string): Promise<boolean> {
  const res = await ex
    .updateTable("media")
    .set({ download_claim_token: null, download_claimed_until: null })
    .where("id", "=", id)
    .where("download_claim_token", "=", token)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Adds one to `times_downloaded`. */
export async function countDownload(ex: Executor, id: number, now: string): Promise<void> {
  await ex
    .updateTable("media")
    .set((eb) => ({ times_downloaded: eb("times_downloaded", "+", 1), updated: now }))
    .where("id", "=", id)
    .execute();
}

/** Uploading media not touched since `before` (stale uploads), oldest first. */
export async function findStaleUploads(ex: Executor, before: string, limit: number): Promise<MediaRow[]> {
  return ex
    .selectFrom("media")
    .selectAll()
    .where("state", "=", "uploading")
    .where("updated", "<", before)
    .orderBy("updated")
    .limit(limit)
    .execute();
}

/** Which of `keys` some part row references. */
export async function referencedBlobKeys(ex: Executor, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await ex.selectFrom("media_parts").select("blob_key").where("blob_key", "in", keys).execute();
  return new Set(rows.map((r) => r.blob_key));
}

/** Media holding wrapped keys not wrapped under `kid`, after id `afterId`, in id order. */
export async function findKeysToRewrap(
  ex: Executor,
  kid: string,
  afterId: number,
  limit: number,
): Promise<{ id: number; wrapped_key: string }[]> {
  const prefix = `v1.${kid}.`;
  const rows = await ex
    .selectFrom("media")
    .select(["id", "wrapped_key"])
    .where("id", ">", afterId)
    .where("wrapped_key", "is not", null)
    .where(sql<string>`substr(wrapped_key, 1, ${prefix.length})`, "!=", prefix)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, wrapped_key: r.wrapped_key as string }));
}

/** Replaces a wrapped key if it is still `previous` (a concurrent removal wins). */
export async function replaceWrappedKey(
  ex: Executor,
  id: number,
  previous: string,
  next: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("media")
    .set({ wrapped_key: next })
    .where("id", "=", id)
    .where("wrapped_key", "=", previous)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Re-reads a media row inside a transaction, locking it on PostgreSQL (SQLite serialises writers). */
export async function lockMedia(ex: Executor, id: number, postgres: boolean): Promise<MediaRow | undefined> {
  return ex
    .selectFrom("media")
    .selectAll()
    .where("id", "=", id)
    .$if(postgres, (q) => q.forUpdate())
    .executeTakeFirst();
}
