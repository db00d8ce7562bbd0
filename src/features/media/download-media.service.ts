/**
 * Downloads (DESIGN §3): the plaintext streams from the blob store through the decrypting stream to
 * the client, whole or a byte range. Files with a download limit (pull files: once) are claimed
 * atomically first; a complete transfer counts and, at the limit, destroys the blobs and the data
 * key; a broken one releases the claim.
 */
import { type Readable, Transform } from "node:stream";
import { randomToken } from "../../crypto/hashing.js";
import { IntegrityError } from "../../crypto/integrity-error.js";
import { AppError, notFound } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/audit.writer.js";
import {
  type CallMeta,
  type Downloader,
  enqueueBlobDeletion,
  type MediaDeps,
  unwrapKey,
} from "./media.context.js";
import {
  claimDownload,
  countDownload,
  deleteParts,
  extendClaim,
  findMedia,
  findMediaById,
  findRequestForMedia,
  listParts,
  lockMedia,
  type MediaRow,
  releaseClaim,
  updateMedia,
} from "./media.repository.js";
import { type ByteRange, primeStream, readPlaintext } from "./media.streams.js";
import { contentDisposition, parseMediaType } from "./media.validation.js";

/** How long a download-once claim lasts without a heartbeat, and how often a live transfer renews it. */
const CLAIM_LEASE_MS = 120_000;
const CLAIM_HEARTBEAT_MS = 30_000;

/** Conditions of a download request (from the HTTP headers). */
export interface DownloadOptions {
  /** The `Range` header, if any. */
  range?: string | undefined;
  /** The `If-Range` header, if any: the range applies only while it matches the ETag. */
  ifRange?: string | undefined;
}

/** A download ready to send: status, headers, the body, and `settle` to call when the response ends. */
export interface Download {
  status: 200 | 206;
  headers: Record<string, string>;
  body: Readable;
  /**
   * Records the outcome once the response is over: `complete` when every byte was handed to the
   * connection. Counts the download, destroys a download-once file, or releases its claim; writes
   * ABB-0010. Never throws (failures are logged).
   */
  settle(complete: boolean): Promise<void>;
}

/** Streaming downloads of media for owners (API) and recipients (push files on their page). */
export class MediaDownloadService {
  constructor(private readonly deps: MediaDeps) {}

  /**
   * Opens a download. Throws 404 (absent, another account's), 409 (still uploading, or a concurrent
   * download holds the claim), 410 (removed, or downloaded as often as allowed), 416 (range outside
   * the file), 500 (the stored data failed its integrity check before any byte was sent).
   */
  async open(
    downloader: Downloader,
    rawId: string | number,
    options: DownloadOptions,
    meta: CallMeta = {},
  ): Promise<Download> {
    const media = await this.#find(downloader, rawId);
    if (media.state === "removed") throw removedError(media);
    if (media.state !== "available") {
      throw new AppError(
        "CONFLICT",
        `The file is still uploading: ${media.received_chunks} of ${media.total_chunks} chunks received.`,
      );
    }
    const size = Number(media.bytes);
    const etag = `"${media.sha256}"`;
    const limited = media.max_allowed_times_downloaded !== null;
    // A limited file is only ever sent whole, so a completed transfer is unambiguous.
    const range = limited ? undefined : parseRange(options.range, options.ifRange, etag, size);
    const claim = limited ? await this.#claim(media) : undefined;
    let body: Readable;
    try {
      const parts = await listParts(this.deps.database.db, media.id);
      const dek = unwrapKey(this.deps.keyRing, media.wrapped_key);
      body = await primeStream(readPlaintext(this.deps.blobStore, dek, parts, range));
    } catch (error) {
      if (claim) await this.#release(media.id, claim.token);
      claim?.stop();
      if (error instanceof AppError) throw error;
      this.deps.logger.error({ err: error, mediaId: media.id }, "media download failed before sending");
      throw new AppError(
        "INTERNAL_SERVER_ERROR",
        error instanceof IntegrityError
          ? "The stored file failed its integrity check; nothing was sent. The operator has been alerted in the logs."
          : "The stored file could not be read; nothing was sent.",
      );
    }
    body.on("error", (err) => {
      this.deps.logger.error(
        { err, mediaId: media.id },
        "media download aborted: stored data failed to read or verify",
      );
    });
    const headers: Record<string, string> = {
      "content-type": safeContentType(media.content_type),
      "content-disposition": contentDisposition(media.name),
      "x-content-type-options": "nosniff",
      "cache-control": "private, no-store",
      etag,
      "accept-ranges": limited ? "none" : "bytes",
      "content-length": String(range ? range.end - range.start + 1 : size),
    };
    if (range) headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
    let settled = false;
    const record = async (complete: boolean): Promise<void> => {
      if (settled) return;
      settled = true;
      claim?.stop();
      await this.#settle(media, downloader, meta, { complete, range, claimToken: claim?.token });
    };
    if (claim) {
      // A limited file counts as downloaded before its last bytes leave: once the client holds the
      // whole file, the file is already consumed, so a second download gets 410, never a 409 race.
      // If recording fails, the stream errors and the client sees a short body; the claim is freed.
      body = commitBeforeLastChunk(body, () =>
        record(true).catch(async (err) => {
          await this.#release(media.id, claim.token);
          throw err;
        }),
      );
    }
    return {
      status: range ? 206 : 200,
      headers,
      body,
      settle: async (complete) => {
        try {
          await record(complete);
        } catch (err) {
          this.deps.logger.error({ err, mediaId: media.id }, "could not record the end of a download");
        }
      },
    };
  }

  async #find(downloader: Downloader, rawId: string | number): Promise<MediaRow> {
    const id = parseId(rawId);
    if (id === undefined) throw notFound("Media");
    const { db } = this.deps.database;
    if (downloader.kind === "owner") {
      const media = await findMedia(db, downloader.accountId, id);
      if (!media) throw notFound("Media");
      return media;
    }
    const media = await findMediaById(db, id);
    if (!media || media.request_id !== downloader.requestId || media.uploaded_by !== "owner")
      throw notFound("Media");
    const request = await findRequestForMedia(db, media.request_id);
    const now = toTimestamp(this.deps.clock.now());
    if (request?.type !== "push" || request.is_draft) throw notFound("Media");
    if (request.is_expired || (request.expires_at !== null && request.expires_at <= now)) {
      throw new AppError("GONE", "This request has expired; its files were removed.");
    }
    return media;
  }

  async #claim(media: MediaRow): Promise<{ token: string; stop(): void }> {
    const { db } = this.deps.database;
    const token = randomToken(18);
    const now = this.deps.clock.now();
    const taken = await claimDownload(db, media.id, {
      token,
      until: toTimestamp(new Date(now.getTime() + CLAIM_LEASE_MS)),
      now: toTimestamp(now),
    });
    if (!taken) {
      const fresh = (await findMediaById(db, media.id)) ?? media;
      if (fresh.state === "removed") throw removedError(fresh);
      if (
        fresh.max_allowed_times_downloaded !== null &&
        fresh.times_downloaded >= fresh.max_allowed_times_downloaded
      ) {
        throw removedError(fresh);
      }
      throw new AppError(
        "CONFLICT",
        "This file can be downloaded once and another download of it is in progress. Try again if that download fails.",
      );
    }
    const timer = setInterval(() => {
      const until = toTimestamp(new Date(this.deps.clock.now().getTime() + CLAIM_LEASE_MS));
      extendClaim(db, media.id, token, until).catch((err: Error) =>
        this.deps.logger.warn({ err: err.message, mediaId: media.id }, "could not extend a download claim"),
      );
    }, CLAIM_HEARTBEAT_MS);
    timer.unref();
    return { token, stop: () => clearInterval(timer) };
  }

  async #release(mediaId: number, token: string): Promise<void> {
    await releaseClaim(this.deps.database.db, mediaId, token).catch((err: Error) =>
      this.deps.logger.warn(
        { err: err.message, mediaId },
        "could not release a download claim; its lease will run out",
      ),
    );
  }

  async #settle(
    media: MediaRow,
    downloader: Downloader,
    meta: CallMeta,
    outcome: { complete: boolean; range: ByteRange | undefined; claimToken: string | undefined },
  ): Promise<void> {
    const { database, audit, jobs, clock } = this.deps;
    await database.db.transaction().execute(async (trx) => {
      const now = toTimestamp(clock.now());
      let value = outcome.complete ? "complete" : "incomplete: the transfer was interrupted";
      if (outcome.range)
        value = `${outcome.complete ? "complete" : "incomplete"} range bytes=${outcome.range.start}-${outcome.range.end}`;
      if (outcome.claimToken) {
        const locked = await lockMedia(trx, media.id, database.dialect === "postgres");
        const ours = locked?.download_claim_token === outcome.claimToken;
        if (!outcome.complete || !locked || !ours) {
          if (ours) await releaseClaim(trx, media.id, outcome.claimToken);
        } else {
          const times = locked.times_downloaded + 1;
          const max = locked.max_allowed_times_downloaded ?? Number.POSITIVE_INFINITY;
          if (times >= max) {
            const blobs = await deleteParts(trx, media.id);
            await updateMedia(trx, media.id, {
              times_downloaded: times,
              state: "removed",
              wrapped_key: null,
              removed_at: now,
              download_claim_token: null,
              download_claimed_until: null,
              updated: now,
            });
            await enqueueBlobDeletion(jobs, trx, blobs);
            value = "complete; the file reached its download limit and was destroyed";
          } else {
            await updateMedia(trx, media.id, {
              times_downloaded: times,
              download_claim_token: null,
              download_claimed_until: null,
              updated: now,
            });
          }
        }
      } else if (outcome.complete && !outcome.range) {
        await countDownload(trx, media.id, now);
      }
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
    });
  }
}

/**
 * Passes `source` through, holding back its last chunk until `commit` resolves (then sends it); a
 * failed commit errors the stream instead. Used for download-limited files.
 */
function commitBeforeLastChunk(source: Readable, commit: () => Promise<void>): Readable {
  let held: Buffer | undefined;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const previous = held;
      held = chunk;
      callback(null, previous);
    },
    flush(callback) {
      commit().then(
        () => callback(null, held),
        (err: Error) => callback(err),
      );
    },
  });
  source.on("error", (err) => out.destroy(err));
  return source.pipe(out);
}

function removedError(media: MediaRow): AppError {
  const why =
    media.max_allowed_times_downloaded !== null &&
    media.times_downloaded >= media.max_allowed_times_downloaded
      ? `it was downloaded ${media.times_downloaded} time(s), the most allowed, and then destroyed`
      : "it was removed";
  return new AppError("GONE", `The file is no longer available: ${why}.`);
}

/** The stored media type when well-formed, else application/octet-stream. */
function safeContentType(stored: string): string {
  return parseMediaType(stored) ?? "application/octet-stream";
}

/**
 * Parses a single `bytes=` range against a file of `size` bytes. Returns undefined to serve the
 * whole file (no header, several ranges, unparseable, or an If-Range that does not match); throws
 * 416 when the range lies outside the file.
 */
export function parseRange(
  header: string | undefined,
  ifRange: string | undefined,
  etag: string,
  size: number,
): ByteRange | undefined {
  if (!header) return undefined;
  if (ifRange !== undefined && ifRange.trim() !== etag) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, first, last] = match;
  let start: number;
  let end: number;
  if (first === "" && last === "") return undefined;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) throw unsatisfiable(size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(first);
    end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
    if (last !== "" && Number(last) < start) return undefined;
  }
  if (start >= size || size === 0) throw unsatisfiable(size);
  return { start, end };
}

function unsatisfiable(size: number): AppError {
  return new AppError("RANGE_NOT_SATISFIABLE", `The requested range is outside the file of ${size} bytes.`, {
    "content-range": `bytes */${size}`,
  });
}
