/** Thrown (as a rejection) by `get` when no blob is stored under the key. */
export class BlobNotFoundError extends Error {
  override readonly name = "BlobNotFoundError";

  constructor(readonly key: string) {
    super(`no blob stored under "${key}"`);
  }
}

/**
 * The store could not be used because of where it is or how it is set up (endpoint unreachable,
 * missing bucket, refused credentials, a call that took too long): not the blob's fault, and worth
 * retrying once the store is back.
 */
export class BlobStoreUnavailableError extends Error {
  override readonly name = "BlobStoreUnavailableError";

  /**
   * `misconfigured`: the store answered and refused (a missing bucket, refused credentials, an
   * unwritable folder): waiting will not help. Otherwise it did not answer (in time).
   */
  constructor(
    message: string,
    readonly misconfigured = false,
  ) {
    super(message);
  }
}

/** Thrown (as a rejection) by every blob store method given a key or prefix outside the key rules. */
export class InvalidBlobKeyError extends Error {
  override readonly name = "InvalidBlobKeyError";

  constructor(readonly key: string) {
    super(`invalid blob key or prefix ${JSON.stringify(String(key).slice(0, 100))}`);
  }
}

/** Longest accepted key, in characters (all ASCII). */
export const MAX_BLOB_KEY_LENGTH = 512;

// Segments of ASCII letters, digits, "_", "-" and "."; never starting with "." (so no "." or ".."
// segments, and local stores can use dot-names for temporary files).
const SEGMENT = "[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}";
const KEY_PATTERN = new RegExp(`^${SEGMENT}(?:/${SEGMENT})*$`);

/** Whether `key` is a valid blob key such as `media/123/part-4-<random>`: "/"-separated safe segments. */
export function isValidBlobKey(key: string): boolean {
  return typeof key === "string" && key.length <= MAX_BLOB_KEY_LENGTH && KEY_PATTERN.test(key);
}

/** Throws InvalidBlobKeyError unless `key` is a valid blob key. */
export function assertValidBlobKey(key: string): void {
  if (!isValidBlobKey(key)) throw new InvalidBlobKeyError(key);
}

/** Throws InvalidBlobKeyError unless `prefix` is "", a valid key, or a valid key followed by "/". */
export function assertValidBlobPrefix(prefix: string): void {
  if (prefix === "") return;
  const trimmed = typeof prefix === "string" && prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  if (!isValidBlobKey(trimmed)) throw new InvalidBlobKeyError(prefix);
}

/** Throws RangeError unless the range has safe integer bounds with 0 <= start <= end. */
export function assertValidRange(range: { start: number; end: number }): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`invalid byte range ${start}-${end}`);
  }
}

/** The RangeError for a range that starts at or after the end of a blob of `size` bytes. */
export function unsatisfiableRange(key: string, start: number, size?: number): RangeError {
  const known = size === undefined ? "" : ` of ${size} bytes`;
  return new RangeError(`byte range starting at ${start} is past the end of blob "${key}"${known}`);
}
