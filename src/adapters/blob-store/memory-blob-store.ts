import { Readable } from "node:stream";
import { type BlobConsumer, throughConsumer } from "./blob-consumer.js";
import type { BlobListEntry, BlobRange, BlobStore } from "./blob-store.js";
import {
  assertValidBlobKey,
  assertValidBlobPrefix,
  assertValidRange,
  BlobNotFoundError,
  unsatisfiableRange,
} from "./blob-validation.js";

const READ_CHUNK_BYTES = 64 * 1024;

interface StoredBlob {
  data: Buffer;
  modifiedAt: Date;
}

/** Blob store in process memory, for tests and throwaway development; put buffers the whole body. */
export class MemoryBlobStore implements BlobStore {
  readonly kind = "memory";

  /** See BlobStore.check: always usable. */
  async check(): Promise<void> {}
  readonly #blobs = new Map<string, StoredBlob>();

  /** See BlobStore.put; the blob is stored only after `body` ended without error. */
  async put(key: string, body: Readable): Promise<{ bytes: number }> {
    assertValidBlobKey(key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    const data = Buffer.concat(chunks);
    this.#blobs.set(key, { data, modifiedAt: new Date() });
    return { bytes: data.length };
  }

  /** See BlobStore.get. */
  async get(key: string, range?: BlobRange): Promise<Readable> {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    const blob = this.#blobs.get(key);
    if (!blob) throw new BlobNotFoundError(key);
    let data = blob.data;
    if (range) {
      if (range.start >= data.length) throw unsatisfiableRange(key, range.start, data.length);
      data = data.subarray(range.start, Math.min(range.end, data.length - 1) + 1);
    }
    return Readable.from(slices(data), { objectMode: false });
  }

  /** See BlobStore.getThrough. */
  async getThrough(key: string, range: BlobRange | undefined, consumer: BlobConsumer): Promise<Readable> {
    return throughConsumer(await this.get(key, range), consumer);
  }

  /** See BlobStore.delete. */
  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    this.#blobs.delete(key);
  }

  /** See BlobStore.exists. */
  async exists(key: string): Promise<boolean> {
    assertValidBlobKey(key);
    return this.#blobs.has(key);
  }

  /** See BlobStore.list; keys come in sorted order. */
  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    assertValidBlobPrefix(prefix);
    const keys = [...this.#blobs.keys()].filter((key) => key.startsWith(prefix)).sort();
    for (const key of keys) {
      const blob = this.#blobs.get(key);
      if (blob) yield { key, bytes: blob.data.length, modifiedAt: blob.modifiedAt };
    }
  }

  /** Drops every blob. */
  async close(): Promise<void> {
    this.#blobs.clear();
  }
}

function* slices(data: Buffer): Generator<Buffer> {
  // Copies, so a reader that mutates its chunks cannot change the stored blob.
  for (let offset = 0; offset < data.length; offset += READ_CHUNK_BYTES) {
    yield Buffer.from(data.subarray(offset, offset + READ_CHUNK_BYTES));
  }
}
