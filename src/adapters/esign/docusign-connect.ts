/**
 * DocuSign Connect (webhook) messages: HMAC verification over the raw body and the JSON (SIM) event
 * shape. Connect sends one `X-DocuSign-Signature-N` header per active HMAC key of the account, each the
 * base64 HMAC-SHA256 of the exact body bytes; any one matching any configured key is enough.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { EsignEventKind, WebhookVerification } from "./esign-provider.js";

const SIGNATURE_HEADER = /^x-docusign-signature-([1-9][0-9]{0,2})$/;
// DocuSign allows up to 100 signature headers; more is not Connect.
const MAX_SIGNATURE_HEADERS = 100;
const DIGEST_BYTES = 32;

const EVENT_KINDS: Record<string, EsignEventKind> = {
  "envelope-sent": "envelope_sent",
  "envelope-delivered": "envelope_delivered",
  "envelope-completed": "envelope_completed",
  "envelope-declined": "envelope_declined",
  "envelope-voided": "envelope_voided",
  "recipient-delivered": "signer_delivered",
  "recipient-completed": "signer_completed",
  "recipient-declined": "signer_declined",
};

/**
 * Verifies a Connect message: a signature header must match one of `hmacKeys` (constant-time, every
 * pair compared), then the body must be a Connect JSON event of `accountId`'s account. The event id is
 * a hash of account, envelope, event, recipient and generation time, so redeliveries share it.
 */
export function verifyConnectMessage(
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
  hmacKeys: readonly string[],
  accountId: string,
): WebhookVerification {
  const signatures = signatureValues(headers);
  if (signatures === undefined || signatures.length === 0) return { ok: false, reason: "missing_signature" };
  if (!signatureMatches(rawBody, signatures, hmacKeys)) return { ok: false, reason: "bad_signature" };

  let message: unknown;
  try {
    message = JSON.parse(rawBody.toString("utf8"));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const parsed = readMessage(message);
  if (parsed === undefined) return { ok: false, reason: "malformed" };
  if (parsed.accountId !== undefined && parsed.accountId.toLowerCase() !== accountId.toLowerCase()) {
    return { ok: false, reason: "wrong_account" };
  }
  const eventId = `dsc_${createHash("sha256")
    .update(
      JSON.stringify([
        accountId.toLowerCase(),
        parsed.envelopeId,
        parsed.event,
        parsed.recipientId ?? "",
        parsed.generatedDateTime,
      ]),
    )
    .digest("hex")}`;
  const occurredAt = new Date(parsed.generatedDateTime);
  return {
    ok: true,
    event: {
      eventId,
      envelopeId: parsed.envelopeId,
      kind: EVENT_KINDS[parsed.event] ?? "other",
      vendorEvent: parsed.event,
      ...(Number.isNaN(occurredAt.getTime()) ? {} : { occurredAt }),
    },
  };
}

/** The decoded signature headers, or undefined when there are too many to be Connect's. */
function signatureValues(headers: Record<string, string | string[] | undefined>): Buffer[] | undefined {
  const values: Buffer[] = [];
  let count = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !SIGNATURE_HEADER.test(name.toLowerCase())) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      count += 1;
      if (count > MAX_SIGNATURE_HEADERS) return undefined;
      const decoded = decodeBase64(one.trim());
      if (decoded !== undefined) values.push(decoded);
    }
  }
  return values;
}

function decodeBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.length === DIGEST_BYTES ? bytes : undefined;
}

/** Compares every signature with every key's digest, without stopping at the first match. */
function signatureMatches(rawBody: Buffer, signatures: Buffer[], hmacKeys: readonly string[]): boolean {
  let matched = false;
  for (const key of hmacKeys) {
    const expected = createHmac("sha256", Buffer.from(key, "utf8")).update(rawBody).digest();
    for (const signature of signatures) {
      if (timingSafeEqual(expected, signature)) matched = true;
    }
  }
  return matched;
}

interface ConnectMessage {
  event: string;
  generatedDateTime: string;
  envelopeId: string;
  accountId?: string;
  recipientId?: string;
}

function readMessage(message: unknown): ConnectMessage | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const { event, generatedDateTime, data } = message as Record<string, unknown>;
  if (typeof event !== "string" || !/^[a-z-]{1,64}$/.test(event)) return undefined;
  if (typeof generatedDateTime !== "string" || generatedDateTime.length > 64) return undefined;
  if (typeof data !== "object" || data === null) return undefined;
  const { envelopeId, accountId, recipientId } = data as Record<string, unknown>;
  if (typeof envelopeId !== "string" || !/^[A-Za-z0-9-]{1,100}$/.test(envelopeId)) return undefined;
  return {
    event,
    generatedDateTime,
    envelopeId,
    ...(typeof accountId === "string" ? { accountId } : {}),
    ...(typeof recipientId === "string" ? { recipientId } : {}),
  };
}
