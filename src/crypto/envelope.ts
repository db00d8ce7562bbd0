/**
 * Envelope keys: each media's data key (DEK) is stored wrapped by a key-encryption
 * key (KEK) from the key ring. Wrapped form, version 1:
 *
 *   v1.<kid>.<base64url(nonce 12 bytes || AES-256-GCM(KEK, nonce, DEK) 32 bytes || tag 16 bytes)>
 *
 * with additional data "v1.<kid>", so a wrapped key cannot be re-labelled with another kid.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { IntegrityError } from "./integrity-error.js";

const VERSION = "v1";
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PAYLOAD_BYTES = NONCE_BYTES + KEY_BYTES + TAG_BYTES;
const KID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Returns a fresh random 256-bit data key. */
export function generateDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/**
 * Wraps a 32-byte DEK with a 32-byte KEK identified by `kid` (1-64 chars of [A-Za-z0-9_-]).
 * Throws TypeError on wrong key sizes and RangeError on an invalid kid.
 */
export function wrapDataKey(dek: Buffer, kek: Buffer, kid: string): string {
  assertKey(dek, "data key");
  assertKey(kek, "key-encryption key");
  if (!KID_PATTERN.test(kid)) throw new RangeError("kid must be 1-64 characters of [A-Za-z0-9_-]");
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", kek, nonce);
  cipher.setAAD(additionalData(kid));
  const ciphertext = Buffer.concat([cipher.update(dek), cipher.final()]);
  const payload = Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]);
  return `${VERSION}.${kid}.${payload.toString("base64url")}`;
}

/**
 * Unwraps a DEK, asking `getKek` for the KEK of the wrapped key's kid. Throws IntegrityError when
 * the string is malformed, the kid is unknown (getKek throws or returns undefined), or it was tampered.
 */
export function unwrapDataKey(wrapped: string, getKek: (kid: string) => Buffer | undefined): Buffer {
  const { kid, payload } = parseWrapped(wrapped);
  let kek: Buffer | undefined;
  try {
    kek = getKek(kid);
  } catch (error) {
    throw new IntegrityError(`no key-encryption key for kid "${kid}"`, { cause: error });
  }
  if (!Buffer.isBuffer(kek) || kek.length !== KEY_BYTES) {
    throw new IntegrityError(`no key-encryption key for kid "${kid}"`);
  }
  const decipher = createDecipheriv("aes-256-gcm", kek, payload.subarray(0, NONCE_BYTES), {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(additionalData(kid));
  decipher.setAuthTag(payload.subarray(NONCE_BYTES + KEY_BYTES));
  try {
    return Buffer.concat([
      decipher.update(payload.subarray(NONCE_BYTES, NONCE_BYTES + KEY_BYTES)),
      decipher.final(),
    ]);
  } catch (error) {
    throw new IntegrityError("wrapped data key failed authentication", { cause: error });
  }
}

/** Returns the kid a wrapped key was wrapped under (to find keys to rotate). Throws IntegrityError if malformed. */
export function wrappedKeyKid(wrapped: string): string {
  return parseWrapped(wrapped).kid;
}

function parseWrapped(wrapped: string): { kid: string; payload: Buffer } {
  const fields = typeof wrapped === "string" ? wrapped.split(".") : [];
  const [version, kid, encoded] = fields;
  if (fields.length !== 3 || version !== VERSION || kid === undefined || !KID_PATTERN.test(kid)) {
    throw new IntegrityError("malformed wrapped data key");
  }
  const payload = Buffer.from(encoded ?? "", "base64url");
  // Buffer.from skips invalid characters silently: require the canonical encoding.
  if (payload.length !== PAYLOAD_BYTES || payload.toString("base64url") !== encoded) {
    throw new IntegrityError("malformed wrapped data key");
  }
  return { kid, payload };
}

function additionalData(kid: string): Buffer {
  return Buffer.from(`${VERSION}.${kid}`, "ascii");
}

function assertKey(key: Buffer, name: string): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES)
    throw new TypeError(`${name} must be a 32-byte Buffer`);
}
