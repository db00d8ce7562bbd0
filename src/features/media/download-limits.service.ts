/**
 * Download limits (ADR 0021): files with a download limit (pull files: once) are claimed
 * atomically by a new download, which is counted when its transfer ends, complete or cut. For
 * DOWNLOAD_GRACE_SECONDS its downloader may then resume it with Range as the same download; at the
 * limit the file is destroyed when that period ends (`media.download_grace_end`).
 */
import { randomToken } from "../../crypto/hashing.js";
import type { Executor } from "../../db/database.js";
import { AppError } from "../../shared/errors.js";
import { addSeconds, parseTimestamp, toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import { type CallMeta, type Downloader, enqueueBlobDeletion, type MediaDeps } from "./media.context.js";
import { EndDownloadGraceJob } from "./media.jobs.js";
import {
  claimDownload,
  deleteParts,
  extendClaim,
  findMediaById,
  lockMedia,
  type MediaRow,
  releaseClaim,
  updateMedia,
} from "./media.repository.js";
import type { ByteRange } from "./media.streams.js";
import {
  downloadsHeldUntil,
  extendResume,
  findOpenDownload,
  insertDownload,
  leaseResume,
  type MediaDownloadRow,
  markDownloadComplete,
} from "./media-downloads.repository.js";

/**
 * How long a claim (a new download of a limited file) or a resume lease lasts without a heartbeat,
 * and how often a live transfer renews it.
 */
const LEASE_MS = 120_000;
const HEARTBEAT_MS = 30_000;

/** How one response of a download goes, once it was allowed. */
export interface Transfer {
  /** The byte range sent (undefined: the whole file). */
  range: ByteRange | undefined;
  /**
   * True for a new download of a limited file: its outcome is committed before the last chunk is
   * released, so a client holding every byte never sees a 409 from a download still being recorded.
   */
  recordBeforeLastChunk: boolean;
  /** Records the outcome; called once. */
  record(complete: boolean): Promise<void>;
  /** Undoes the start when nothing could be sent. */
  abandon(): Promise<void>;
}

/** Claims, resumes, counting and the end of the grace period of files with a download limit. */
export class DownloadLimitService {
  constructor(private readonly deps: MediaDeps) {}

  /**
   * How a download of limited file `media` goes: a resume of the downloader's download still in
   * its grace period (a Range, or the whole file again while no transfer of it completed), else a
   * new download — claimed, counted when it ends, and always sent whole (`requestedRange` is not
   * even read then). Throws 409 or 410 as `claim` says.
   */
  async begin(
    media: MediaRow,
    downloader: Downloader,
    meta: CallMeta,
    requestedRange: () => ByteRange | undefined,
  ): Promise<Transfer> {
    const now = toTimestamp(this.deps.clock.now());
    const open = await findOpenDownload(this.deps.database.db, media.id, downloaderKey(downloader), now);
    const range = open ? requestedRange() : undefined;
    if (open && (range || !open.complete)) {
      const stop = await this.#leaseResume(media, open);
      if (stop) {
        return {
          range,
          recordBeforeLastChunk: false,
          record: async (complete) => {
            stop();
            await this.#recordResume(media, downloader, meta, open, range, complete);
          },
          abandon: async () => stop(),
        };
      }
    }
    // A whole download asked for again after a complete one is a new download.
    const claim = await this.#claim(media, open?.complete && !range ? open.grace_until : undefined);
    return {
      range: undefined,
      recordBeforeLastChunk: true,
      record: async (complete) => {
        claim.stop();
        await this.#recordDownload(media, downloader, meta, claim.token, complete);
      },
      abandon: async () => {
        claim.stop();
        await this.#release(media.id, claim.token);
      },
    };
  }

  /**
   * What `begin` would answer, without claiming, leasing or recording anything (a HEAD request): the
   * range a resume would send (undefined: the whole file). Throws the 409 or 410 a GET would get.
   */
  async preview(
    media: MediaRow,
    downloader: Downloader,
    requestedRange: () => ByteRange | undefined,
  ): Promise<ByteRange | undefined> {
    const now = toTimestamp(this.deps.clock.now());
    const open = await findOpenDownload(this.deps.database.db, media.id, downloaderKey(downloader), now);
    const range = open ? requestedRange() : undefined;
    if (open && (range || !open.complete)) return range;
    const max = media.max_allowed_times_downloaded;
    if (max !== null && media.times_downloaded >= max)
      throw goneError(media, open?.complete && !range ? open.grace_until : undefined);
    if (media.download_claimed_until !== null && media.download_claimed_until >= now) throw claimedError();
    return undefined;
  }

  /**
   * The grace period of a file at its download limit ended (the `media.download_grace_end` job):
   * destroys the file — blobs queued for deletion, data key gone, state `removed`, ABA-0020 — unless
   * a download of it may still be resumed or is being resumed, in which case it runs again then.
   * Idempotent: a file already removed or deleted is left alone.
   */
  async endGrace(mediaId: number): Promise<void> {
    const { database, jobs, clock, audit } = this.deps;
    await database.db.transaction().execute(async (trx) => {
      const media = await lockMedia(trx, mediaId, database.dialect === "postgres");
      const max = media?.max_allowed_times_downloaded ?? null;
      if (media?.state !== "available" || max === null || media.times_downloaded < max) return;
      const now = toTimestamp(clock.now());
      // A live claim cannot exist at the limit; it is honoured all the same.
      const held = [await downloadsHeldUntil(trx, mediaId, now), media.download_claimed_until]
        .filter((t): t is string => typeof t === "string" && t > now)
        .sort()
        .at(-1);
      if (held) {
        await jobs.enqueue(trx, EndDownloadGraceJob, { mediaId }, { runAt: parseTimestamp(held) });
        return;
      }
      const blobs = await deleteParts(trx, mediaId);
      await updateMedia(trx, mediaId, {
        state: "removed",
        wrapped_key: null,
        removed_at: now,
        download_claim_token: null,
        download_claimed_until: null,
        updated: now,
      });
      await enqueueBlobDeletion(jobs, trx, blobs);
      await audit.write(trx, {
        accountId: media.account_id,
        code: AuditCode.ENTITY_DELETED,
        relatedModel: "media",
        relationKey: mediaId,
        value: `media destroyed: downloaded ${media.times_downloaded} time(s), the most allowed, and the time to resume the download ended`,
      });
    });
  }

  /**
   * Takes the claim of a new download. Throws 410 when the file was downloaded as often as allowed
   * (telling a downloader that may resume until when: `resumableUntil`), 409 while another download
   * holds the claim.
   */
  async #claim(
    media: MediaRow,
    resumableUntil: string | undefined,
  ): Promise<{ token: string; stop(): void }> {
    const { db } = this.deps.database;
    const token = randomToken(18);
    const now = this.deps.clock.now();
    const taken = await claimDownload(db, media.id, {
      token,
      until: toTimestamp(new Date(now.getTime() + LEASE_MS)),
      now: toTimestamp(now),
    });
    if (!taken) {
      const fresh = (await findMediaById(db, media.id)) ?? media;
      if (fresh.state === "removed") throw goneError(fresh);
      if (
        fresh.max_allowed_times_downloaded !== null &&
        fresh.times_downloaded >= fresh.max_allowed_times_downloaded
      ) {
        throw goneError(fresh, resumableUntil);
      }
      throw claimedError();
    }
    const stop = this.#heartbeat(media.id, (until) => extendClaim(db, media.id, token, until));
    return { token, stop };
  }

  /**
   * Takes the lease of a resume of `download` (several may run at once), unless the file was
   * removed or the grace period is over. Returns the function that stops renewing it, or undefined.
   */
  async #leaseResume(media: MediaRow, download: MediaDownloadRow): Promise<(() => void) | undefined> {
    const { database, clock } = this.deps;
    // Under the media row's lock, like endGrace: a resume either starts before the file is
    // destroyed (which then waits for its lease) or finds it removed.
    const leased = await database.db.transaction().execute(async (trx) => {
      const locked = await lockMedia(trx, media.id, database.dialect === "postgres");
      if (locked?.state !== "available") return false;
      const now = clock.now();
      return leaseResume(trx, download.id, toTimestamp(new Date(now.getTime() + LEASE_MS)), toTimestamp(now));
    });
    if (!leased) {
      const fresh = await findMediaById(database.db, media.id);
      if (!fresh || fresh.state === "removed") throw goneError(fresh ?? media);
      return undefined;
    }
    return this.#heartbeat(media.id, (until) => extendResume(database.db, download.id, until));
  }

  /** Renews a lease every HEARTBEAT_MS while a transfer streams; returns the function that stops it. */
  #heartbeat(mediaId: number, renew: (until: string) => Promise<unknown>): () => void {
    const timer = setInterval(() => {
      renew(toTimestamp(new Date(this.deps.clock.now().getTime() + LEASE_MS))).catch((err: Error) =>
        this.deps.logger.warn({ err: err.message, mediaId }, "could not extend a download lease"),
      );
    }, HEARTBEAT_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  async #release(mediaId: number, token: string): Promise<void> {
    await releaseClaim(this.deps.database.db, mediaId, token).catch((err: Error) =>
      this.deps.logger.warn(
        { err: err.message, mediaId },
        "could not release a download claim; its lease will run out",
      ),
    );
  }

  /**
   * The end of a new download of a limited file, complete or cut: counts it, records it with its
   * grace period, frees the claim and, at the limit, queues the file's destruction for the end of
   * that period — all with its ABB-0010 entry. A claim lost meanwhile (its lease ran out and
   * another download took it) is not counted.
   */
  async #recordDownload(
    media: MediaRow,
    downloader: Downloader,
    meta: CallMeta,
    claimToken: string,
    complete: boolean,
  ): Promise<void> {
    const { database, jobs, clock, config } = this.deps;
    await database.db.transaction().execute(async (trx) => {
      const at = clock.now();
      const now = toTimestamp(at);
      let value = complete ? "complete" : "partial: the transfer was interrupted";
      const locked = await lockMedia(trx, media.id, database.dialect === "postgres");
      if (locked && locked.download_claim_token === claimToken) {
        const times = locked.times_downloaded + 1;
        const max = locked.max_allowed_times_downloaded ?? Number.POSITIVE_INFINITY;
        const graceEnd = addSeconds(at, config.DOWNLOAD_GRACE_SECONDS);
        await updateMedia(trx, media.id, {
          times_downloaded: times,
          download_claim_token: null,
          download_claimed_until: null,
          updated: now,
        });
        await insertDownload(trx, {
          account_id: media.account_id,
          media_id: media.id,
          downloader: downloaderKey(downloader),
          complete: complete ? 1 : 0,
          grace_until: toTimestamp(graceEnd),
          resuming_until: null,
          created: now,
          updated: now,
        });
        if (times >= max)
          await jobs.enqueue(trx, EndDownloadGraceJob, { mediaId: media.id }, { runAt: graceEnd });
        value += `; counted as download ${times} of ${max}; resumable until ${toTimestamp(graceEnd)}`;
      }
      await writeDownloadAudit(this.deps.audit, trx, media, downloader, meta, value);
    });
  }

  /** The end of a resume: not counted; a transfer up to the last byte marks the download complete. */
  async #recordResume(
    media: MediaRow,
    downloader: Downloader,
    meta: CallMeta,
    download: MediaDownloadRow,
    range: ByteRange | undefined,
    complete: boolean,
  ): Promise<void> {
    const { database, clock } = this.deps;
    await database.db.transaction().execute(async (trx) => {
      const reachedEnd = !range || range.end === Number(media.bytes) - 1;
      if (complete && reachedEnd && !download.complete)
        await markDownloadComplete(trx, download.id, toTimestamp(clock.now()));
      const what = range ? `range bytes=${range.start}-${range.end}` : "whole file";
      await writeDownloadAudit(
        this.deps.audit,
        trx,
        media,
        downloader,
        meta,
        `resumed ${what} ${complete ? "complete" : "partial"}`,
      );
    });
  }
}

/** Writes the ABB-0010 entry of a download in `trx`: `<owner|recipient> download <value>`. */
export async function writeDownloadAudit(
  audit: AuditWriter,
  trx: Executor,
  media: MediaRow,
  downloader: Downloader,
  meta: CallMeta,
  value: string,
): Promise<void> {
  await audit.write(trx, {
    accountId: media.account_id,
    code: AuditCode.MEDIA_DOWNLOADED,
    apiKeyId: downloader.kind === "owner" ? downloader.applicationId : null,
    relatedModel: "media",
    relationKey: media.id,
    value: `${downloader.kind === "owner" ? "owner" : "recipient"} download ${value}`,
    from: meta.ip,
    method: meta.method,
    path: meta.path,
    contentType: meta.contentType,
  });
}

/** Who a download of a limited file belongs to: the owner's API key, or the recipient's request. */
function downloaderKey(downloader: Downloader): string {
  return downloader.kind === "owner"
    ? `application:${downloader.applicationId}`
    : `recipient:${downloader.requestId}`;
}

/** 409 while another new download of a limited file holds its claim. */
function claimedError(): AppError {
  return new AppError(
    "CONFLICT",
    "This file can be downloaded once and another download of it is in progress. Try again if that download fails.",
  );
}

/**
 * 410 for a removed file, or one downloaded as often as allowed; `resumableUntil` (the asking
 * downloader's grace period) tells it how to get bytes it missed.
 */
export function goneError(media: MediaRow, resumableUntil?: string): AppError {
  const max = media.max_allowed_times_downloaded;
  let why = "it was removed";
  if (max !== null && media.times_downloaded >= max) {
    why = `it was downloaded ${media.times_downloaded} time(s), the most allowed`;
    if (media.state === "removed") why += ", and then destroyed";
  }
  const resume = resumableUntil
    ? ` The client that downloaded it may fetch missing bytes with a Range request until ${resumableUntil}.`
    : "";
  return new AppError("GONE", `The file is no longer available: ${why}.${resume}`);
}
