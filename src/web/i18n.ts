/**
 * The reader's language on Ferry's pages: negotiated per request from the language cookie (the
 * reader's own choice), Accept-Language and the account's default (ADR 0033), and the switch that
 * records a choice (`?lang=xx` on any page: cookie, then 303 to the same page without it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  clientCatalogue,
  formatLocale,
  isLocale,
  type Locale,
  negotiateLocale,
  type Translator,
  translator,
} from "../shared/i18n/i18n.js";

/** The cookie that remembers a reader's choice of language (one year, every path of the host). */
export const LANG_COOKIE = "ferry_lang";
const ONE_YEAR_SECONDS = 365 * 24 * 3600;

/** The language cookie's value, when the request carries one. */
function languageCookie(request: FastifyRequest): string | undefined {
  const header = String(request.headers.cookie ?? "");
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === LANG_COOKIE) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The locale a page for this request is written in; `accountDefault` is the owner's default. */
export function pageLocale(request: FastifyRequest, accountDefault?: string): Locale {
  const accept = request.headers["accept-language"];
  return negotiateLocale({
    choice: languageCookie(request),
    acceptLanguage: Array.isArray(accept) ? accept.join(",") : accept,
    accountDefault,
  });
}

/** The translator of the page for this request (see pageLocale). */
export function pageTranslator(request: FastifyRequest, accountDefault?: string): Translator {
  return translator(pageLocale(request, accountDefault));
}

/**
 * The page scripts' messages as the text of a `<script type="application/json">` data block: JSON
 * with `<`, `>` and `&` escaped so no text can close the element (the CSP does not run data blocks).
 */
export function clientMessagesJson(locale: Locale): string {
  return JSON.stringify({ locale, format: formatLocale(locale), messages: clientCatalogue(locale) })
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026");
}

/** Paths whose pages take `?lang=`: the home page, recipient and session pages, the verify pages. */
function takesLanguageChoice(path: string): boolean {
  return path === "/" || path.startsWith("/r/") || path.startsWith("/s/") || path.startsWith("/verify");
}

/**
 * Installs the language switch: a GET of a page with `?lang=<supported locale>` sets the language
 * cookie (HttpOnly, SameSite=Lax, Secure over https) and answers 303 to the same address without
 * `lang`, so the switch works without script and a reload or a shared address carries no choice.
 * Unknown values are ignored (the page renders as if there were none).
 */
export function installLanguageSwitch(
  app: FastifyInstance,
  isHttps: (request: FastifyRequest) => boolean,
): void {
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== "GET" || !request.url.includes("lang=")) return;
    const url = new URL(request.url, "http://ferry.invalid");
    if (!takesLanguageChoice(url.pathname)) return;
    const choice = url.searchParams.get("lang");
    if (!isLocale(choice)) return;
    url.searchParams.delete("lang");
    const cookie = [
      `${LANG_COOKIE}=${choice}`,
      "Path=/",
      `Max-Age=${ONE_YEAR_SECONDS}`,
      "HttpOnly",
      "SameSite=Lax",
      ...(isHttps(request) ? ["Secure"] : []),
    ].join("; ");
    reply.header("set-cookie", cookie);
    reply.header("cache-control", "no-store");
    reply.header("referrer-policy", "no-referrer");
    return reply.redirect(`${url.pathname}${url.search}`, 303);
  });
}
