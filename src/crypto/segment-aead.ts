/**
 * Segmented AEAD streams for media parts (docs/adr/0011-blob-format.md): encrypt a part into a
 * blob, decrypt a whole blob or a byte range of it. The blob layout and key, nonce and additional
 * data derivation are documented in segment-format.ts, re-exported here.
 */
import { Transform, type TransformCallback } from "node:stream";
import { consumerTransform } from "../shared/consumer-transform.js";
import { markOwned, releaseOwned } from "../shared/owned-buffers.js";
import { IntegrityError } from "./integrity-error.js";
import {
  assertDek,
  assertNonNegativeInteger,
  assertPartIndex,
  BLOB_HEADER_BYTES,
  createBlobHeader,
  PartCipher,
  parseBlobHeader,
  SEGMENT_BLOB_BYTES,
  SEGMENT_PLAINTEXT_BYTES,
  SEGMENT_TAG_BYTES,
  type SegmentSpan,
} from "./segment-format.js";

export {
  BLOB_FORMAT_VERSION,
  BLOB_HEADER_BYTES,
  type BlobHeader,
  decryptedSize,
  encryptedSize,
  parseBlobHeader,
  SEGMENT_BLOB_BYTES,
  SEGMENT_PLAINTEXT_BYTES,
  SEGMENT_TAG_BYTES,
  type SegmentSpan,
  segmentSpan,
} from "./segment-format.js";

/** An encrypting stream that also exposes the header it writes first. */
export interface EncryptStream extends Transform {
  /**
   * A copy of the blob's header (BLOB_HEADER_BYTES). Storing it with the part row lets reads
   * skip fetching it and refuse an older blob of the same part put back in its place.
   */
  readonly header: Buffer;
  /** Plaintext bytes sealed so far: once the stream has ended, every byte it was given. */
  readonly plainBytes: number;
}

/**
 * Encrypts one part: plaintext in, blob bytes (header, then segments) out, with back pressure.
 * Throws TypeError/RangeError synchronously unless dek is 32 bytes and partIndex a uint32. The
 * ciphertext buffers (not the header nor the tags) are each the only view of their memory and
 * marked so (`markOwned`): whoever copies one out last may free it. An input buffer marked owned
 * (a raw request body's piece) is freed once every byte of it is sealed.
 */
export function createEncryptStream(dek: Buffer, partIndex: number): EncryptStream {
  return new SegmentEncryptStream(dek, partIndex);
}

/**
 * Decrypts a whole blob: blob bytes in (the header, then every segment), verified plaintext out.
 * Emits IntegrityError (pushing nothing more) on any tampering, truncation or trailing data, or
 * when the blob's header differs from `expectedHeader`; never emits unverified bytes. Throws
 * TypeError/RangeError synchronously on a bad dek or partIndex. Byte ranges go through
 * createRangeDecryptStream or createRangeDecryptor.
 */
export function createDecryptStream(
  dek: Buffer,
  partIndex: number,
  opts: { expectedHeader?: Buffer } = {},
): Transform {
  return new SegmentDecryptStream(dek, partIndex, opts.expectedHeader);
}

/**
 * Decrypts a byte range: `header` is the blob's first BLOB_HEADER_BYTES bytes, the input is exactly
 * the blob bytes span.blobStart..span.blobEndInclusive, the output exactly the plaintext range the
 * span was computed for. Emits IntegrityError on a bad header, tampering, or input that is shorter
 * or longer than the span. The final flag is only checked when the span includes the final segment.
 * A stream of `createRangeDecryptor`'s work.
 */
export function createRangeDecryptStream(
  dek: Buffer,
  partIndex: number,
  header: Buffer,
  span: SegmentSpan,
): Transform {
  const decryptor = createRangeDecryptor(dek, partIndex, header, span);
  return consumerTransform(decryptor, {
    readableHighWaterMark: SEGMENT_PLAINTEXT_BYTES,
    writableHighWaterMark: SEGMENT_BLOB_BYTES,
  });
}

/**
 * Decrypts a byte range synchronously, as createRangeDecryptStream does, for a caller that feeds
 * it input with `update` and ends it with `final`; each returns the verified plaintext it freed.
 * `update` never keeps its argument (nor a view of it) beyond the call: it may be a view of a
 * buffer the caller refills right after. Both throw IntegrityError on any failure, after which
 * the decryptor is unusable. Throws TypeError/RangeError synchronously on a bad dek, partIndex or
 * span. Every buffer returned is the only view of its memory and marked so (`markOwned`).
 */
export function createRangeDecryptor(
  dek: Buffer,
  partIndex: number,
  header: Buffer,
  span: SegmentSpan,
): SegmentDecryptor {
  assertNonNegativeInteger(span.firstSegment, "span.firstSegment");
  assertNonNegativeInteger(span.lastSegment, "span.lastSegment");
  assertNonNegativeInteger(span.skipBytes, "span.skipBytes");
  assertNonNegativeInteger(span.takeBytes, "span.takeBytes");
  assertNonNegativeInteger(span.blobStart, "span.blobStart");
  assertNonNegativeInteger(span.blobEndInclusive, "span.blobEndInclusive");
  if (span.lastSegment < span.firstSegment)
    throw new RangeError("span.lastSegment precedes span.firstSegment");
  const lastBytes =
    span.blobEndInclusive + 1 - span.blobStart - (span.lastSegment - span.firstSegment) * SEGMENT_BLOB_BYTES;
  if (
    lastBytes < SEGMENT_TAG_BYTES ||
    lastBytes > SEGMENT_BLOB_BYTES ||
    (!span.includesFinalSegment && lastBytes !== SEGMENT_BLOB_BYTES)
  )
    throw new RangeError("span's blob bytes do not match its segments");
  return new SegmentDecryptor(dek, partIndex, header, span, lastBytes);
}

/**
 * The synchronous decryption of a span of segments whose layout is known in advance (so each
 * segment is deciphered as its bytes arrive, with its final flag already known): see
 * createRangeDecryptor.
 */
export class SegmentDecryptor {
  readonly #dek: Buffer;
  readonly #partIndex: number;
  readonly #header: Buffer;
  readonly #span: SegmentSpan;
  readonly #lastBytes: number;
  /** The current segment's tag, copied in as it arrives. */
  readonly #tag = Buffer.alloc(SEGMENT_TAG_BYTES);
  /** The current segment's plaintext, held until its tag is verified. */
  #held: Buffer[] = [];
  #cipher: PartCipher | undefined;
  #decipher: ReturnType<PartCipher["decipher"]> | undefined;
  #segmentIndex: number;
  /** Input bytes of the current segment still to come: ciphertext, then tag. */
  #segmentLeft = 0;
  #started = false;
  #failed = false;
  #skip: number;
  #remaining: number;

  constructor(dek: Buffer, partIndex: number, header: Buffer, span: SegmentSpan, lastBytes: number) {
    assertDek(dek);
    assertPartIndex(partIndex);
    this.#dek = dek;
    this.#partIndex = partIndex;
    this.#header = header;
    this.#span = span;
    this.#lastBytes = lastBytes;
    this.#segmentIndex = span.firstSegment;
    this.#skip = span.skipBytes;
    this.#remaining = span.takeBytes;
  }

  /** Consumes `input` (not kept beyond this call); returns the plaintext verified by it. */
  update(input: Buffer): Buffer[] {
    return this.#guard(() => {
      const out: Buffer[] = [];
      let at = 0;
      while (at < input.length) {
        if (this.#segmentLeft === 0) this.#beginSegment();
        const tagAt = this.#segmentLeft - SEGMENT_TAG_BYTES; // ciphertext bytes still to come
        const n = Math.min(this.#segmentLeft, input.length - at);
        const cipherBytes = Math.min(Math.max(tagAt, 0), n);
        if (cipherBytes > 0) {
          // update() copies its result into a new buffer: nothing refers to `input` afterwards.
          const plain = this.#decipher!.update(input.subarray(at, at + cipherBytes));
          if (plain.length > 0) this.#held.push(plain);
        }
        if (n > cipherBytes) {
          const tagFrom = SEGMENT_TAG_BYTES - Math.min(this.#segmentLeft, SEGMENT_TAG_BYTES);
          input.copy(this.#tag, tagFrom, at + cipherBytes, at + n);
        }
        at += n;
        this.#segmentLeft -= n;
        if (this.#segmentLeft === 0) this.#endSegment(out);
      }
      return out;
    });
  }

  /** Ends the input; throws IntegrityError unless all of the span arrived. Returns nothing more. */
  final(): Buffer[] {
    return this.#guard(() => {
      if (!this.#started) {
        parseBlobHeader(this.#header);
        throw new IntegrityError("encrypted blob is truncated (no segments)");
      }
      if (this.#segmentLeft !== 0 || this.#segmentIndex <= this.#span.lastSegment)
        throw new IntegrityError("encrypted range is truncated");
      if (this.#remaining !== 0) throw new IntegrityError("encrypted blob is shorter than the range expects");
      return [];
    });
  }

  #guard(work: () => Buffer[]): Buffer[] {
    if (this.#failed) throw new IntegrityError("encrypted range already failed to decrypt");
    try {
      return work();
    } catch (error) {
      this.#failed = true;
      this.#held = [];
      throw asIntegrityError(error);
    }
  }

  #beginSegment(): void {
    if (!this.#cipher) {
      parseBlobHeader(this.#header);
      this.#cipher = new PartCipher(this.#dek, this.#partIndex, this.#header);
      this.#started = true;
    }
    const { lastSegment, includesFinalSegment } = this.#span;
    if (this.#segmentIndex > lastSegment) throw new IntegrityError("encrypted range is longer than expected");
    const last = this.#segmentIndex === lastSegment;
    this.#decipher = this.#cipher.decipher(this.#segmentIndex, last && includesFinalSegment);
    this.#segmentLeft = last ? this.#lastBytes : SEGMENT_BLOB_BYTES;
  }

  #endSegment(out: Buffer[]): void {
    const decipher = this.#decipher!;
    this.#decipher = undefined;
    decipher.setAuthTag(this.#tag);
    try {
      decipher.final();
    } catch (error) {
      throw new IntegrityError(`segment ${this.#segmentIndex} failed authentication`, { cause: error });
    }
    this.#segmentIndex++;
    const held = this.#held;
    this.#held = [];
    for (let piece of held) {
      if (this.#skip > 0) {
        const skipped = Math.min(this.#skip, piece.length);
        this.#skip -= skipped;
        piece = piece.subarray(skipped);
      }
      if (piece.length > this.#remaining) piece = piece.subarray(0, this.#remaining);
      if (piece.length === 0) continue;
      this.#remaining -= piece.length;
      // The only view of decipher's fresh output: freeable once the connection has written it.
      out.push(markOwned(piece));
    }
  }
}

/** A FIFO of buffers from which exact byte counts are taken as zero-copy slices. */
class ByteQueue {
  readonly #chunks: Buffer[] = [];
  /** Bytes of the first queued buffer already taken. */
  #head = 0;
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.length += chunk.length;
  }

  /**
   * Removes and returns the next `n` bytes (n <= length) as slices of the queued buffers. Each
   * queued buffer whose last byte is taken is added to `spent`, when given.
   */
  take(n: number, spent?: Buffer[]): Buffer[] {
    const pieces: Buffer[] = [];
    let wanted = n;
    while (wanted > 0) {
      const chunk = this.#chunks[0]!;
      // Empty buffers are never queued: one that reads empty now had its memory freed (ADR 0047).
      if (chunk.length === 0) throw new Error("a queued buffer was freed before it was read");
      const left = chunk.length - this.#head;
      if (left <= wanted) {
        pieces.push(this.#head === 0 ? chunk : chunk.subarray(this.#head));
        wanted -= left;
        this.#chunks.shift();
        this.#head = 0;
        spent?.push(chunk);
      } else {
        pieces.push(chunk.subarray(this.#head, this.#head + wanted));
        this.#head += wanted;
        wanted = 0;
      }
    }
    this.length -= n;
    return pieces;
  }
}

class SegmentEncryptStream extends Transform implements EncryptStream {
  readonly #cipher: PartCipher;
  readonly #header: Buffer;
  readonly #pending = new ByteQueue();
  /** Input buffers whose every byte is in the segment being sealed. */
  readonly #spent: Buffer[] = [];
  #segmentIndex = 0;
  #plainBytes = 0;

  constructor(dek: Buffer, partIndex: number) {
    assertDek(dek);
    assertPartIndex(partIndex);
    super({ readableHighWaterMark: SEGMENT_BLOB_BYTES, writableHighWaterMark: SEGMENT_PLAINTEXT_BYTES });
    const header = createBlobHeader();
    this.#cipher = new PartCipher(dek, partIndex, header);
    this.#header = header;
    this.push(Buffer.from(header));
  }

  get header(): Buffer {
    return Buffer.from(this.#header);
  }

  get plainBytes(): number {
    return this.#plainBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#pending.push(chunk);
    try {
      // A segment is known not to be final only once a byte beyond it has arrived.
      while (this.#pending.length > SEGMENT_PLAINTEXT_BYTES) {
        this.#sealSegment(this.#pending.take(SEGMENT_PLAINTEXT_BYTES, this.#spent), false);
      }
    } catch (error) {
      callback(error as Error);
      return;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.#sealSegment(this.#pending.take(this.#pending.length, this.#spent), true);
    } catch (error) {
      callback(error as Error);
      return;
    }
    callback();
  }

  #sealSegment(pieces: Buffer[], final: boolean): void {
    const cipher = this.#cipher.cipher(this.#segmentIndex++, final);
    // Pieces are at most 64 KiB in total, so the cipher is never fed an oversized buffer.
    for (const piece of pieces) {
      // Counted as read now: a piece freed before its time reads as empty and shows as missing bytes.
      this.#plainBytes += piece.length;
      // Fresh output of its own: a store that copies it out may free it at once (ADR 0047).
      const out = cipher.update(piece);
      if (out.length > 0) this.push(markOwned(out));
    }
    cipher.final();
    this.push(cipher.getAuthTag());
    // Plaintext wholly sealed: an owned piece (a request body's, ADR 0047) is freed now, not at
    // the next collection. Whoever else needed its bytes copied them before handing it on.
    for (const piece of this.#spent) releaseOwned(piece);
    this.#spent.length = 0;
  }
}

/** Whole-blob decryption, each segment's finality decided by where the input ends. */
class SegmentDecryptStream extends Transform {
  readonly #dek: Buffer;
  readonly #partIndex: number;
  readonly #expectedHeader: Buffer | undefined;
  readonly #input = new ByteQueue();
  #cipher: PartCipher | undefined;
  #segmentIndex = 0;

  constructor(dek: Buffer, partIndex: number, expectedHeader: Buffer | undefined) {
    assertDek(dek);
    assertPartIndex(partIndex);
    super({ readableHighWaterMark: SEGMENT_PLAINTEXT_BYTES, writableHighWaterMark: SEGMENT_BLOB_BYTES });
    this.#dek = dek;
    this.#partIndex = partIndex;
    this.#expectedHeader = expectedHeader;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#input.push(chunk);
    try {
      if (!this.#cipher) {
        if (this.#input.length < BLOB_HEADER_BYTES) {
          callback();
          return;
        }
        // Validated here so a bad header surfaces as a stream error that pipeline() propagates.
        const header = Buffer.concat(this.#input.take(BLOB_HEADER_BYTES));
        parseBlobHeader(header);
        if (this.#expectedHeader && !header.equals(this.#expectedHeader)) {
          throw new IntegrityError("encrypted blob is not the one recorded for this part");
        }
        this.#cipher = new PartCipher(this.#dek, this.#partIndex, header);
      }
      // A segment is known not to be final only once a byte beyond it is here.
      while (this.#input.length > SEGMENT_BLOB_BYTES) this.#openSegment(SEGMENT_BLOB_BYTES, false);
      callback();
    } catch (error) {
      callback(asIntegrityError(error));
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (!this.#cipher) throw new IntegrityError("encrypted blob is truncated (no segments)");
      if (this.#input.length < SEGMENT_TAG_BYTES) {
        throw new IntegrityError("encrypted blob is truncated (final segment missing)");
      }
      this.#openSegment(this.#input.length, true);
      callback();
    } catch (error) {
      callback(asIntegrityError(error));
    }
  }

  #openSegment(blobBytes: number, final: boolean): void {
    const decipher = this.#cipher!.decipher(this.#segmentIndex, final);
    const ciphertext = this.#input.take(blobBytes - SEGMENT_TAG_BYTES);
    decipher.setAuthTag(Buffer.concat(this.#input.take(SEGMENT_TAG_BYTES)));
    // update() returns plaintext before the tag is checked: hold it until final() succeeds.
    const plaintext: Buffer[] = [];
    for (const piece of ciphertext) {
      const out = decipher.update(piece);
      if (out.length > 0) plaintext.push(out);
    }
    try {
      decipher.final();
    } catch (error) {
      throw new IntegrityError(`segment ${this.#segmentIndex} failed authentication`, { cause: error });
    }
    this.#segmentIndex++;
    for (const piece of plaintext) this.push(piece);
  }
}

function asIntegrityError(error: unknown): IntegrityError {
  return error instanceof IntegrityError
    ? error
    : new IntegrityError("encrypted blob could not be decrypted", { cause: error });
}
