/**
 * Uploads (DESIGN §3): a whole file or the first chunk by POST, further chunks by PUT, for the owner
 * (draft push requests) and for the recipient of an open pull request. Bytes stream from the body
 * through the meter (limit, digests) and the encrypting stream into the blob store; the rows are
 * written once the blob is stored, so a crash leaves at most an orphan blob for the cleanup job.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { generateDataKey } from "../../crypto/envelope.js";
import { AppError, notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { parseId, randomId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/audit.writer.js";
import {
  type CallMeta,
  enqueueBlobDeletion,
  type MediaDeps,
  type Uploader,
  type UploadPart,
  unwrapKey,
  wrapKey,
} from "./media.context.js";
import {
  findMedia,
  findMediaById,
  findRequestForMedia,
  insertMedia,
  listParts,
  lockMedia,
  type MediaRow,
  markAvailable,
  partTotals,
  type RequestForMedia,
  storageUsed,
  updateMedia,
  upsertPart,
} from "./media.repository.js";
import {
  bufferUpTo,
  type Digests,
  newDigests,
  type PlaintextDigest,
  readPlaintext,
  type StoredPart,
  storeEncryptedPart,
  UploadMeter,
} from "./media.streams.js";
import {
  extensionOf,
  MAX_TOTAL_CHUNKS,
  parseMediaType,
  parsePositiveInt,
  sanitizeFileName,
} from "./media.validation.js";
import type { DigestLease } from "./media-digest-cache.js";

const TEXT_PART_LIMIT = 64 * 1024;

/** The file part of an upload once read: stored already, or buffered until its chunk number is known. */
interface ReceivedFile {
  filename?: string | undefined;
  mimetype?: string | undefined;
  stored?: StoredPart;
  /** Part number `stored` was encrypted as before the fields said which it is. */
  assumedIndex?: number;
  pieces?: Buffer[];
  digests?: Digests;
  lease?: DigestLease | undefined;
}

/** Uploads of media: create (whole file or first chunk) and put further chunks. */
export class MediaUploadService {
  constructor(private readonly deps: MediaDeps) {}

  /**
   * POST /v1/media/ and the recipient's upload: reads `parts` (fields and one `file`), stores the
   * encrypted bytes and creates the media. Throws ValidationError (400), 404 for a request that is
   * absent or another account's, 422 for a request that does not take files from this uploader,
   * 413 over a size limit, 422 over the storage quota.
   */
  async create(uploader: Uploader, parts: AsyncIterable<UploadPart>, meta: CallMeta = {}): Promise<MediaRow> {
    const { config } = this.deps;
    const dek = generateDataKey();
    const fields: Record<string, string> = {};
    let file: ReceivedFile | undefined;
    let request: RequestForMedia | undefined;
    try {
      for await (const part of parts) {
        if (part.kind === "field") {
          fields[part.name] ??= part.value;
          continue;
        }
        if (part.field !== "file") {
          fields[part.field] ??= await readText(part.stream, part.field);
          continue;
        }
        if (file) throw ValidationError.field("file", "Send one file per request.");
        file = { filename: part.filename, mimetype: part.mimetype };
        request = await this.#earlyTarget(uploader, fields);
        const total = parsePositiveInt(fields.total_chunks);
        const current = parsePositiveInt(fields.current_chunk);
        if (current !== undefined) {
          checkChunkNumbers(total ?? 1, current);
          const limit = await this.#limit(uploader, request, (total ?? 1) > 1);
          file.digests = current === 1 ? newDigests() : undefined;
          file.stored = await this.#store(dek, current, part.stream, limit, file.digests);
        } else {
          // The chunk number may still come after the file: hold a chunk-sized start in memory.
          const { pieces, rest } = await bufferUpTo(part.stream, config.MAX_CHUNK_BYTES);
          if (rest) {
            file.assumedIndex = 1;
            file.digests = newDigests();
            const limit = await this.#limit(uploader, request, false);
            file.stored = await this.#store(dek, 1, rest, limit, file.digests);
          } else {
            file.pieces = pieces;
          }
        }
      }
      if (!file) throw ValidationError.field("file", "No file was submitted.");
      const input = this.#readCreateFields(uploader, fields, file);
      request ??= await this.#target(uploader, input.requestId);
      if (file.stored && file.assumedIndex !== undefined && (input.current !== 1 || input.total > 1)) {
        throw chunkTooLarge(config.MAX_CHUNK_BYTES);
      }
      if (file.pieces) {
        file.digests = input.current === 1 ? newDigests() : undefined;
        const limit = await this.#limit(uploader, request, input.total > 1);
        const body = Readable.from(file.pieces.splice(0), { objectMode: false });
        file.stored = await this.#store(dek, input.current, body, limit, file.digests);
      }
      const stored = file.stored!;
      // Stored before the request was known: apply the request's own limit now.
      const limit = await this.#limit(uploader, request, input.total > 1);
      if (stored.plainBytes > limit.bytes) throw limit.error();
      const digest = input.total === 1 && file.digests ? await file.digests.digest() : undefined;
      const media = await this.#insert(uploader, request, input, stored, dek, digest, meta);
      if (input.total > 1 && input.current === 1 && file.digests) {
        this.deps.digests.adopt(media.id, file.digests, stored.key);
        file.digests = undefined;
      }
      return media;
    } catch (error) {
      file?.digests?.dispose();
      if (file?.stored) await this.#discard(file.stored.key);
      throw error;
    }
  }

  /**
   * PUT /v1/media/{id}: stores chunk `current_chunk` (replacing an earlier copy) and completes the
   * media once every chunk is present. Throws 404 (absent, another account's), 410 (removed), 422
   * (the request no longer takes files), 400 (bad chunk number), 413 (chunk or file too large).
   */
  async putChunk(
    uploader: Uploader,
    mediaId: string | number,
    parts: AsyncIterable<UploadPart>,
    meta: CallMeta = {},
  ): Promise<MediaRow> {
    const { config, database } = this.deps;
    const media = await this.#findForUploader(uploader, mediaId);
    if (media.state === "removed") throw new AppError("GONE", "The file was removed.");
    const request = await this.#target(uploader, media.request_id);
    const dek = unwrapKey(this.deps.keyRing, media.wrapped_key);
    const fields: Record<string, string> = {};
    let file: ReceivedFile | undefined;
    try {
      for await (const part of parts) {
        if (part.kind === "field") {
          fields[part.name] ??= part.value;
          continue;
        }
        if (part.field !== "file") {
          fields[part.field] ??= await readText(part.stream, part.field);
          continue;
        }
        if (file) throw ValidationError.field("file", "Send one file per request.");
        file = {};
        const current = parsePositiveInt(fields.current_chunk);
        if (current !== undefined) {
          checkChunkNumbers(media.total_chunks, current);
          file.lease = this.deps.digests.lease(media.id, current);
          const limit = await this.#limit(uploader, request, true);
          file.stored = await this.#store(dek, current, part.stream, limit, file.lease?.digests);
        } else {
          const { pieces, rest } = await bufferUpTo(part.stream, config.MAX_CHUNK_BYTES);
          if (rest) {
            rest.destroy();
            throw chunkTooLarge(config.MAX_CHUNK_BYTES);
          }
          file.pieces = pieces;
        }
      }
      if (!file) throw ValidationError.field("file", "No file was submitted.");
      const current = parsePositiveInt(fields.current_chunk);
      if (current === undefined) throw ValidationError.field("current_chunk", "This field is required.");
      checkChunkNumbers(media.total_chunks, current);
      if (file.pieces) {
        file.lease = this.deps.digests.lease(media.id, current);
        const body = Readable.from(file.pieces.splice(0), { objectMode: false });
        const limit = await this.#limit(uploader, request, true);
        file.stored = await this.#store(dek, current, body, limit, file.lease?.digests);
      }
      const stored = file.stored!;
      const complete = await database.db.transaction().execute(async (trx) => {
        const locked = await lockMedia(trx, media.id, database.dialect === "postgres");
        if (!locked || locked.state === "removed") throw new AppError("GONE", "The file was removed.");
        await this.#target(uploader, locked.request_id, trx);
        const now = toTimestamp(this.deps.clock.now());
        const previous = await upsertPart(trx, {
          media_id: media.id,
          part_index: current,
          plain_bytes: stored.plainBytes,
          blob_key: stored.key,
          blob_store: stored.store,
          header: stored.header,
          created: now,
        });
        const totals = await partTotals(trx, media.id);
        if (totals.bytes > config.MAX_FILE_BYTES) throw fileTooLarge(config.MAX_FILE_BYTES);
        await this.#checkQuota(trx, locked.account_id, totals.bytes - Number(locked.bytes));
        await updateMedia(trx, media.id, {
          received_chunks: totals.count,
          bytes: totals.bytes,
          state: "uploading",
          sha256: null,
          md5: null,
          updated: now,
        });
        if (previous && previous.blob_key !== stored.key) {
          await enqueueBlobDeletion(this.deps.jobs, trx, [
            { store: previous.blob_store, key: previous.blob_key },
          ]);
        }
        await this.deps.audit.write(trx, {
          accountId: locked.account_id,
          code: AuditCode.ENTITY_UPDATED,
          apiKeyId: uploader.kind === "owner" ? uploader.applicationId : null,
          relatedModel: "media",
          relationKey: media.id,
          value: `chunk ${current} of ${locked.total_chunks} ${previous ? "replaced" : "stored"} (${uploader.kind})`,
          from: meta.ip,
          method: meta.method,
          path: meta.path,
          contentType: meta.contentType,
        });
        return totals.count === locked.total_chunks;
      });
      file.lease?.commit(stored.key);
      // The chunk is committed: from here a failure (say, a part failing verification while the
      // digests are computed) leaves it stored, and re-sending any chunk retries the completion.
      file = undefined;
      if (complete) await this.completeIfReady(media.id, meta);
      return (await findMediaById(database.db, media.id))!;
    } catch (error) {
      file?.lease?.abandon();
      if (file?.stored) await this.#discard(file.stored.key);
      throw error;
    }
  }

  /**
   * Marks a media `available` once every chunk is stored: its SHA-256 and MD5 come from the
   * in-order digests when this process saw every chunk, else from decrypting the parts (which also
   * verifies them). A concurrent re-send of a chunk makes this call give way to the later one.
   */
  async completeIfReady(mediaId: number, meta: CallMeta = {}): Promise<void> {
    const { database, keyRing, blobStore } = this.deps;
    const media = await findMediaById(database.db, mediaId);
    const parts = await listParts(database.db, mediaId);
    if (media?.state !== "uploading" || parts.length !== media.total_chunks) return;
    const keys = parts.map((p) => p.blob_key);
    let digest = await this.deps.digests.take(mediaId, keys);
    if (!digest) {
      const digests = newDigests();
      // Reading back a large file can outlast the connection's idle timeout: hold the connection.
      const release = meta.holdConnection?.();
      try {
        const dek = unwrapKey(keyRing, media.wrapped_key);
        for await (const piece of readPlaintext(blobStore, dek, parts)) await digests.update(piece as Buffer);
        digest = await digests.digest();
      } finally {
        release?.();
        digests.dispose();
      }
    }
    const bytes = parts.reduce((sum, p) => sum + Number(p.plain_bytes), 0);
    const found = digest;
    await database.db.transaction().execute(async (trx) => {
      await lockMedia(trx, mediaId, database.dialect === "postgres");
      const now = await listParts(trx, mediaId);
      if (now.length !== keys.length || now.some((p, i) => p.blob_key !== keys[i])) return;
      await markAvailable(trx, mediaId, { ...found, bytes, now: toTimestamp(this.deps.clock.now()) });
    });
  }

  async #store(
    dek: Buffer,
    partIndex: number,
    source: Readable,
    limit: UploadLimit,
    digests: Digests | undefined,
  ): Promise<StoredPart> {
    const meter = new UploadMeter(limit.bytes, limit.error, digests);
    // 256 shard folders: reused from the first few hundred parts on, so storing a part seldom
    // creates a folder (a local store's mkdir and extra directory metadata to make durable).
    const key = `media/${randomBytes(1).toString("hex")}/${randomId(18)}`;
    return storeEncryptedPart(this.deps.blobStore, key, dek, partIndex, source, meter);
  }

  async #discard(key: string): Promise<void> {
    await this.deps.blobStore.delete(key).catch((err: Error) => {
      this.deps.logger.warn(
        { err: err.message, key },
        "could not delete the blob of a failed upload; the cleanup job will",
      );
    });
  }

  /** The request when the fields already name it (or the uploader is a recipient): checked early. */
  async #earlyTarget(
    uploader: Uploader,
    fields: Record<string, string>,
  ): Promise<RequestForMedia | undefined> {
    if (uploader.kind === "recipient") return this.#target(uploader, uploader.requestId);
    const id = parseId(fields.request);
    return id === undefined ? undefined : this.#target(uploader, id);
  }

  /** Loads the request and checks it takes files from this uploader (404 / 422). */
  async #target(uploader: Uploader, requestId: number, ex = this.deps.database.db): Promise<RequestForMedia> {
    const request = await findRequestForMedia(ex, requestId);
    if (uploader.kind === "owner") {
      if (!request || request.account_id !== uploader.accountId) throw notFound("Request");
      if (request.type !== "push") {
        throw unprocessable(
          "Files are attached to push requests only; the recipient uploads the files of a pull request.",
        );
      }
      if (!request.is_draft)
        throw unprocessable("The request was already sent: attach files while it is a draft.");
      if (request.complete) throw unprocessable("The request is complete.");
      return request;
    }
    if (!request || request.id !== uploader.requestId) throw notFound("Request");
    if (request.type !== "pull") throw unprocessable("This request does not accept files.");
    if (request.is_draft) throw unprocessable("This request was not sent yet.");
    if (request.complete) throw unprocessable("This request is complete: it accepts no more files.");
    const now = toTimestamp(this.deps.clock.now());
    if (request.is_expired || (request.expires_at !== null && request.expires_at <= now)) {
      throw unprocessable("This request has expired.");
    }
    return request;
  }

  /**
   * The most bytes one file (or one chunk) may have now: MAX_FILE_BYTES (MAX_CHUNK_BYTES), a pull
   * request's own limit, and what is left of the account's quota (422 at once when nothing is).
   */
  async #limit(
    uploader: Uploader,
    request: RequestForMedia | undefined,
    chunk: boolean,
  ): Promise<UploadLimit> {
    const { config } = this.deps;
    const sizeLimit = chunk ? config.MAX_CHUNK_BYTES : config.MAX_FILE_BYTES;
    let limit: UploadLimit = {
      bytes: sizeLimit,
      error: () => (chunk ? chunkTooLarge(sizeLimit) : fileTooLarge(sizeLimit)),
    };
    const requestLimit =
      uploader.kind === "recipient" && request?.max_file_bytes ? Number(request.max_file_bytes) : 0;
    if (requestLimit > 0 && requestLimit < limit.bytes)
      limit = { bytes: requestLimit, error: () => fileTooLarge(requestLimit) };
    const accountId = uploader.kind === "owner" ? uploader.accountId : request?.account_id;
    const quota = config.ACCOUNT_STORAGE_QUOTA_BYTES;
    if (quota > 0 && accountId !== undefined) {
      const left = quota - (await storageUsed(this.deps.database.db, accountId));
      if (left <= 0) throw quotaExceeded(quota);
      if (left < limit.bytes) limit = { bytes: left, error: () => quotaExceeded(quota) };
    }
    return limit;
  }

  async #checkQuota(ex: Parameters<typeof storageUsed>[0], accountId: number, adding: number): Promise<void> {
    const quota = this.deps.config.ACCOUNT_STORAGE_QUOTA_BYTES;
    if (quota === 0 || adding <= 0) return;
    const used = await storageUsed(ex, accountId);
    if (used + adding > quota) throw quotaExceeded(quota);
  }

  /** Reads and checks the create fields once the body is read (400 with every problem at once). */
  #readCreateFields(uploader: Uploader, fields: Record<string, string>, file: ReceivedFile) {
    const errors: Record<string, string[]> = {};
    let requestId = uploader.kind === "recipient" ? uploader.requestId : undefined;
    if (uploader.kind === "owner") {
      if (fields.request === undefined || fields.request.trim() === "")
        errors.request = ["This field is required."];
      else {
        requestId = parseId(fields.request);
        if (requestId === undefined) errors.request = ["A valid integer is required."];
      }
    }
    const rawName = fields.name ?? file.filename ?? "";
    const name = sanitizeFileName(rawName);
    if (rawName.trim() === "") errors.name = ["This field is required."];
    else if (name === "") errors.name = ["Enter a file name with an extension, e.g. report.pdf."];
    const rawType = fields.content_type ?? file.mimetype ?? "application/octet-stream";
    const contentType = parseMediaType(rawType);
    if (!contentType) errors.content_type = ["Enter a media type such as application/pdf."];
    const total = parsePositiveInt(fields.total_chunks) ?? 1;
    const current = parsePositiveInt(fields.current_chunk) ?? 1;
    if (!Number.isInteger(total) || total < 1 || total > MAX_TOTAL_CHUNKS) {
      errors.total_chunks = [`Ensure this value is between 1 and ${MAX_TOTAL_CHUNKS}.`];
    } else if (!Number.isInteger(current) || current < 1 || current > total) {
      errors.current_chunk = [`Ensure this value is between 1 and total_chunks (${total}).`];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    return { requestId: requestId!, name, contentType: contentType!, total, current };
  }

  async #insert(
    uploader: Uploader,
    request: RequestForMedia,
    input: { name: string; contentType: string; total: number; current: number },
    stored: StoredPart,
    dek: Buffer,
    digest: PlaintextDigest | undefined,
    meta: CallMeta,
  ): Promise<MediaRow> {
    const { database, audit, keyRing } = this.deps;
    if (uploader.kind === "recipient" && request.allowed_extensions) {
      const allowed = request.allowed_extensions.split(",").map((e) => e.trim().toLowerCase());
      if (!allowed.includes(extensionOf(input.name))) {
        throw ValidationError.field("name", `Only these file types are accepted: ${allowed.join(", ")}.`);
      }
    }
    return database.db.transaction().execute(async (trx) => {
      const current = await this.#target(uploader, request.id, trx);
      await this.#checkQuota(trx, current.account_id, stored.plainBytes);
      const now = toTimestamp(this.deps.clock.now());
      const complete = input.total === 1;
      const media = await insertMedia(trx, {
        account_id: current.account_id,
        request_id: current.id,
        name: input.name,
        content_type: input.contentType,
        extension: extensionOf(input.name),
        file: `media/${randomId(9)}/${input.name}`,
        bytes: stored.plainBytes,
        total_chunks: input.total,
        received_chunks: 1,
        state: complete ? "available" : "uploading",
        sha256: complete && digest ? digest.sha256 : null,
        md5: complete && digest ? digest.md5 : null,
        wrapped_key: wrapKey(keyRing, dek),
        uploaded_by: uploader.kind,
        times_downloaded: 0,
        max_allowed_times_downloaded: current.type === "pull" ? 1 : null,
        download_claimed_until: null,
        download_claim_token: null,
        removed_at: null,
        created: now,
        updated: now,
      });
      await trx
        .insertInto("media_parts")
        .values({
          media_id: media.id,
          part_index: input.current,
          plain_bytes: stored.plainBytes,
          blob_key: stored.key,
          blob_store: stored.store,
          header: stored.header,
          created: now,
        })
        .execute();
      await audit.write(trx, {
        accountId: current.account_id,
        code: AuditCode.ENTITY_CREATED,
        apiKeyId: uploader.kind === "owner" ? uploader.applicationId : null,
        relatedModel: "media",
        relationKey: media.id,
        value: uploader.kind === "owner" ? "created by owner" : "uploaded by recipient",
        from: meta.ip,
        method: meta.method,
        path: meta.path,
        contentType: meta.contentType,
      });
      return media;
    });
  }

  async #findForUploader(uploader: Uploader, rawId: string | number): Promise<MediaRow> {
    const id = parseId(rawId);
    if (id === undefined) throw notFound("Media");
    const { db } = this.deps.database;
    if (uploader.kind === "owner") {
      const media = await findMedia(db, uploader.accountId, id);
      if (!media) throw notFound("Media");
      return media;
    }
    const media = await findMediaById(db, id);
    if (!media || media.request_id !== uploader.requestId || media.uploaded_by !== "recipient")
      throw notFound("Media");
    return media;
  }
}

/** A size limit and the error that reports crossing it. */
interface UploadLimit {
  bytes: number;
  error: () => AppError;
}

/** 422 when the account's storage quota would be exceeded. */
function quotaExceeded(quota: number): AppError {
  return unprocessable(
    `The account's storage quota of ${quota} bytes would be exceeded. Delete files or ask the operator for more space.`,
  );
}

/** 400 unless 1 <= current <= total. */
function checkChunkNumbers(total: number, current: number): void {
  if (!Number.isInteger(current) || current < 1 || current > total) {
    throw ValidationError.field(
      "current_chunk",
      `Ensure this value is between 1 and total_chunks (${total}).`,
    );
  }
}

/** 413 for a chunk over the chunk limit. */
export function chunkTooLarge(limit: number): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `The chunk is larger than the maximum of ${limit} bytes${inUnits(limit)}. Send chunks of at most ${formatBytes(limit)}.`,
  );
}

/** 413 for a file over the file limit. */
export function fileTooLarge(limit: number): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `The file is larger than the maximum of ${limit} bytes${inUnits(limit)}.`,
  );
}

/** " (4 MiB)" when `n` is a whole number of a larger unit, else "". */
function inUnits(n: number): string {
  const text = formatBytes(n);
  return text.endsWith(" bytes") ? "" : ` (${text})`;
}

function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

async function readText(stream: Readable, field: string): Promise<string> {
  const pieces: Buffer[] = [];
  let total = 0;
  for await (const piece of stream) {
    total += (piece as Buffer).length;
    if (total > TEXT_PART_LIMIT) {
      stream.destroy();
      throw ValidationError.field(field, `Ensure this field has no more than ${TEXT_PART_LIMIT} characters.`);
    }
    pieces.push(piece as Buffer);
  }
  return Buffer.concat(pieces).toString("utf8");
}
