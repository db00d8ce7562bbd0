import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import { Type } from "typebox";
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

/** Sends a rendered page with a status. */
export function sendPage(reply: FastifyReply, status: number, page: VNode): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(renderDocument(page));
}

/** The path of a request's pages: `/r/<identifier>/` (cookie scope). */
export function pagePath(identifier: string): string {
  return `/r/${encodeURIComponent(identifier)}/`;
}
