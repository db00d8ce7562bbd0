import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
// Standard Webhooks accepts keys of 24 to 64 bytes.
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Returns a new Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/**
 * Returns the `webhook-signature` header value for one message (Standard Webhooks):
 * `v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>` per secret, space-separated, in the given order.
 * Throws TypeError if no secret is given, a secret is malformed, or the timestamp is not a non-negative
 * integer number of seconds; the message never contains the secret.
 */
export function signWebhook(
  secrets: string[],
  msgId: string,
  timestampSeconds: number,
  body: string,
): string {
  if (secrets.length === 0) throw new TypeError("signWebhook: at least one secret is required");
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError("signWebhook: timestamp must be a non-negative integer number of seconds");
  }
  const signedContent = `${msgId}.${timestampSeconds}.${body}`;
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac("sha256", decodeSecret(secret)).update(signedContent, "utf8").digest("base64")}`,
    )
    .join(" ");
}

function decodeSecret(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : "";
  const key = BASE64.test(encoded) ? Buffer.from(encoded, "base64") : Buffer.alloc(0);
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new TypeError(
      "signWebhook: malformed secret (expected the whsec prefix and base64 of 24 to 64 bytes)",
    );
  }
  return key;
}
