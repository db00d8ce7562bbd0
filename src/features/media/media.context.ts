import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { BlobStore, BlobStoreOptions } from "../../adapters/blob-store/blob-store.js";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import { unwrapDataKey, wrapDataKey } from "../../crypto/envelope.js";
import type { Database, Executor } from "../../db/database.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { AppError } from "../../shared/errors.js";
import type { AuditWriter } from "../audit/index.js";
import { DeleteBlobsJob, type FeatureTargets, type MediaTargets } from "./media.jobs.js";
import type { BlobRef } from "./media.repository.js";
import type { DigestCache } from "./media-digest-cache.js";

/** What the media services need. */
export interface MediaDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  database: Database;
  blobStore: BlobStore;
  keyRing: KeyRing;
  jobs: JobQueue;
  audit: AuditWriter;
  digests: DigestCache;
  /** The requests media belong to, and their upload and download rules. */
  targets: MediaTargets;
  /** The container features media belong to, and their rules. */
  features: FeatureTargets;
}

/**
 * Who uploads: the owner through the API (the body names the request or feature), or a recipient
 * through their page — of a pull request, or of a container session (`featureId`, `recipientId`).
 */
export type Uploader =
  | { kind: "owner"; accountId: number; applicationId: number }
  | { kind: "recipient"; requestId: number; featureId?: number; recipientId?: number };

/** Who downloads: the owner through the API, or the recipient of a push request through its page. */
export type Downloader =
  | { kind: "owner"; accountId: number; applicationId: number }
  | { kind: "recipient"; requestId: number; featureId?: number; recipientId?: number };

/** Where a call came from, for the audit log. */
export interface CallMeta {
  ip?: string;
  method?: string;
  path?: string;
  contentType?: string;
  /**
   * Called before work that sends nothing for a long time (completing a chunked upload by reading
   * back every part); returns the function that ends it. The HTTP routes lift the idle timeout.
   */
  holdConnection?: () => () => void;
}

/**
 * One piece of an upload body in arrival order: a text field, or the file's byte stream (which
 * must be consumed before the next piece is asked for).
 */
export type UploadPart =
  | { kind: "field"; name: string; value: string }
  | {
      kind: "file";
      field: string;
      stream: Readable;
      filename?: string | undefined;
      mimetype?: string | undefined;
    };

/** Wraps a new data key under the ring's active KEK. */
export function wrapKey(keyRing: KeyRing, dek: Buffer): string {
  const kid = keyRing.activeKid;
  return wrapDataKey(dek, keyRing.derive(kid, "kek"), kid);
}

/** Unwraps a media's data key; 410 when it was destroyed (the file was removed). */
export function unwrapKey(keyRing: KeyRing, wrapped: string | null): Buffer {
  if (!wrapped) throw new AppError("GONE", "The file was removed; its content no longer exists.");
  return unwrapDataKey(wrapped, (kid) => keyRing.derive(kid, "kek"));
}

/** Queues the deletion of blobs inside `ex` (the transaction that dropped their rows). */
export async function enqueueBlobDeletion(jobs: JobQueue, ex: Executor, blobs: BlobRef[]): Promise<void> {
  if (blobs.length > 0) await jobs.enqueue(ex, DeleteBlobsJob, { blobs });
}

/**
 * Blob store options from the configuration (BLOB_STORE, FERRY_BLOB_DIR, S3_*). Throws Error when
 * BLOB_STORE=s3 lacks S3_BUCKET.
 */
export function blobStoreOptionsFromConfig(config: Config): BlobStoreOptions {
  switch (config.BLOB_STORE) {
    case "memory":
      return { kind: "memory" };
    case "local":
      return {
        kind: "local",
        dir: config.FERRY_BLOB_DIR ? resolve(config.FERRY_BLOB_DIR) : join(config.dataDir, "blobs"),
        directIo: config.BLOB_DIRECT_IO,
      };
    case "s3": {
      if (!config.S3_BUCKET) throw new Error("Invalid configuration: BLOB_STORE=s3 needs S3_BUCKET.");
      return {
        kind: "s3",
        ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
        bucket: config.S3_BUCKET,
        region: config.S3_REGION,
        ...(config.S3_ACCESS_KEY_ID ? { accessKeyId: config.S3_ACCESS_KEY_ID } : {}),
        ...(config.S3_SECRET_ACCESS_KEY ? { secretAccessKey: config.S3_SECRET_ACCESS_KEY } : {}),
        forcePathStyle: config.S3_FORCE_PATH_STYLE,
        timeoutMs: config.S3_TIMEOUT_MS,
      };
    }
  }
}
