import { type Insertable, type Selectable, sql } from "kysely";
import type { Executor } from "../../db/database.js";
import { keptCount } from "../../db/list-counts.js";
import type { MediaPartsTable, MediaTable } from "../../db/schema.js";

/** A media row. */
export type MediaRow = Selectable<MediaTable>;
/** A media part row (one encrypted blob). */
export type MediaPartRow = Selectable<MediaPartsTable>;
/** A blob a job should delete: which store wrote it and its key. */
export interface BlobRef {
  store: string;
  key: string;
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
  // The page's ids first (an index walk however deep the page), then those rows; the unfiltered
  // count is the one the database keeps per account, a request's media are counted in place.
  const ids = base.select("id").orderBy("id", "desc").limit(page.limit).offset(page.offset);
  const [rows, count] = await Promise.all([
    ex.selectFrom("media").selectAll().where("id", "in", ids).orderBy("id", "desc").execute(),
    filter.requestId === undefined
      ? keptCount(ex, accountId, "media")
      : base
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
          .then((r) => Number(r.n)),
  ]);
  return { rows, count };
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

/** Inserts a part row. */
export async function insertPart(ex: Executor, part: Insertable<MediaPartsTable>): Promise<void> {
  await ex.insertInto("media_parts").values(part).execute();
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
    await insertPart(ex, part);
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
/** The saved running digests of an upload (ADR 0075): how many chunks they cover, and the state. */
export async function findDigestState(
  ex: Executor,
  mediaId: number,
): Promise<{ chunks: number; state: string } | undefined> {
  const row = await ex
    .selectFrom("media")
    .select(["digest_chunks", "digest_state"])
    .where("id", "=", mediaId)
    .where("state", "=", "uploading")
    .executeTakeFirst();
  if (!row || row.digest_chunks === null || row.digest_state === null) return undefined;
  return { chunks: Number(row.digest_chunks), state: row.digest_state };
}

/**
 * Saves the running digests of an upload covering its first `chunks` chunks, unless a state
 * covering more is saved already (another node went further meanwhile).
 */
export async function saveDigestState(
  ex: Executor,
  mediaId: number,
  chunks: number,
  state: string,
): Promise<void> {
  await ex
    .updateTable("media")
    .set({ digest_chunks: chunks, digest_state: state })
    .where("id", "=", mediaId)
    .where("state", "=", "uploading")
    .where((eb) => eb.or([eb("digest_chunks", "is", null), eb("digest_chunks", "<=", chunks)]))
    .execute();
}

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
      digest_chunks: null,
      digest_state: null,
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

/** Every media of the given requests, in upload order. */
export async function listMediaOfRequests(ex: Executor, requestIds: number[]): Promise<MediaRow[]> {
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
export async function blobsOfRequest(ex: Executor, requestId: number): Promise<BlobRef[]> {
  const rows = await ex
    .selectFrom("media_parts")
    .innerJoin("media", "media.id", "media_parts.media_id")
    .select(["media_parts.blob_store as store", "media_parts.blob_key as key"])
    .where("media.request_id", "=", requestId)
    .execute();
  return rows.map((r) => ({ store: r.store, key: r.key }));
}

/**
 * Removes every not-yet-removed media of a request: state 'removed', removed_at, data key destroyed
 * (wrapped_key NULL), parts deleted. Returns the blobs those parts pointed at, for deletion.
 */
export async function removeRequestMedia(ex: Executor, requestId: number, now: string): Promise<BlobRef[]> {
  return (await removeMediaOf(ex, "request_id", requestId, now)).blobs;
}

/** Like removeRequestMedia, for the media of a container feature; also says which media it removed. */
export function removeFeatureMedia(
  ex: Executor,
  featureId: number,
  now: string,
): Promise<{ media: { id: number; account_id: number }[]; blobs: BlobRef[] }> {
  return removeMediaOf(ex, "feature_id", featureId, now);
}

async function removeMediaOf(
  ex: Executor,
  owner: "request_id" | "feature_id",
  ownerId: number,
  now: string,
): Promise<{ media: { id: number; account_id: number }[]; blobs: BlobRef[] }> {
  const media = await ex
    .selectFrom("media")
    .select(["id", "account_id"])
    .where(owner, "=", ownerId)
    .where("state", "!=", "removed")
    .orderBy("id")
    .execute();
  const ids = media.map((m) => m.id);
  if (ids.length === 0) return { media: [], blobs: [] };
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
  return { media, blobs: parts.map((p) => ({ store: p.blob_store, key: p.blob_key })) };
}

/** Files of a feature uploaded by `uploadedBy` that are not removed. */
export async function countFilesOfFeature(
  ex: Executor,
  featureId: number,
  uploadedBy: "owner" | "recipient",
): Promise<number> {
  const row = await ex
    .selectFrom("media")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("feature_id", "=", featureId)
    .where("uploaded_by", "=", uploadedBy)
    .where("state", "!=", "removed")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every media of a feature, in upload order. */
export async function listMediaOfFeature(ex: Executor, featureId: number): Promise<MediaRow[]> {
  return ex.selectFrom("media").selectAll().where("feature_id", "=", featureId).orderBy("id").execute();
}

/** The stored blobs of every part of a feature's media (to delete once the rows are gone). */
export async function blobsOfFeature(ex: Executor, featureId: number): Promise<BlobRef[]> {
  const rows = await ex
    .selectFrom("media_parts")
    .innerJoin("media", "media.id", "media_parts.media_id")
    .select(["media_parts.blob_store as store", "media_parts.blob_key as key"])
    .where("media.feature_id", "=", featureId)
    .execute();
  return rows.map((r) => ({ store: r.store, key: r.key }));
}
