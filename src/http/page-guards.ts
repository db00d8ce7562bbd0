/**
 * Guards of the browser pages (the dashboard, recipient `/r/` and session `/s/` pages) that run
 * before routing reaches a handler (ADR 0068, ADR 0069):
 *
 * - a Cookie header naming a Ferry cookie twice is refused (400): a cookie planted from another
 *   port or subdomain with a narrower path would otherwise be read instead of the real one;
 * - a state-changing request a browser sends from another origin is refused (403): the `Origin`
 *   header, else `Sec-Fetch-Site`, must say this origin; a client that sends neither is not a
 *   browser and is judged by the form's CSRF token alone;
 * - with DASHBOARD_BASE_URL, the dashboard answers only on its host and the recipient and session
 *   pages never on it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../shared/errors.js";

/** Which family of pages a path belongs to, or undefined for the API and everything else. */
export type PageFamily = "dashboard" | "recipient";

/** The page family of a path (`/dashboard…`, `/r/…`, `/s/…`). */
export function pageFamily(path: string): PageFamily | undefined {
  if (/^\/dashboard(\/|$)/.test(path)) return "dashboard";
  if (/^\/[rs]\//.test(path)) return "recipient";
  return undefined;
}

/** Names of Ferry's cookies: `ferry_*`, with or without the `__Host-` prefix. */
const FERRY_COOKIE = /^(__Host-)?ferry_/;

/** The first Ferry cookie name that a Cookie header holds more than once, if any. */
export function duplicatedFerryCookie(header: string | undefined): string | undefined {
  const seen = new Set<string>();
  for (const pair of String(header ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 1) continue;
    const name = pair.slice(0, eq).trim();
    if (!FERRY_COOKIE.test(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value.trim() : undefined;
}

function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * The origins a page of this request may post from: the configured base URLs' origins and the
 * origin the request itself names (its Host, over http and over https: a recipient host of an
 * account, or a proxy that terminates TLS without TRUST_PROXY).
 */
function ownOrigins(request: FastifyRequest, baseUrls: string[]): Set<string> {
  const out = new Set<string>();
  for (const base of baseUrls) {
    const origin = originOf(base);
    if (origin) out.add(origin);
  }
  const host = request.host;
  if (host) {
    for (const scheme of ["http", "https"]) {
      const origin = originOf(`${scheme}://${host}`);
      if (origin) out.add(origin);
    }
  }
  return out;
}

/**
 * Why a state-changing request comes from another origin, or undefined when it may go on: an
 * `Origin` of this site; else (no `Origin`, or `Origin: null`) `Sec-Fetch-Site: same-origin` or
 * `none` (the user typed or bookmarked it); else no `Origin` and no `Sec-Fetch-Site` (not a
 * browser). Browsers send `Origin: null` on a same-origin form post of a page whose
 * Referrer-Policy is `no-referrer`, as Ferry's pages are, and from sandboxed frames: `null` alone
 * proves nothing either way, so Fetch Metadata decides, and without it the post is refused.
 */
export function foreignOrigin(request: FastifyRequest, baseUrls: string[]): string | undefined {
  if (SAFE_METHODS.has(request.method)) return undefined;
  const origin = singleHeader(request, "origin");
  if (origin !== undefined && origin !== "null") {
    const named = originOf(origin);
    return named && ownOrigins(request, baseUrls).has(named) ? undefined : "another origin";
  }
  const site = singleHeader(request, "sec-fetch-site")?.toLowerCase();
  if (site === "same-origin" || site === "none") return undefined;
  if (site === undefined) return origin === "null" ? "an opaque origin" : undefined;
  return site === "same-site" ? "another origin of this site" : "another site";
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A plain HTML page of the dashboard's guards (no-store, no framing, nothing loaded). */
function sendGuardPage(reply: FastifyReply, status: number, title: string, text: string): FastifyReply {
  return reply
    .code(status)
    .header("cache-control", "no-store")
    .header("x-frame-options", "DENY")
    .header("content-security-policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
    .type("text/html; charset=utf-8")
    .serializer((p) => p as string)
    .send(
      `<!doctype html><html lang="en"><title>${escapeHtml(title)}</title><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></html>`,
    );
}

/** The host (name and port) of a base URL. */
function hostOf(url: string): string {
  return new URL(url).host.toLowerCase();
}

/** Installs the page guards on `app` (an onRequest hook: nothing is parsed or changed before it). */
export function installPageGuards(
  app: FastifyInstance,
  options: { publicBaseUrl: string; dashboardBaseUrl: string | undefined },
): void {
  const { publicBaseUrl, dashboardBaseUrl } = options;
  const dashboardHost = dashboardBaseUrl ? hostOf(dashboardBaseUrl) : undefined;
  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const family = pageFamily(path);

    const duplicated = duplicatedFerryCookie(request.headers.cookie);
    if (duplicated) {
      const text = `The request holds the cookie ${duplicated} more than once, so it cannot tell which one is yours. Clear this site's cookies in your browser and try again.`;
      if (family === "dashboard") return sendGuardPage(reply, 400, "Duplicated cookie", text);
      throw new AppError("INVALID_REQUEST", text);
    }

    if (family === undefined) return;
    if (dashboardHost) {
      const host = (request.host ?? "").toLowerCase();
      if (family === "dashboard" && host !== dashboardHost) {
        if (SAFE_METHODS.has(request.method))
          return reply
            .code(308)
            .header("cache-control", "no-store")
            .header("location", `${dashboardBaseUrl}${request.url}`)
            .send();
        return sendGuardPage(
          reply,
          404,
          "Not found",
          `The dashboard is served at ${dashboardBaseUrl}/dashboard/.`,
        );
      }
      if (family === "recipient" && host === dashboardHost)
        throw new AppError(
          "RESOURCE_NOT_FOUND",
          "Recipient and session pages are not served on the dashboard's address. Use the link you were sent.",
        );
    }

    const bases = family === "dashboard" ? [dashboardBaseUrl ?? publicBaseUrl] : [publicBaseUrl];
    const foreign = foreignOrigin(request, bases);
    if (foreign) {
      const text = `This form was sent from ${foreign}, not from this page. Open the page itself, reload it and try again.`;
      if (family === "dashboard") return sendGuardPage(reply, 403, "Form refused", text);
      throw new AppError("NOT_AUTHORIZED", text);
    }
  });
}
