/**
 * Stream plumbing of media: metering uploads (size limit, digests), encrypting a part into the
 * blob store, and reading a media's plaintext (whole or a byte range) back across its parts.
 */
import { finished, pipeline, Readable, Transform, type TransformCallback } from "node:stream";
import type { BlobStore } from "../../adapters/blob-store/blob-store.js";
import { IntegrityError } from "../../crypto/integrity-error.js";
import {
  BLOB_HEADER_BYTES,
  createDecryptStream,
  createEncryptStream,
  createRangeDecryptor,
  segmentSpan,
} from "../../crypto/segment-aead.js";
import { adoptLastView } from "../../shared/owned-buffers.js";
import type { MediaPartRow } from "./media.repository.js";
import type { DigestSink } from "./media-digest-cache.js";

export { type Digests, newDigests, type PlaintextDigest } from "./media-digests.js";

/**
 * Counts the bytes flowing through, feeds them to `digests` (when given) and fails the stream
 * with `onLimit()`'s error as soon as more than `limit` bytes have passed. Bytes pass on at once;
 * only the next piece waits while the digest worker is behind.
 */
export class UploadMeter extends Transform {
  bytes = 0;

  constructor(
    private readonly limit: number,
    private readonly onLimit: () => Error,
    private readonly digests: DigestSink | undefined,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) {
      callback(this.onLimit());
      return;
    }
    // A multipart file's slice that ends a body piece frees the piece once sealed.
    adoptLastView(chunk);
    // Digests first: they copy the bytes, and the encryptor may free an owned piece once sealed.
    const room = this.digests?.update(chunk);
    this.push(chunk);
    if (room) room.then(() => callback(), callback);
    else callback();
  }
}

/** What storing one part produced. */
export interface StoredPart {
  key: string;
  store: string;
  /** The blob's 21-byte header, base64. */
  header: string;
  plainBytes: number;
}

/**
 * Encrypts `source` as part `partIndex` under `dek` into blob `key`, metering it with `meter`.
 * Rejects with the first error of the source, the meter (limit) or the store; the blob is then absent.
 */
export async function storeEncryptedPart(
  store: BlobStore,
  key: string,
  dek: Buffer,
  partIndex: number,
  source: Readable,
  meter: UploadMeter,
): Promise<StoredPart> {
  const encrypt = createEncryptStream(dek, partIndex);
  let sourceError: Error | undefined;
  const body = pipeline(source, meter, encrypt, (err) => {
    if (err) sourceError = err;
  });
  try {
    await store.put(key, body);
  } catch (error) {
    // The meter's limit error (or the client's abort) explains the failure better than the store's.
    throw sourceError ?? error;
  }
  if (sourceError) {
    await store.delete(key).catch(() => {});
    throw sourceError;
  }
  if (encrypt.plainBytes !== meter.bytes) {
    // Bytes counted (and hashed) but not stored: a body piece freed before it was encrypted
    // (ADR 0047). Never recorded as if whole.
    await store.delete(key).catch(() => {});
    throw new Error(
      `stored ${encrypt.plainBytes} of the ${meter.bytes} bytes received for part ${partIndex}`,
    );
  }
  return { key, store: store.kind, header: encrypt.header.toString("base64"), plainBytes: meter.bytes };
}

/** An inclusive plaintext byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The plaintext of a media, in order: every part decrypted and verified, or only `range`. Errors
 * (IntegrityError for tampering, a missing blob, a blob of another store) surface as the stream's
 * error; no unverified byte is ever emitted. Memory stays at a few segments whatever the size.
 */
export function readPlaintext(
  store: BlobStore,
  dek: Buffer,
  parts: MediaPartRow[],
  range?: ByteRange,
): Readable {
  return new PlaintextStream(store, dek, planParts(parts, range));
}

/** The parts holding `range` (all parts without one), each with its bytes to read. */
function planParts(parts: MediaPartRow[], range: ByteRange | undefined): PlannedPart[] {
  const planned: PlannedPart[] = [];
  let offset = 0;
  for (const part of parts) {
    const size = Number(part.plain_bytes);
    const partStart = offset;
    const partEnd = offset + size - 1;
    offset += size;
    let local: ByteRange | undefined;
    if (range) {
      if (size === 0 || partEnd < range.start || partStart > range.end) continue;
      local = {
        start: Math.max(range.start, partStart) - partStart,
        end: Math.min(range.end, partEnd) - partStart,
      };
    } else if (size > 0) {
      local = { start: 0, end: size - 1 };
    }
    planned.push({ part, size, local });
  }
  return planned;
}

/**
 * The planned parts' plaintext, one part stream after another, each piece pushed on as the part
 * stream pushed it (the decryptor's own buffer, which the connection frees once written: ADR
 * 0047), the part paused while this stream is full. Reads up to 1 MiB ahead: a direct read's
 * block, so the next block is read while the connection still has bytes to send.
 */
class PlaintextStream extends Readable {
  readonly #store: BlobStore;
  readonly #dek: Buffer;
  readonly #planned: PlannedPart[];
  #index = 0; // the next part to start streaming
  #current: Readable | undefined;
  #next: Promise<Readable> | undefined;
  #opening = false;

  constructor(store: BlobStore, dek: Buffer, planned: PlannedPart[]) {
    super({ highWaterMark: 1024 * 1024 });
    this.#store = store;
    this.#dek = dek;
    this.#planned = planned;
  }

  override _read(): void {
    if (this.#current) this.#current.resume();
    else if (!this.#opening) this.#startNext();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#current?.destroy();
    this.#current = undefined;
    this.#next?.then(
      (stream) => stream.destroy(),
      () => {},
    );
    this.#next = undefined;
    callback(error);
  }

  // The next part is opened, and its first block read, while the current one streams, so a media
  // of many chunks does not wait for each blob's open and first read in turn. Its errors surface
  // in order, when reached: `#stream`'s `finished` reports an error the part already had.
  #open(i: number): Promise<Readable> | undefined {
    if (i >= this.#planned.length) return undefined;
    const opening = openPlanned(this.#store, this.#dek, this.#planned[i]!).then((part) => {
      part.on("error", noop);
      part.read(0);
      return part;
    });
    opening.catch(noop);
    return opening;
  }

  #startNext(): void {
    const opening = this.#index === 0 ? this.#open(0) : this.#next;
    if (!opening) {
      this.push(null);
      return;
    }
    this.#index++;
    this.#next = this.#open(this.#index);
    this.#opening = true;
    opening.then(
      (part) => {
        this.#opening = false;
        if (this.destroyed) {
          part.destroy();
          return;
        }
        this.#stream(part);
      },
      (error: Error) => {
        this.#opening = false;
        this.destroy(error);
      },
    );
  }

  #stream(part: Readable): void {
    this.#current = part;
    part.on("data", (piece: Buffer) => {
      if (!this.push(piece)) part.pause();
    });
    finished(part, { writable: false }, (error) => {
      if (this.#current !== part) return;
      this.#current = undefined;
      part.destroy();
      if (error) this.destroy(error);
      else this.#startNext();
    });
  }
}

/** A part to read and which of its plaintext bytes (none for an empty part). */
interface PlannedPart {
  part: MediaPartRow;
  size: number;
  local: ByteRange | undefined;
}

async function openPlanned(store: BlobStore, dek: Buffer, { part, size, local }: PlannedPart) {
  if (part.blob_store !== store.kind) {
    throw new Error(
      `part ${part.part_index} of media ${part.media_id} was written by the ${part.blob_store} blob store, but this server uses ${store.kind}`,
    );
  }
  return openPart(store, dek, part, size, local);
}

async function openPart(
  store: BlobStore,
  dek: Buffer,
  part: MediaPartRow,
  size: number,
  local: ByteRange | undefined,
): Promise<Readable> {
  const header = part.header ? Buffer.from(part.header, "base64") : await readHeader(store, part.blob_key);
  if (!local) {
    // An empty part: still fetch and verify the blob (header and one empty final segment).
    const source = await store.get(part.blob_key);
    return pipeline(source, createDecryptStream(dek, part.part_index, { expectedHeader: header }), noop);
  }
  const span = segmentSpan(local.start, local.end, size);
  // Decrypted as the store reads: the local store's direct reads hand their buffer over uncopied.
  return store.getThrough(
    part.blob_key,
    { start: span.blobStart, end: span.blobEndInclusive },
    createRangeDecryptor(dek, part.part_index, header, span),
  );
}

async function readHeader(store: BlobStore, key: string): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of await store.get(key, { start: 0, end: BLOB_HEADER_BYTES - 1 }))
    pieces.push(piece as Buffer);
  const header = Buffer.concat(pieces);
  if (header.length !== BLOB_HEADER_BYTES)
    throw new IntegrityError("encrypted blob is truncated (no header)");
  return header;
}

function noop(): void {}

/**
 * Reads a stream's first piece before anything is sent, so a failure at the very start (a
 * missing or tampered first segment) can still be answered with a JSON error. Resolves with the
 * same stream, paused, that piece put back in front (the very buffer, so it can still be freed once
 * written: ADR 0047); rejects with the source's error.
 */
export async function primeStream(source: Readable): Promise<Readable> {
  const first = await new Promise<Buffer | undefined>((resolve, reject) => {
    const onData = (piece: Buffer) => {
      source.pause();
      source.off("data", onData);
      resolve(piece);
    };
    source.on("data", onData);
    // Left listening (its error listener too) until the caller has added its own: a failure after
    // the first piece then destroys the stream rather than going unheard.
    finished(source, { writable: false }, (error) => {
      source.off("data", onData);
      if (error) reject(error);
      else resolve(undefined);
    });
  });
  if (!first) return Readable.from([], { objectMode: false }); // it ended: nothing more to read
  source.unshift(first);
  return source;
}

/**
 * Reads `source` into memory while it stays within `limit` bytes (a chunk whose part number is
 * not known yet). Resolves `{ pieces }` at its end, or `{ pieces, rest }` once it grows past the
 * limit, where `rest` streams the buffered pieces followed by the remainder of the source.
 */
export async function bufferUpTo(
  source: Readable,
  limit: number,
): Promise<{ pieces: Buffer[]; rest?: Readable }> {
  const iterator = source[Symbol.asyncIterator]();
  const pieces: Buffer[] = [];
  let total = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { pieces };
    const piece = next.value as Buffer;
    pieces.push(piece);
    total += piece.length;
    if (total > limit) {
      async function* rest(): AsyncGenerator<Buffer> {
        try {
          yield* pieces.splice(0);
          for (;;) {
            const more = await iterator.next();
            if (more.done) return;
            yield more.value as Buffer;
          }
        } finally {
          await iterator.return?.();
        }
      }
      return { pieces: [], rest: Readable.from(rest(), { objectMode: false }) };
    }
  }
}
