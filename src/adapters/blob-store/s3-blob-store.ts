import { Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  paginateListObjectsV2,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { type BlobConsumer, throughConsumer } from "./blob-consumer.js";
import type { BlobListEntry, BlobRange, BlobStore, BlobStoreOptions } from "./blob-store.js";
import {
  assertValidBlobKey,
  assertValidBlobPrefix,
  assertValidRange,
  BlobNotFoundError,
  BlobStoreUnavailableError,
  unsatisfiableRange,
} from "./blob-validation.js";

/** Connection settings of the S3 blob store (the `s3` variant of BlobStoreOptions). */
export type S3BlobStoreOptions = Omit<Extract<BlobStoreOptions, { kind: "s3" }>, "kind">;

// Multipart part size and parallel parts per put: at most PART_BYTES * QUEUE_SIZE buffered per upload.
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;
const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * Blob store on S3 or an S3-compatible service, one object per blob in one bucket. Puts stream
 * through multipart uploads (the length is not known up front), so an object appears only once
 * complete; a failed put aborts its upload.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = "s3";
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #listPageSize: number | undefined;
  readonly #where: string;

  /**
   * Creates the client; no request is made until the first operation. `tuning.listPageSize` sets
   * ListObjectsV2's MaxKeys (1-1000; default the service's, 1000).
   */
  constructor(options: S3BlobStoreOptions, tuning: { listPageSize?: number } = {}) {
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      // Blobs carry their own authentication (AES-GCM); the SDK's default CRC checksums add
      // nothing but incompatibility with several S3-compatible services.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      // A frozen S3 must not hold a call (and its client) for ever: each attempt gives up after
      // this long without progress, and a failed call is tried twice in all.
      requestHandler: {
        connectionTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        socketTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      },
      maxAttempts: 2,
    };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.accessKeyId && options.secretAccessKey) {
      config.credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey };
    }
    this.#client = new S3Client(config);
    this.#bucket = options.bucket;
    this.#listPageSize = tuning.listPageSize;
    this.#where = `S3 bucket "${options.bucket}"${options.endpoint ? ` at ${options.endpoint}` : ""}`;
  }

  /**
   * BlobStoreUnavailableError for a failure of S3 itself (no answer, no answer in time, a 5xx, a
   * refused bucket or credentials); any other error as it is.
   */
  #fault(error: unknown): unknown {
    if (error instanceof BlobStoreUnavailableError) return error;
    const status = httpStatus(error);
    if (status === undefined || status >= 500 || isRefusal(error)) {
      return new BlobStoreUnavailableError(`${this.#where}: ${describeS3Failure(error)}`, isRefusal(error));
    }
    return error;
  }

  /** See BlobStore.check: HeadBucket, which needs the bucket and accepted credentials. */
  async check(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (error) {
      throw new BlobStoreUnavailableError(`${this.#where}: ${describeS3Failure(error)}`, isRefusal(error));
    }
  }

  /** See BlobStore.put. */
  async put(key: string, body: Readable): Promise<{ bytes: number }> {
    assertValidBlobKey(key);
    const counter = new ByteCounter();
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: key, Body: counter },
      partSize: PART_BYTES,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    const [piped, uploaded] = await Promise.allSettled([
      pipeline(body, counter),
      upload.done().catch((error: unknown) => {
        // Stop reading the source when S3 refuses the upload; the pipeline then fails with this error.
        counter.destroy(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }),
    ]);
    // A failed source fails both; its own error explains the failure better than the aborted upload.
    if (uploaded.status === "rejected" && (piped.status === "fulfilled" || piped.reason === uploaded.reason))
      throw this.#fault(uploaded.reason);
    if (piped.status === "rejected") throw piped.reason;
    return { bytes: counter.bytes };
  }

  /** See BlobStore.get. */
  async get(key: string, range?: BlobRange): Promise<Readable> {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    try {
      const response = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      if (!(response.Body instanceof Readable)) throw new Error("S3 response body is not a Node.js stream");
      return response.Body;
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFoundError(key);
      if (errorName(error) === "InvalidRange" || httpStatus(error) === 416) {
        throw unsatisfiableRange(key, range?.start ?? 0);
      }
      throw this.#fault(error);
    }
  }

  /** See BlobStore.getThrough. */
  async getThrough(key: string, range: BlobRange | undefined, consumer: BlobConsumer): Promise<Readable> {
    return throughConsumer(await this.get(key, range), consumer);
  }

  /** See BlobStore.delete. */
  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await this.#client
      .send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }))
      .catch((error: unknown) => {
        throw this.#fault(error);
      });
  }

  /** See BlobStore.exists. */
  async exists(key: string): Promise<boolean> {
    assertValidBlobKey(key);
    try {
      await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw this.#fault(error);
    }
  }

  /** See BlobStore.list; pages through ListObjectsV2, keys in S3's (lexicographic) order. */
  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    assertValidBlobPrefix(prefix);
    const pages = paginateListObjectsV2(
      { client: this.#client },
      {
        Bucket: this.#bucket,
        Prefix: prefix,
        MaxKeys: this.#listPageSize,
      },
    );
    for await (const page of pages) {
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key, bytes: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date(0) };
      }
    }
  }

  /**
   * See BlobStore.abortIncompleteUploads: pages through ListMultipartUploads and aborts each upload
   * initiated before `olderThan`. A server without that listing (answering NotImplemented, as
   * s3rver does) has none to report: 0.
   */
  async abortIncompleteUploads(olderThan: Date): Promise<number> {
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      let page: ListMultipartUploadsCommandOutput;
      try {
        page = await this.#client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.#bucket,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
            MaxUploads: this.#listPageSize,
          }),
        );
      } catch (error) {
        if (errorName(error) === "NotImplemented" || httpStatus(error) === 501) return 0;
        throw this.#fault(error);
      }
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated) continue;
        if (upload.Initiated.getTime() >= olderThan.getTime()) continue;
        try {
          await this.#client.send(
            new AbortMultipartUploadCommand({
              Bucket: this.#bucket,
              Key: upload.Key,
              UploadId: upload.UploadId,
            }),
          );
          aborted++;
        } catch (error) {
          // Completed or aborted meanwhile (by its own put, or another node's cleanup): nothing to do.
          if (errorName(error) === "NoSuchUpload" || httpStatus(error) === 404) continue;
          throw this.#fault(error);
        }
      }
      if (!page.IsTruncated) return aborted;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  /** Closes the client's connection pool. */
  async close(): Promise<void> {
    this.#client.destroy();
  }
}

/** Pass-through stream that counts the bytes it forwards. */
class ByteCounter extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    callback(null, chunk);
  }
}

function errorName(error: unknown): string | undefined {
  return (error as { name?: string } | undefined)?.name;
}

function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

function isNotFound(error: unknown): boolean {
  const name = errorName(error);
  if (name === "NoSuchBucket") return false; // a configuration problem, not a missing blob
  return name === "NoSuchKey" || name === "NotFound" || httpStatus(error) === 404;
}

/** Whether S3 answered and refused the call because of the configuration (bucket, credentials). */
function isRefusal(error: unknown): boolean {
  const status = httpStatus(error);
  return (
    status === 400 ||
    status === 401 ||
    status === 403 ||
    status === 404 ||
    errorName(error) === "NoSuchBucket"
  );
}

/** One line for an operator saying why an S3 call failed (never the credentials themselves). */
export function describeS3Failure(error: unknown): string {
  const status = httpStatus(error);
  const name = errorName(error);
  const code = (error as { code?: string } | undefined)?.code;
  if (status === 404 || name === "NoSuchBucket" || name === "NotFound") return "the bucket does not exist";
  if (status === 403 || status === 401 || name === "InvalidAccessKeyId" || name === "SignatureDoesNotMatch") {
    return `the credentials were refused (${name && name !== "Forbidden" ? name : `HTTP ${status}`}); check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY`;
  }
  if (name === "TimeoutError" || name === "AbortError") return "no answer in time";
  if (code) return `not reachable (${code})`;
  const message = error instanceof Error ? error.message : String(error);
  return `${name ?? "error"}${status ? ` (HTTP ${status})` : ""}: ${message.slice(0, 200)}`;
}
