import type { Insertable, Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { MediaDownloadsTable } from "../../db/schema.js";

/** A counted download of a file with a download limit (ADR 0021). */
export type MediaDownloadRow = Selectable<MediaDownloadsTable>;

/** Records a counted download. */
export async function insertDownload(ex: Executor, values: Insertable<MediaDownloadsTable>): Promise<void> {
  await ex.insertInto("media_downloads").values(values).execute();
}

/** The latest download of `mediaId` by `downloader` still in its grace period at `now`, if any. */
export async function findOpenDownload(
  ex: Executor,
  mediaId: number,
  downloader: string,
  now: string,
): Promise<MediaDownloadRow | undefined> {
  return ex
    .selectFrom("media_downloads")
    .selectAll()
    .where("media_id", "=", mediaId)
    .where("downloader", "=", downloader)
    .where("grace_until", ">", now)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * Sets the lease of a resume of download `id` to `until`, only while its grace period lasts at
 * `now`. Returns whether it did (false: the grace period is over).
 */
export async function leaseResume(ex: Executor, id: number, until: string, now: string): Promise<boolean> {
  const res = await ex
    .updateTable("media_downloads")
    .set({ resuming_until: until, updated: now })
    .where("id", "=", id)
    .where("grace_until", ">", now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Extends the lease of a resume in progress (a heartbeat). */
export async function extendResume(ex: Executor, id: number, until: string): Promise<void> {
  await ex.updateTable("media_downloads").set({ resuming_until: until }).where("id", "=", id).execute();
}

/** Marks download `id` complete: a transfer of it released every byte up to the last. */
export async function markDownloadComplete(ex: Executor, id: number, now: string): Promise<void> {
  await ex.updateTable("media_downloads").set({ complete: 1, updated: now }).where("id", "=", id).execute();
}

/**
 * The latest time after `now` until which a download of `mediaId` may still be resumed or is being
 * resumed (its grace period, or the lease of a resume); undefined when none is.
 */
export async function downloadsHeldUntil(
  ex: Executor,
  mediaId: number,
  now: string,
): Promise<string | undefined> {
  const row = await ex
    .selectFrom("media_downloads")
    .select((eb) => [eb.fn.max("grace_until").as("grace"), eb.fn.max("resuming_until").as("resuming")])
    .where("media_id", "=", mediaId)
    .executeTakeFirst();
  const latest = [row?.grace, row?.resuming].filter((t): t is string => typeof t === "string" && t > now);
  return latest.sort().at(-1);
}
