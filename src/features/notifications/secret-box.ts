/**
 * Small secrets at rest (custom SMTP passwords, queued two-factor messages): AES-256-GCM with the key
 * ring's "secrets" key of kid `kid`, bound to a purpose label as additional data.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";

/** A sealed secret and the kid of the key that sealed it. */
export interface Sealed {
  kid: string;
  /** base64url(nonce 12 bytes || ciphertext || tag 16 bytes) */
  ciphertext: string;
}

/** Encrypts `plaintext` with the active key; `label` must be given again to open it. */
export function sealSecret(keyRing: KeyRing, plaintext: string, label: string): Sealed {
  const kid = keyRing.activeKid;
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyRing.derive(kid, "secrets"), nonce);
  cipher.setAAD(Buffer.from(label, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return { kid, ciphertext: Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64url") };
}

/** Decrypts a Sealed secret; throws Error when the key is unknown, the label differs or it was altered. */
export function openSecret(keyRing: KeyRing, sealed: Sealed, label: string): string {
  const raw = Buffer.from(sealed.ciphertext, "base64url");
  if (raw.length < 28) throw new Error("sealed secret is truncated");
  const decipher = createDecipheriv(
    "aes-256-gcm",
    keyRing.derive(sealed.kid, "secrets"),
    raw.subarray(0, 12),
  );
  decipher.setAAD(Buffer.from(label, "utf8"));
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString(
    "utf8",
  );
}
