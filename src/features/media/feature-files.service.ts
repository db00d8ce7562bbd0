/**
 * Files other features keep as media without an HTTP upload: the bytes of an account's media read
 * whole (for engines that need a whole document, such as the PDF engine), and bytes stored as a new
 * media of a container feature (a sealed document). Same encryption, blob store and audit as an
 * upload: a fresh data key wrapped by the key ring, one encrypted part, the row written once the
 * blob is stored.
 */
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { generateDataKey } from "../../crypto/envelope.js";
import type { Executor } from "../../db/database.js";
import { AppError, notFound } from "../../shared/errors.js";
import { randomId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/index.js";
import { enqueueBlobDeletion, type MediaDeps, unwrapKey, wrapKey } from "./media.context.js";
import { findMedia, insertMedia, insertPart, listParts, removeFeatureMedia } from "./media.repository.js";
import { readPlaintext, storeEncryptedPart, UploadMeter } from "./media.streams.js";
import { extensionOf } from "./media.validation.js";

/** Where a stored file belongs: a container feature of an account. */
export interface FeatureFileTarget {
  accountId: number;
  /** The container (the media's `request`: containers and requests share one id space). */
  containerId: number;
  featureId: number;
}

/** A file to store. */
export interface FeatureFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** Whole-file reads and stores for other features. */
export class FeatureFilesService {
  constructor(private readonly deps: MediaDeps) {}

  /**
   * The plaintext of the account's media `mediaId`, whole. Throws 404 (absent, another account's),
   * 410 (removed), 409 (still uploading), 413 when it holds more than `maxBytes` (default: the
   * deployment's MAX_FILE_BYTES), 500 when its stored data fails the integrity check.
   */
  async read(
    accountId: number,
    mediaId: number,
    maxBytes = this.deps.config.MAX_FILE_BYTES,
  ): Promise<Buffer> {
    const media = await findMedia(this.deps.database.db, accountId, mediaId);
    if (!media) throw notFound("Media");
    if (media.state === "removed") throw new AppError("GONE", "The file was removed.");
    if (media.state !== "available") throw new AppError("CONFLICT", "The file is still uploading.");
    if (Number(media.bytes) > maxBytes)
      throw new AppError("PAYLOAD_TOO_LARGE", `The file is larger than ${maxBytes} bytes.`);
    const parts = await listParts(this.deps.database.db, media.id);
    const dek = unwrapKey(this.deps.keyRing, media.wrapped_key);
    const pieces: Buffer[] = [];
    for await (const piece of readPlaintext(this.deps.blobStore, dek, parts)) pieces.push(piece as Buffer);
    return Buffer.concat(pieces);
  }

  /**
   * Stores `file` as a new available media of feature `target` (uploaded by the owner's side, no
   * download limit), with its audit entry; returns its id. The blob is written first and deleted
   * again when the row cannot be written, so a failure leaves nothing behind.
   */
  async store(target: FeatureFileTarget, file: FeatureFile): Promise<number> {
    const { blobStore, keyRing, database, audit, clock } = this.deps;
    const dek = generateDataKey();
    const key = `media/${randomBytes(1).toString("hex")}/${randomId(18)}`;
    const meter = new UploadMeter(
      file.bytes.length,
      () => new Error("stored more bytes than given"),
      undefined,
    );
    const stored = await storeEncryptedPart(blobStore, key, dek, 1, Readable.from([file.bytes]), meter);
    try {
      return await database.db.transaction().execute(async (trx) => {
        const now = toTimestamp(clock.now());
        const media = await insertMedia(trx, {
          account_id: target.accountId,
          request_id: target.containerId,
          feature_id: target.featureId,
          recipient_id: null,
          name: file.name,
          content_type: file.contentType,
          extension: extensionOf(file.name),
          file: `media/${randomId(9)}/${file.name}`,
          bytes: stored.plainBytes,
          total_chunks: 1,
          received_chunks: 1,
          declared_bytes: file.bytes.length,
          fingerprint: null,
          state: "available",
          sha256: createHash("sha256").update(file.bytes).digest("hex"),
          md5: createHash("md5").update(file.bytes).digest("hex"),
          wrapped_key: wrapKey(keyRing, dek),
          uploaded_by: "owner",
          times_downloaded: 0,
          max_allowed_times_downloaded: null,
          download_claimed_until: null,
          download_claim_token: null,
          removed_at: null,
          created: now,
          updated: now,
        });
        await insertPart(trx, {
          media_id: media.id,
          part_index: 1,
          plain_bytes: stored.plainBytes,
          blob_key: stored.key,
          blob_store: stored.store,
          header: stored.header,
          created: now,
        });
        await audit.write(trx, {
          accountId: target.accountId,
          code: AuditCode.ENTITY_CREATED,
          relatedModel: "media",
          relationKey: media.id,
          value: `stored for feature ${target.featureId}`,
        });
        return media.id;
      });
    } catch (error) {
      await blobStore.delete(stored.key).catch(() => {});
      throw error;
    }
  }

  /**
   * Destroys every media of a feature inside `trx`, whatever the feature's state: state `removed`
   * with `removed_at`, data keys destroyed, parts deleted, their blobs queued for deletion, and
   * ABA-0020 for each file ("media destroyed: <why>"). Returns the ids of the media destroyed.
   */
  async destroyOfFeature(trx: Executor, featureId: number, now: string, why: string): Promise<number[]> {
    const { media, blobs } = await removeFeatureMedia(trx, featureId, now);
    await enqueueBlobDeletion(this.deps.jobs, trx, blobs);
    for (const m of media) {
      await this.deps.audit.write(trx, {
        accountId: m.account_id,
        code: AuditCode.ENTITY_DELETED,
        relatedModel: "media",
        relationKey: m.id,
        value: `media destroyed: ${why}`,
      });
    }
    return media.map((m) => m.id);
  }
}
