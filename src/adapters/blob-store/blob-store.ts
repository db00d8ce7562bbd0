/**
 * Blob store port: opaque, already-encrypted bytes under string keys. Every
 * implementation passes `runBlobStoreContract` (blob-store.contract.ts).
 */
import type { Readable } from "node:stream";
import type { BlobConsumer } from "./blob-consumer.js";
import { LocalBlobStore } from "./local-blob-store.js";
import { MemoryBlobStore } from "./memory-blob-store.js";

export type { BlobConsumer } from "./blob-consumer.js";
export {
  assertValidBlobKey,
  assertValidBlobPrefix,
  BlobNotFoundError,
  BlobStoreUnavailableError,
  InvalidBlobKeyError,
  isValidBlobKey,
  MAX_BLOB_KEY_LENGTH,
} from "./blob-validation.js";

/** A byte range of a blob: `start` and `end` are 0-based and inclusive. */
export interface BlobRange {
  start: number;
  end: number;
}

/** One stored blob as reported by `list`. */
export interface BlobListEntry {
  key: string;
  bytes: number;
  modifiedAt: Date;
}

/**
 * Storage for blobs. Keys follow `isValidBlobKey`; every method rejects InvalidBlobKeyError for
 * other keys. A blob becomes visible only once `put` resolves, whole; readers never see part of it.
 */
export interface BlobStore {
  /** Which implementation this is; recorded with each blob row. */
  readonly kind: "memory" | "local" | "s3";
  /**
   * Stores the whole of `body` under `key`, replacing any previous blob, and resolves with the byte
   * count. If `body` errors or the write fails, it rejects and the key keeps its previous state.
   */
  put(key: string, body: Readable): Promise<{ bytes: number }>;
  /**
   * Streams the blob, or only bytes start..end (inclusive; `end` past the blob's end is clamped).
   * Rejects BlobNotFoundError for a missing key, RangeError for a malformed range or one starting
   * at or past the end of the blob (so any range of an empty blob).
   */
  get(key: string, range?: BlobRange): Promise<Readable>;
  /**
   * As `get`, but the blob's bytes go through `consumer` (which may be handed views of a buffer
   * the store reuses, see BlobConsumer) and the stream carries what it returns. The store calls
   * `consumer` only while the stream is being read, never after it ended or was destroyed; the
   * consumer's error fails the stream. Rejects as `get` does, before calling `consumer`.
   */
  getThrough(key: string, range: BlobRange | undefined, consumer: BlobConsumer): Promise<Readable>;
  /** Removes the blob; resolves also when there was none. */
  delete(key: string): Promise<void>;
  /** Whether a blob is stored under `key`. */
  exists(key: string): Promise<boolean>;
  /**
   * Every blob whose key starts with `prefix` ("" for all; "media/1/" for one folder), in no
   * particular order. Rejects InvalidBlobKeyError unless prefix is "", a key, or a key + "/".
   */
  list(prefix: string): AsyncIterable<BlobListEntry>;
  /**
   * Stores that write through temporary files (local): removes those last modified before
   * `olderThan` (left by a crash mid-write; a write in progress keeps its file fresh) and resolves
   * with how many. Stores without such files do not have the method.
   */
  sweepTemporaryFiles?(olderThan: Date): Promise<number>;
  /**
   * Stores that write through S3 multipart uploads: aborts those started before `olderThan` and
   * never completed or aborted (a process killed mid-put leaves its parts, billed, in the bucket)
   * and resolves with how many; 0 on a server that cannot list them. Stores without such uploads
   * do not have the method.
   */
  abortIncompleteUploads?(olderThan: Date): Promise<number>;
  /**
   * Resolves when the store can be used as configured (S3: the bucket exists and the credentials
   * are accepted; local: the folder is writable); else rejects BlobStoreUnavailableError with one
   * line saying what is wrong. Reads and writes no blob.
   */
  check(): Promise<void>;
  /** Releases connections and handles; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** Which blob store to build and how; produced from config (BLOB_STORE=memory|local|s3). */
export type BlobStoreOptions =
  | { kind: "memory" }
  | {
      kind: "local";
      dir: string;
      /** Write and read blobs with O_DIRECT where the file system allows it (default true; ADR 0016). */
      directIo?: boolean;
    }
  | {
      kind: "s3";
      /** Custom endpoint for S3-compatible services (MinIO, R2...); omit for AWS. */
      endpoint?: string;
      bucket: string;
      region: string;
      /** Static credentials; when omitted the SDK's default provider chain applies. */
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle: boolean;
      /** Longest a call may go without progress, per attempt (default 15 s; two attempts). */
      timeoutMs?: number;
    };

/**
 * Builds the blob store selected by `options.kind`; the only place an implementation is chosen.
 * The S3 adapter (and with it the AWS SDK, tens of MB and a slower start) is loaded only when
 * selected, so local deployments never pay for it.
 */
export async function createBlobStore(options: BlobStoreOptions): Promise<BlobStore> {
  switch (options.kind) {
    case "memory":
      return new MemoryBlobStore();
    case "local":
      return new LocalBlobStore(options.dir, { directIo: options.directIo ?? true });
    case "s3": {
      const { S3BlobStore } = await import("./s3-blob-store.js");
      return new S3BlobStore(options);
    }
    default: {
      const unknown: never = options;
      throw new Error(`unknown blob store kind ${JSON.stringify((unknown as { kind: unknown }).kind)}`);
    }
  }
}
