import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** SHA-256 of `data` (strings as UTF-8) as 64 lowercase hex characters. */
export function sha256Hex(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Compares two secrets (strings as UTF-8) in time independent of where they differ and of their
 * lengths; never throws on a length mismatch.
 */
export function constantTimeEqual(a: Buffer | string, b: Buffer | string): boolean {
  // Comparing fixed-size digests keeps timingSafeEqual's equal-length rule from leaking lengths.
  return timingSafeEqual(sha256(a), sha256(b));
}

/** `bytes` (1-1024, default 32) random bytes as base64url without padding. Throws RangeError otherwise. */
export function randomToken(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024) throw new RangeError("bytes must be 1-1024");
  return randomBytes(bytes).toString("base64url");
}

function sha256(data: Buffer | string): Buffer {
  return createHash("sha256").update(data).digest();
}
