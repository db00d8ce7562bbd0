import type { FastifyReply } from "fastify";

/**
 * The Content-Security-Policy of recipient pages: no inline script or style, no framing; fonts only
 * from Ferry's origin (the account's uploaded fonts), never `data:` or another host.
 */
const RECIPIENT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/** Cache-Control of an account's font files, kept by applyRecipientHeaders (see longCache). */
const LONG_CACHE = "private, max-age=31536000, immutable";

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
  const keep = reply.getHeader("cache-control") === LONG_CACHE;
  reply.headers(RECIPIENT_HEADERS);
  if (keep) reply.header("cache-control", LONG_CACHE);
  if (https) reply.header("strict-transport-security", "max-age=31536000");
}

/**
 * Marks a reply as cacheable for a year in the reader's browser only (`private`: the URL holds the
 * link's secret); the recipient headers applied later keep it instead of `no-store`.
 */
export function longCache(reply: FastifyReply): void {
  reply.header("cache-control", LONG_CACHE);
}
