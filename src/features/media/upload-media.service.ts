/**
 * Uploads (docs/media.md, "Uploading"): a whole file or the first chunk by POST, further chunks by
 * PUT, for the owner (draft push requests) and for the recipient of an open pull request. Bytes
 * stream from the body through the meter (limit, digests) and the encrypting stream into the blob
 * store; the rows are written once the blob is stored, so a crash leaves at most an orphan blob for
 * the cleanup job.
 */
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { generateDataKey } from "../../crypto/envelope.js";
import { AppError, notFound, ValidationError } from "../../shared/errors.js";
import { parseId, randomId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/index.js";
import {
  type CallMeta,
  enqueueBlobDeletion,
  type MediaDeps,
  type Uploader,
  type UploadPart,
  unwrapKey,
  wrapKey,
} from "./media.context.js";
import type { UploadTarget } from "./media.jobs.js";
import {
  deleteMediaRow,
  deleteParts,
  findMedia,
  findMediaById,
  insertMedia,
  insertPart,
  listParts,
  lockMedia,
  type MediaRow,
  markAvailable,
  partTotals,
  updateMedia,
  upsertPart,
} from "./media.repository.js";
import {
  type Digests,
  newDigests,
  type PlaintextDigest,
  readPlaintext,
  type StoredPart,
  storeEncryptedPart,
  UploadMeter,
} from "./media.streams.js";
import {
  type CreateInput,
  checkChunkNumbers,
  extensionOf,
  parseCreateFields,
  parsePositiveInt,
  readDeclaration,
} from "./media.validation.js";
import type { DigestLease, DigestSink } from "./media-digest-cache.js";
import { type DigestSnapshot, loadDigestSnapshot } from "./media-digest-state.js";
import { UploadBody } from "./upload-body.js";
import {
  breaksDeclaredSize,
  checkFingerprint,
  chunkTooLarge,
  declaredSizeBroken,
  declaredSizeMissed,
  fileTooLarge,
  type UploadLimit,
  UploadRules,
} from "./upload-rules.js";

/** Uploads of media: create (whole file or first chunk) and put further chunks. */
export class MediaUploadService {
  readonly #rules: UploadRules;

  constructor(private readonly deps: MediaDeps) {
    this.#rules = new UploadRules(deps);
  }

  /**
   * POST /v1/media/ and the recipient's upload: reads `parts` (fields and one `file`), stores the
   * encrypted bytes and creates the media with its declared size and fingerprint, if given.
   * Throws ValidationError (400), 404 for a request that is absent or another account's, 422 for a
   * request that does not take files from this uploader, 413 over a size limit, 422 over the
   * storage quota or for bytes that differ from the declared size.
   */
  async create(uploader: Uploader, parts: AsyncIterable<UploadPart>, meta: CallMeta = {}): Promise<MediaRow> {
    const { config } = this.deps;
    const dek = generateDataKey();
    // The target when known: from the fields before the file, else once the body is read.
    let target: UploadTarget | undefined;
    // The digests of chunk 1: final for a whole file, kept by the digest cache for a chunked one.
    let digests: Digests | undefined;
    // The file outgrew a chunk before its chunk number came: it was stored as a whole file.
    let storedWhole = false;
    const body = new UploadBody(config.MAX_CHUNK_BYTES, {
      chunkBeforeFile: async (fields) => {
        target = await this.#rules.earlyTarget(uploader, fields);
        const current = parsePositiveInt(fields.current_chunk);
        if (current !== undefined) checkChunkNumbers(totalChunks(fields), current);
        this.#checkDeclaration(fields);
        return current;
      },
      store: async (chunk, source, fields) => {
        const chunked = totalChunks(fields) > 1;
        const limit = await this.#rules.limit(uploader, target, chunked, declaredBytes(fields));
        digests = chunk === 1 ? newDigests() : undefined;
        return this.#store(dek, chunk, source, limit, digests);
      },
      storeOversized: async (source) => {
        storedWhole = true;
        digests = newDigests();
        const limit = await this.#rules.limit(uploader, target, false, declaredBytes(body.fields));
        return this.#store(dek, 1, source, limit, digests);
      },
    });
    try {
      await body.read(parts);
      const input = parseCreateFields(uploader, body.fields, body);
      const declared = input.declaration.bytes;
      if (declared !== null) this.#rules.checkDeclaredBytes(declared, input.total);
      target ??= await this.#rules.target(uploader, input.target);
      if (storedWhole && (input.current !== 1 || input.total > 1)) {
        throw chunkTooLarge(config.MAX_CHUNK_BYTES);
      }
      const stored = await body.store(input.current);
      // Stored before the target was known: apply its own limit now.
      const limit = await this.#rules.limit(uploader, target, input.total > 1);
      if (stored.plainBytes > limit.bytes) throw limit.error();
      if (declared !== null && breaksDeclaredSize(declared, stored.plainBytes, input.total === 1))
        throw declaredSizeMissed(declared, stored.plainBytes);
      const digest = input.total === 1 && digests ? await digests.digest() : undefined;
      const media = await this.#insert(uploader, target, input, stored, dek, digest, meta);
      if (input.total > 1 && input.current === 1 && digests) {
        this.deps.digests.adopt(media.id, digests, stored.key);
        digests = undefined;
        // Saved before the answer, so the node that gets chunk 2 continues from it (ADR 0075).
        await this.deps.digests.persist(media.id);
      }
      return media;
    } catch (error) {
      digests?.dispose();
      if (body.stored) await this.#discard(body.stored.key);
      throw error;
    }
  }

  /**
   * PUT /v1/media/{id}: stores chunk `current_chunk` (replacing an earlier copy) and completes the
   * media once every chunk is present. Throws 404 (absent, another account's), 410 (removed), 422
   * (the request no longer takes files), 400 (bad chunk number), 413 (chunk or file too large),
   * 409 (a fingerprint other than the upload's), 422 (the chunks would differ from the declared size).
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
    const target = await this.#rules.targetOfMedia(uploader, media);
    const dek = unwrapKey(this.deps.keyRing, media.wrapped_key);
    let lease: DigestLease | undefined;
    const body = new UploadBody(config.MAX_CHUNK_BYTES, {
      chunkBeforeFile: async (fields) => {
        checkFingerprint(media.fingerprint, fields.fingerprint);
        const current = parsePositiveInt(fields.current_chunk);
        if (current !== undefined) checkChunkNumbers(media.total_chunks, current);
        return current;
      },
      store: async (chunk, source) => {
        lease = await this.deps.digests.leaseOrResume(media.id, chunk, () =>
          loadDigestSnapshot(database.db, media.id),
        );
        const limit = await this.#rules.limit(uploader, target, true);
        return this.#store(dek, chunk, source, limit, lease?.digests);
      },
      storeOversized: async (source) => {
        source.destroy();
        throw chunkTooLarge(config.MAX_CHUNK_BYTES);
      },
    });
    let stored: StoredPart;
    let complete: boolean;
    let current: number | undefined;
    try {
      await body.read(parts);
      checkFingerprint(media.fingerprint, body.fields.fingerprint);
      current = parsePositiveInt(body.fields.current_chunk);
      if (current === undefined) throw ValidationError.field("current_chunk", "This field is required.");
      checkChunkNumbers(media.total_chunks, current);
      stored = await body.store(current);
      complete = await this.#recordChunk(uploader, media.id, current, stored, meta);
    } catch (error) {
      lease?.abandon();
      if (body.stored) await this.#discard(body.stored.key);
      throw error;
    }
    // A chunk held ahead of the hashed prefix is read back from its blob if its bytes did not fit
    // the memory budget (ADR 0038).
    const part = partRow(media.id, current, stored, media.created);
    lease?.commit(stored.key, () => readPlaintext(this.deps.blobStore, dek, [part]));
    // The chunk is committed: from here a failure (say, a part failing verification while the
    // digests are computed) leaves it stored, and re-sending any chunk retries the completion.
    if (complete) await this.#completeIfReady(media.id, meta);
    // Saved before the answer, so the node that gets the next chunk continues from it (ADR 0075).
    else if (lease) await this.deps.digests.persist(media.id);
    return (await findMediaById(database.db, media.id))!;
  }

  /**
   * Marks a media `available` once every chunk is stored: its SHA-256 and MD5 come from the
   * in-order digests when this process saw every chunk, else from decrypting the parts (which also
   * verifies them). A concurrent re-send of a chunk makes this call give way to the later one.
   */
  async #completeIfReady(mediaId: number, meta: CallMeta = {}): Promise<void> {
    const { database, keyRing, blobStore } = this.deps;
    const media = await findMediaById(database.db, mediaId);
    const parts = await listParts(database.db, mediaId);
    if (media?.state !== "uploading" || parts.length !== media.total_chunks) return;
    const keys = parts.map((p) => p.blob_key);
    let digest = await this.deps.digests.take(mediaId, keys);
    if (!digest) {
      // The chunks came to several nodes: continue from the state saved with the longest hashed
      // prefix (ADR 0075) and read back only the parts after it; without one (or one that does
      // not load), every part.
      const saved = await loadDigestSnapshot(database.db, mediaId, parts).catch(() => undefined);
      const readFrom = async (from: DigestSnapshot | undefined) => {
        const digests = newDigests(from?.saved);
        // Reading back a large file can outlast the connection's idle timeout: hold the connection.
        const release = meta.holdConnection?.();
        try {
          const dek = unwrapKey(keyRing, media.wrapped_key);
          const rest = parts.slice(from?.keys.length ?? 0);
          if (rest.length > 0)
            for await (const piece of readPlaintext(blobStore, dek, rest))
              await digests.update(piece as Buffer);
          return await digests.digest();
        } finally {
          release?.();
          digests.dispose();
        }
      };
      digest = saved ? await readFrom(saved).catch(() => readFrom(undefined)) : await readFrom(undefined);
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

  /**
   * Checks the file types the target accepts (recipient uploads), then writes the media, its first
   * part and the audit entry in one transaction (422 when the target stopped taking files or holds
   * as many as it takes).
   */
  async #insert(
    uploader: Uploader,
    target: UploadTarget,
    input: CreateInput,
    stored: StoredPart,
    dek: Buffer,
    digest: PlaintextDigest | undefined,
    meta: CallMeta,
  ): Promise<MediaRow> {
    const { database, audit, keyRing } = this.deps;
    if (uploader.kind === "recipient" && target.allowedExtensions) {
      const allowed = target.allowedExtensions;
      if (!allowed.includes(extensionOf(input.name))) {
        throw ValidationError.field("name", `Only these file types are accepted: ${allowed.join(", ")}.`);
      }
    }
    return database.db.transaction().execute(async (trx) => {
      const current =
        uploader.kind === "owner"
          ? await this.#rules.target(uploader, input.target, trx)
          : await this.#rules.target(uploader, undefined, trx);
      await this.#rules.checkFileCount(trx, uploader, current);
      await this.#rules.checkQuota(trx, current.accountId, stored.plainBytes);
      const now = toTimestamp(this.deps.clock.now());
      const complete = input.total === 1;
      const media = await insertMedia(trx, {
        account_id: current.accountId,
        request_id: current.requestId,
        feature_id: current.featureId,
        recipient_id: current.recipientId,
        name: input.name,
        content_type: input.contentType,
        extension: extensionOf(input.name),
        file: `media/${randomId(9)}/${input.name}`,
        bytes: stored.plainBytes,
        total_chunks: input.total,
        received_chunks: 1,
        declared_bytes: input.declaration.bytes,
        fingerprint: input.declaration.fingerprint,
        state: complete ? "available" : "uploading",
        sha256: complete && digest ? digest.sha256 : null,
        md5: complete && digest ? digest.md5 : null,
        wrapped_key: wrapKey(keyRing, dek),
        uploaded_by: uploader.kind,
        times_downloaded: 0,
        max_allowed_times_downloaded: current.downloadLimit,
        download_claimed_until: null,
        download_claim_token: null,
        removed_at: null,
        created: now,
        updated: now,
      });
      await insertPart(trx, partRow(media.id, input.current, stored, now));
      await audit.write(trx, {
        accountId: current.accountId,
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

  /**
   * Records chunk `current` of media `mediaId` (replacing an earlier copy, whose blob is queued for
   * deletion) and the media's new totals, in one transaction. Returns whether every chunk is now
   * present. Throws 410 (removed meanwhile), 422 (the request no longer takes files), 422 (the
   * chunks would pass or, all there, differ from the declared size), 413 (the file grew too
   * large), 422 (over the quota); the transaction then leaves the media as it was.
   */
  async #recordChunk(
    uploader: Uploader,
    mediaId: number,
    current: number,
    stored: StoredPart,
    meta: CallMeta,
  ): Promise<boolean> {
    const { config, database } = this.deps;
    return database.db.transaction().execute(async (trx) => {
      const locked = await lockMedia(trx, mediaId, database.dialect === "postgres");
      if (!locked || locked.state === "removed") throw new AppError("GONE", "The file was removed.");
      await this.#rules.targetOfMedia(uploader, locked, trx);
      const now = toTimestamp(this.deps.clock.now());
      const previous = await upsertPart(trx, partRow(mediaId, current, stored, now));
      const totals = await partTotals(trx, mediaId);
      const declared = locked.declared_bytes === null ? null : Number(locked.declared_bytes);
      if (
        declared !== null &&
        breaksDeclaredSize(declared, totals.bytes, totals.count === locked.total_chunks)
      )
        throw declaredSizeBroken(declared, totals.bytes);
      if (totals.bytes > config.MAX_FILE_BYTES) throw fileTooLarge(config.MAX_FILE_BYTES);
      await this.#rules.checkQuota(trx, locked.account_id, totals.bytes - Number(locked.bytes));
      await updateMedia(trx, mediaId, {
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
        relationKey: mediaId,
        value: `chunk ${current} of ${locked.total_chunks} ${previous ? "replaced" : "stored"} (${uploader.kind})`,
        from: meta.ip,
        method: meta.method,
        path: meta.path,
        contentType: meta.contentType,
      });
      return totals.count === locked.total_chunks;
    });
  }

  /** Refuses the declaration in fields sent before the file: 400 malformed or unfit, 413 too large. */
  #checkDeclaration(fields: Record<string, string>): void {
    const { declaration, errors } = readDeclaration(fields);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    if (declaration.bytes !== null) this.#rules.checkDeclaredBytes(declaration.bytes, totalChunks(fields));
  }

  async #store(
    dek: Buffer,
    partIndex: number,
    source: Readable,
    limit: UploadLimit,
    digests: DigestSink | undefined,
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

  /**
   * The recipient removes one of their own files (finished or not) before submitting: the row and
   * its parts go, the blobs are queued for deletion and ABA-0020 is written, in one transaction.
   * Throws 404 for a media that is not this uploader's, 422 when the request (or feature) no
   * longer takes files.
   */
  async remove(
    uploader: Extract<Uploader, { kind: "recipient" }>,
    rawId: string | number,
    meta: CallMeta = {},
  ) {
    const { database, audit, jobs } = this.deps;
    const media = await this.#findForUploader(uploader, rawId);
    if (media.state === "removed") throw notFound("Media");
    await database.db.transaction().execute(async (trx) => {
      const locked = await lockMedia(trx, media.id, database.dialect === "postgres");
      if (!locked || locked.state === "removed") throw notFound("Media");
      await this.#rules.targetOfMedia(uploader, locked, trx);
      const blobs = await deleteParts(trx, media.id);
      await deleteMediaRow(trx, media.id);
      await enqueueBlobDeletion(jobs, trx, blobs);
      await audit.write(trx, {
        accountId: locked.account_id,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: null,
        relatedModel: "media",
        relationKey: media.id,
        value: `removed by recipient (request ${media.request_id})`,
        from: meta.ip,
        method: meta.method,
        path: meta.path,
        contentType: meta.contentType,
      });
    });
    this.deps.digests.forget(media.id);
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
    if ((uploader.featureId ?? null) !== media.feature_id) throw notFound("Media");
    // In a container session each recipient continues only their own uploads.
    if (media.feature_id !== null && media.recipient_id !== (uploader.recipientId ?? null))
      throw notFound("Media");
    return media;
  }
}

/** `total_chunks` as sent so far (1 when absent, NaN when invalid). */
function totalChunks(fields: Record<string, string>): number {
  return parsePositiveInt(fields.total_chunks) ?? 1;
}

/** `total_bytes` as sent so far, when it is a byte count (null otherwise: checked with the other fields). */
function declaredBytes(fields: Record<string, string>): number | null {
  return readDeclaration(fields).declaration.bytes;
}

/** The part row of `stored` as chunk `partIndex` of media `mediaId`. */
function partRow(mediaId: number, partIndex: number, stored: StoredPart, created: string) {
  return {
    media_id: mediaId,
    part_index: partIndex,
    plain_bytes: stored.plainBytes,
    blob_key: stored.key,
    blob_store: stored.store,
    header: stored.header,
    created,
  };
}
