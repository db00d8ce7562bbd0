/**
 * Downloads (docs/media.md, "Downloading"): the plaintext streams from the blob store through the
 * decrypting stream to the client, whole or a byte range. Files with a download limit (pull files:
 * once) follow download-limits.service.ts (ADR 0021).
 */
import { Readable, Transform } from "node:stream";
import { BlobStoreUnavailableError } from "../../adapters/blob-store/blob-store.js";
import { IntegrityError } from "../../crypto/integrity-error.js";
import { AppError, notFound, storageUnavailable } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import {
  DownloadLimitService,
  goneError,
  type Transfer,
  writeDownloadAudit,
} from "./download-limits.service.js";
import { type CallMeta, type Downloader, type MediaDeps, unwrapKey } from "./media.context.js";
import { countDownload, findMedia, findMediaById, listParts, type MediaRow } from "./media.repository.js";
import { type ByteRange, primeStream, readPlaintext } from "./media.streams.js";
import { contentDisposition, parseMediaType } from "./media.validation.js";

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
   * connection. Counts the download (a limited file's grace period starts), or records a resume;
   * writes ABB-0010. Never throws (failures are logged).
   */
  settle(complete: boolean): Promise<void>;
}

/** Streaming downloads of media for owners (API) and recipients (push files on their page). */
export class MediaDownloadService {
  /** The rules of files with a download limit; its `endGrace` runs the grace period's end. */
  readonly limits: DownloadLimitService;

  constructor(private readonly deps: MediaDeps) {
    this.limits = new DownloadLimitService(deps);
  }

  /**
   * Opens a download. Throws 404 (absent, another account's), 409 (still uploading, or a concurrent
   * new download holds the claim), 410 (removed, or downloaded as often as allowed and not this
   * downloader's to resume), 416 (range outside the file), 500 (the stored data failed its
   * integrity check before any byte was sent). A HEAD call (`meta.method`) gets the same status
   * and headers with an empty body, and nothing is claimed, counted or recorded.
   */
  async open(
    downloader: Downloader,
    rawId: string | number,
    options: DownloadOptions,
    meta: CallMeta = {},
  ): Promise<Download> {
    const media = await this.#find(downloader, rawId);
    if (media.state === "removed") throw goneError(media);
    if (media.state !== "available") {
      throw new AppError(
        "CONFLICT",
        `The file is still uploading: ${media.received_chunks} of ${media.total_chunks} chunks received.`,
      );
    }
    const size = Number(media.bytes);
    const etag = `"${media.sha256}"`;
    const requestedRange = () => parseRange(options, etag, size);
    if (meta.method === "HEAD") {
      // The answer a GET would get, with nothing claimed, counted or recorded.
      const range = countsAgainstLimit(media, downloader)
        ? await this.limits.preview(media, downloader, requestedRange)
        : requestedRange();
      return {
        status: range ? 206 : 200,
        headers: downloadHeaders(media, range),
        body: Readable.from([]),
        settle: async () => {},
      };
    }
    const transfer = await this.#begin(media, downloader, meta, requestedRange);
    const { range } = transfer;
    let body: Readable;
    try {
      const parts = await listParts(this.deps.database.db, media.id);
      const dek = unwrapKey(this.deps.keyRing, media.wrapped_key);
      body = await primeStream(readPlaintext(this.deps.blobStore, dek, parts, range));
    } catch (error) {
      await transfer.abandon();
      if (error instanceof AppError) throw error;
      if (error instanceof BlobStoreUnavailableError) {
        this.deps.logger.warn({ err: error.message, mediaId: media.id }, "file storage unavailable");
        throw storageUnavailable();
      }
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
    const headers = downloadHeaders(media, range);
    let recorded: Promise<void> | undefined;
    const record = (complete: boolean) => {
      recorded ??= transfer.record(complete);
      return recorded;
    };
    // If recording fails, the stream errors and the client sees a short body; the claim is freed.
    if (transfer.recordBeforeLastChunk)
      body = commitBeforeLastChunk(body, () =>
        record(true).catch(async (err) => {
          await transfer.abandon();
          throw err;
        }),
      );
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
    if (downloader.featureId !== undefined || media.feature_id !== null) {
      if (media.feature_id !== downloader.featureId) throw notFound("Media");
      await this.deps.features.checkDownload(db, media.feature_id, downloader.recipientId ?? 0);
      return media;
    }
    const request = await this.deps.targets.findForMedia(db, media.request_id);
    const now = toTimestamp(this.deps.clock.now());
    if (request?.type !== "push" || request.is_draft) throw notFound("Media");
    if (request.is_expired || (request.expires_at !== null && request.expires_at <= now)) {
      throw new AppError("GONE", "This request has expired; its files were removed.");
    }
    return media;
  }

  /**
   * Decides how this response goes: a file without a limit (or the owner's own file, whose limit is
   * the recipients') is sent as asked; a limited one as its download limits allow
   * (`DownloadLimitService.begin`).
   */
  async #begin(
    media: MediaRow,
    downloader: Downloader,
    meta: CallMeta,
    requestedRange: () => ByteRange | undefined,
  ): Promise<Transfer> {
    if (countsAgainstLimit(media, downloader))
      return this.limits.begin(media, downloader, meta, requestedRange);
    const range = requestedRange();
    return {
      range,
      recordBeforeLastChunk: false,
      record: (complete) => this.#recordUnlimited(media, downloader, meta, range, complete),
      abandon: async () => {},
    };
  }

  /**
   * The end of a download outside any limit: a complete whole transfer counts, unless it is the
   * owner's download of their own file (recorded in ABB-0010 only: `times_downloaded` is the
   * recipients' count, which their limit and the completion of a push feature read).
   */
  async #recordUnlimited(
    media: MediaRow,
    downloader: Downloader,
    meta: CallMeta,
    range: ByteRange | undefined,
    complete: boolean,
  ): Promise<void> {
    const { database, clock } = this.deps;
    await database.db.transaction().execute(async (trx) => {
      let value = complete ? "complete" : "incomplete: the transfer was interrupted";
      if (range) value = `${complete ? "complete" : "incomplete"} range bytes=${range.start}-${range.end}`;
      if (isOwnFile(media, downloader)) value += "; the owner's own file, not counted";
      else if (complete && !range) await countDownload(trx, media.id, toTimestamp(clock.now()));
      await writeDownloadAudit(this.deps.audit, trx, media, downloader, meta, value);
    });
  }
}

/**
 * Passes `source` through, holding back its last chunk until `commit` resolves (then sends it); a
 * failed commit errors the stream instead. Used for new downloads of limited files.
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
  // `pipe` leaves the source alone when `out` closes early (the client went away): it would stay
  // paused, its stored file open, until garbage collection.
  out.once("close", () => source.destroy());
  return source.pipe(out);
}

/** True for the owner's download of a file the owner uploaded (a push file): the recipients' limit does not apply. */
function isOwnFile(media: MediaRow, downloader: Downloader): boolean {
  return downloader.kind === "owner" && media.uploaded_by === "owner";
}

/**
 * True when a download of `media` by `downloader` is claimed and counted against the file's limit:
 * a limited file, downloaded by the party the limit is for (the owner for the files recipients
 * upload, recipients for the owner's files).
 */
function countsAgainstLimit(media: MediaRow, downloader: Downloader): boolean {
  return media.max_allowed_times_downloaded !== null && !isOwnFile(media, downloader);
}

/** The headers of a download of `media`, whole or of `range`. */
function downloadHeaders(media: MediaRow, range: ByteRange | undefined): Record<string, string> {
  const size = Number(media.bytes);
  const headers: Record<string, string> = {
    "content-type": safeContentType(media.content_type),
    "content-disposition": contentDisposition(media.name),
    "x-content-type-options": "nosniff",
    "cache-control": "private, no-store",
    etag: `"${media.sha256}"`,
    "accept-ranges": "bytes",
    "content-length": String(range ? range.end - range.start + 1 : size),
  };
  if (range) headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
  return headers;
}

/** The stored media type when well-formed, else application/octet-stream. */
function safeContentType(stored: string): string {
  return parseMediaType(stored) ?? "application/octet-stream";
}

/**
 * Parses a single `bytes=` range against a file of `size` bytes. Returns undefined to serve the
 * whole file (no header, several ranges, unparseable, or an If-Range that does not match `etag`);
 * throws 416 when the range lies outside the file.
 */
function parseRange(options: DownloadOptions, etag: string, size: number): ByteRange | undefined {
  const { range: header, ifRange } = options;
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
