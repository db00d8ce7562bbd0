import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import { Type } from "typebox";
import { requestContext } from "../../http/fetch-metadata.js";
import { renderDocument } from "../../web/layout.js";
import type { RecipientContext } from "./recipient.service.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The resolved recipient link of a /r/ route (set when the link is loaded; drives AAA-0011). */
    recipientCtx: RecipientContext | undefined;
    /** The push or pull files page was shown (ABB-0020 with the AAA-0011 entry). */
    recipientPageLoaded: boolean;
  }
}

/** `:identifier` path parameter of recipient routes. */
export const IdentifierParams = Type.Object({
  identifier: Type.String({ description: "The request's public identifier from the recipient link." }),
});

/** The 403 of a download asked for as an image, style sheet, font, frame or fetch (refuseForeignDownload). */
export const refusedDownloadResponse = {
  description: "Asked for as an image, style sheet, font, frame or fetch: not a download.",
  content: { "text/plain": { schema: Type.String() } },
};

/** An HTML response in a route's OpenAPI schema. */
export function htmlResponse(description: string) {
  return { description, content: { "text/html": { schema: Type.String() } } };
}

/** Parses the Cookie header into name → value (first occurrence wins, values URL-decoded). */
export function readCookies(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of String(request.headers.cookie ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 1) continue;
    const name = pair.slice(0, eq).trim();
    if (name in out) continue;
    try {
      out[name] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      // a malformed value is ignored like a missing cookie
    }
  }
  return out;
}

/** True when the page is served over https (directly or, with TRUST_PROXY, behind a proxy). */
export function isHttps(request: FastifyRequest, publicBaseUrl: string): boolean {
  return request.protocol === "https" || publicBaseUrl.startsWith("https:");
}

/** Appends a Set-Cookie header: HttpOnly, path-scoped, SameSite as given, Secure over https. */
export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number; secure: boolean; sameSite: "Lax" | "Strict" },
): void {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    "HttpOnly",
    `SameSite=${options.sameSite}`,
  ];
  if (options.secure) parts.push("Secure");
  const existing = reply.getHeader("set-cookie");
  const list = Array.isArray(existing) ? existing : existing ? [String(existing)] : [];
  reply.header("set-cookie", [...list, parts.join("; ")]);
}

/**
 * Answers a GET of a download (a file or a zip, counted) that the request's context may not start
 * (ADR 0055): an embedded request (an image, style sheet, font, frame, fetch) gets 403; a
 * navigation another site started goes to `pageUrl` (303), where the recipient downloads from.
 * Returns true when it answered. A same-origin navigation, one the user started, and a client that
 * sends no Fetch Metadata (holding the link is its authority) pass; HEAD counts nothing and passes.
 */
export function refuseForeignDownload(
  request: FastifyRequest,
  reply: FastifyReply,
  pageUrl: string,
): boolean {
  if (request.method !== "GET") return false;
  const context = requestContext(request);
  if (context === "embedded") {
    reply.code(403).type("text/plain; charset=utf-8").send("Files are downloaded from their page.");
    return true;
  }
  if (context === "foreign") {
    reply.redirect(pageUrl, 303);
    return true;
  }
  return false;
}

/** Sends a rendered page with a status. */
export function sendPage(reply: FastifyReply, status: number, page: VNode): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(renderDocument(page));
}

/** The path of a request's pages: `/r/<identifier>/` (cookie scope). */
export function pagePath(identifier: string): string {
  return `/r/${encodeURIComponent(identifier)}/`;
}
