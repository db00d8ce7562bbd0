import type { FastifyReply } from "fastify";

/** The Content-Security-Policy of recipient pages: no inline script or style, no framing. */
const RECIPIENT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/** Headers on every recipient page response (HTML, JSON, downloads). */
const RECIPIENT_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": RECIPIENT_CSP,
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-robots-tag": "noindex, nofollow",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
};

/** Sets the recipient security headers on a reply (Strict-Transport-Security too when over https). */
export function applyRecipientHeaders(reply: FastifyReply, https: boolean): void {
  reply.headers(RECIPIENT_HEADERS);
  if (https) reply.header("strict-transport-security", "max-age=31536000");
}
