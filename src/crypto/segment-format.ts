/**
 * Encrypted blob format of media parts (docs/adr/0011-blob-format.md); the streams that
 * read and write it are in segment-aead.ts.
 *
 * Blob layout, format version 1 (all integers big-endian):
 *
 *   offset  size  field
 *   0       4     magic, ASCII "FRY1"
 *   4       1     format version, 0x01
 *   5       16    salt, random per blob
 *   21      ...   segments: AES-256-GCM(plaintext of 64 KiB) || 16-byte tag, in order
 *
 * Every segment holds exactly 64 KiB of plaintext except the last (the "final" segment), which
 * holds 0..64 KiB; a blob always has at least one segment, so an empty part is header + one empty
 * final segment (a 16-byte tag). Per part:
 *
 *   key   = HKDF-SHA256(ikm = DEK, salt, info = "ferry-part-v1" || uint32 partIndex, 32 bytes)
 *   nonce = uint32 partIndex || uint64 segmentIndex                          (12 bytes)
 *   aad   = header (21 bytes) || uint8 isFinal (0x00 or 0x01)
 *
 * The random salt gives every blob its own key, so re-encrypting a part (a re-sent chunk) never
 * repeats a (key, nonce) pair. The segment index in the nonce stops reordering, the final flag in
 * the AAD stops truncation at a segment boundary and extension, the header in the AAD binds the
 * salt and version, and the part index in the key stops moving a blob to another part.
 */
import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { IntegrityError } from "./integrity-error.js";

/** Plaintext bytes per segment (64 KiB); only the final segment may hold fewer. */
export const SEGMENT_PLAINTEXT_BYTES = 64 * 1024;
/** GCM tag bytes appended to every segment. */
export const SEGMENT_TAG_BYTES = 16;
/** Encrypted bytes of a full (non-final) segment: 64 KiB + 16. */
export const SEGMENT_BLOB_BYTES = SEGMENT_PLAINTEXT_BYTES + SEGMENT_TAG_BYTES;
/** Bytes of the blob header (magic, version, salt) that precedes the segments. */
export const BLOB_HEADER_BYTES = 21;
/** Format version written by this module. */
export const BLOB_FORMAT_VERSION = 1;

const MAGIC = Buffer.from("FRY1", "ascii");
const SALT_OFFSET = 5;
const SALT_BYTES = 16;
const KEY_INFO_PREFIX = Buffer.from("ferry-part-v1", "ascii");
const MAX_PART_INDEX = 0xffff_ffff;
const UINT32_SPAN = 0x1_0000_0000;

/** Where a plaintext byte range lives inside an encrypted blob; produced by `segmentSpan`. */
export interface SegmentSpan {
  /** Index of the first segment to read (0-based). */
  firstSegment: number;
  /** Index of the last segment to read (inclusive). */
  lastSegment: number;
  /** First blob byte to fetch: the start of `firstSegment` (the header is fetched separately). */
  blobStart: number;
  /** Last blob byte to fetch (inclusive): the end of `lastSegment`'s tag. */
  blobEndInclusive: number;
  /** Plaintext bytes to drop from the start of `firstSegment`'s plaintext. */
  skipBytes: number;
  /** Plaintext bytes the range holds (plainEndInclusive - plainStart + 1). */
  takeBytes: number;
  /** True when `lastSegment` is the blob's final segment (its final flag is then verified). */
  includesFinalSegment: boolean;
}

/** The parsed blob header. */
export interface BlobHeader {
  version: number;
  /** The blob's random 16-byte salt (a copy). */
  salt: Buffer;
}

/**
 * Size in bytes of the blob that encrypts `plainBytes` bytes of plaintext (header + segments).
 * Throws RangeError unless plainBytes is a non-negative safe integer.
 */
export function encryptedSize(plainBytes: number): number {
  assertNonNegativeInteger(plainBytes, "plainBytes");
  return BLOB_HEADER_BYTES + segmentCount(plainBytes) * SEGMENT_TAG_BYTES + plainBytes;
}

/**
 * Plaintext size of a well-formed blob of `blobBytes` bytes (the inverse of `encryptedSize`).
 * Throws IntegrityError when no plaintext size encrypts to that many bytes.
 */
export function decryptedSize(blobBytes: number): number {
  assertNonNegativeInteger(blobBytes, "blobBytes");
  const body = blobBytes - BLOB_HEADER_BYTES;
  if (body < SEGMENT_TAG_BYTES) throw new IntegrityError("encrypted blob is too short");
  const fullSegments = Math.floor(body / SEGMENT_BLOB_BYTES);
  const rest = body - fullSegments * SEGMENT_BLOB_BYTES;
  if (rest === 0) return fullSegments * SEGMENT_PLAINTEXT_BYTES;
  if (rest < SEGMENT_TAG_BYTES || (rest === SEGMENT_TAG_BYTES && fullSegments > 0)) {
    throw new IntegrityError("encrypted blob has an impossible length");
  }
  return fullSegments * SEGMENT_PLAINTEXT_BYTES + rest - SEGMENT_TAG_BYTES;
}

/**
 * Locates the plaintext bytes plainStart..plainEndInclusive of a part whose plaintext is
 * `plainSize` bytes: which segments to decrypt, which blob bytes to fetch, how much to trim.
 * Throws RangeError unless 0 <= plainStart <= plainEndInclusive < plainSize (safe integers).
 */
export function segmentSpan(plainStart: number, plainEndInclusive: number, plainSize: number): SegmentSpan {
  assertNonNegativeInteger(plainStart, "plainStart");
  assertNonNegativeInteger(plainEndInclusive, "plainEndInclusive");
  assertNonNegativeInteger(plainSize, "plainSize");
  if (plainStart > plainEndInclusive || plainEndInclusive >= plainSize) {
    throw new RangeError(
      `byte range ${plainStart}-${plainEndInclusive} is not within a plaintext of ${plainSize} bytes`,
    );
  }
  const firstSegment = Math.floor(plainStart / SEGMENT_PLAINTEXT_BYTES);
  const lastSegment = Math.floor(plainEndInclusive / SEGMENT_PLAINTEXT_BYTES);
  const lastSegmentPlain = Math.min(
    SEGMENT_PLAINTEXT_BYTES,
    plainSize - lastSegment * SEGMENT_PLAINTEXT_BYTES,
  );
  return {
    firstSegment,
    lastSegment,
    blobStart: BLOB_HEADER_BYTES + firstSegment * SEGMENT_BLOB_BYTES,
    blobEndInclusive:
      BLOB_HEADER_BYTES + lastSegment * SEGMENT_BLOB_BYTES + lastSegmentPlain + SEGMENT_TAG_BYTES - 1,
    skipBytes: plainStart - firstSegment * SEGMENT_PLAINTEXT_BYTES,
    takeBytes: plainEndInclusive - plainStart + 1,
    includesFinalSegment: lastSegment === segmentCount(plainSize) - 1,
  };
}

/**
 * Parses the first BLOB_HEADER_BYTES of a blob. Throws IntegrityError when the buffer is not a
 * header of a supported format version (wrong length, magic or version).
 */
export function parseBlobHeader(header: Buffer): BlobHeader {
  if (header.length !== BLOB_HEADER_BYTES) {
    throw new IntegrityError(`encrypted blob header must be ${BLOB_HEADER_BYTES} bytes`);
  }
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new IntegrityError("not an encrypted blob (bad magic)");
  }
  const version = header[MAGIC.length]!;
  if (version !== BLOB_FORMAT_VERSION) {
    throw new IntegrityError(`unsupported encrypted blob version ${version}`);
  }
  return { version, salt: Buffer.from(header.subarray(SALT_OFFSET, SALT_OFFSET + SALT_BYTES)) };
}

/** A new header of the current format version with a fresh random salt. */
export function createBlobHeader(): Buffer {
  const header = Buffer.alloc(BLOB_HEADER_BYTES);
  MAGIC.copy(header);
  header[MAGIC.length] = BLOB_FORMAT_VERSION;
  randomBytes(SALT_BYTES).copy(header, SALT_OFFSET);
  return header;
}

/** One blob's key, nonces and additional data (from DEK, part index and header), for segment-aead.ts. */
export class PartCipher {
  readonly #key: KeyObject;
  readonly #nonce = Buffer.alloc(12);
  readonly #aadNotFinal: Buffer;
  readonly #aadFinal: Buffer;

  constructor(dek: Buffer, partIndex: number, header: Buffer) {
    const salt = header.subarray(SALT_OFFSET, SALT_OFFSET + SALT_BYTES);
    const info = Buffer.alloc(KEY_INFO_PREFIX.length + 4);
    KEY_INFO_PREFIX.copy(info);
    info.writeUInt32BE(partIndex, KEY_INFO_PREFIX.length);
    this.#key = createSecretKey(Buffer.from(hkdfSync("sha256", dek, salt, info, 32)));
    this.#nonce.writeUInt32BE(partIndex, 0);
    this.#aadNotFinal = Buffer.concat([header, Buffer.from([0])]);
    this.#aadFinal = Buffer.concat([header, Buffer.from([1])]);
  }

  #nonceFor(segmentIndex: number): Buffer {
    this.#nonce.writeUInt32BE(Math.floor(segmentIndex / UINT32_SPAN), 4);
    this.#nonce.writeUInt32BE(segmentIndex % UINT32_SPAN, 8);
    return this.#nonce;
  }

  /** A GCM cipher for one segment, its AAD already set. */
  cipher(segmentIndex: number, final: boolean) {
    const cipher = createCipheriv("aes-256-gcm", this.#key, this.#nonceFor(segmentIndex));
    cipher.setAAD(final ? this.#aadFinal : this.#aadNotFinal);
    return cipher;
  }

  /** A GCM decipher for one segment, its AAD already set (the caller sets the tag). */
  decipher(segmentIndex: number, final: boolean) {
    const decipher = createDecipheriv("aes-256-gcm", this.#key, this.#nonceFor(segmentIndex), {
      authTagLength: SEGMENT_TAG_BYTES,
    });
    decipher.setAAD(final ? this.#aadFinal : this.#aadNotFinal);
    return decipher;
  }
}

function segmentCount(plainBytes: number): number {
  return Math.max(1, Math.ceil(plainBytes / SEGMENT_PLAINTEXT_BYTES));
}

/** Throws TypeError unless `dek` is a 32-byte Buffer. */
export function assertDek(dek: Buffer): void {
  if (!Buffer.isBuffer(dek) || dek.length !== 32) throw new TypeError("data key must be a 32-byte Buffer");
}

/** Throws RangeError unless `partIndex` is an integer in 0..2^32-1. */
export function assertPartIndex(partIndex: number): void {
  if (!Number.isInteger(partIndex) || partIndex < 0 || partIndex > MAX_PART_INDEX) {
    throw new RangeError("partIndex must be an integer in 0..2^32-1");
  }
}

/** Throws RangeError naming `name` unless `value` is a non-negative safe integer. */
export function assertNonNegativeInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer`);
  }
}
