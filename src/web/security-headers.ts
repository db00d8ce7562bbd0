import type { FastifyReply, FastifyRequest } from "fastify";
import { esignAssetUrls, SIGNATURE_FONT_PATHS } from "./esign-assets.js";

/**
 * The Content-Security-Policy of Ferry's pages that show no account stylesheet (dashboard, home,
 * API reference, error pages): no inline script or style, no framing.
 */
const RECIPIENT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/**
 * Where a page that may show an account's stylesheet finds its assets: the hosts a browser may
 * have asked (a CSP source naming a path needs a host) and, when the page belongs to a link, the
 * path its `brand.css`, `logo`, `avatar` and `fonts/<name>` sit under (`/r/<identifier>/`,
 * `/s/<token>/`).
 */
export interface PageAssets {
  hosts: string[];
  base: string | undefined;
}

/** A host as a CSP host source may name it (name or IPv4 address, optional port), lower case. */
const CSP_HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::\d{1,5})?$/;
/** A base path a CSP source may carry as is (percent-encoded identifiers and tokens). */
const CSP_PATH = /^\/(?:[A-Za-z0-9._~%-]+\/)+$/;

/**
 * The assets of a page under `base` (when the page belongs to a link), on the host the request
 * names and on PUBLIC_BASE_URL's host (a proxy may pass another Host on); a host or path a CSP
 * cannot name is left out.
 */
export function pageAssets(
  request: FastifyRequest,
  base: string | undefined,
  publicBaseUrl: string,
): PageAssets {
  const hosts = [request.host.toLowerCase(), new URL(publicBaseUrl).host.toLowerCase()].filter(
    (host, i, all) => CSP_HOST.test(host) && all.indexOf(host) === i,
  );
  return { hosts, base: base !== undefined && CSP_PATH.test(base) ? base : undefined };
}

/**
 * The style, image and font sources of a page that may show an account's stylesheet: Ferry's
 * static files and the account's own assets, nothing else of the origin. An account's CSS then
 * cannot make the reader's browser fetch any other URL of Ferry's origin (a dashboard download, an
 * API call, another link's page) as an image, a font or an imported style sheet (ADR 0055).
 */
export function assetSources(assets: PageAssets): string {
  const { hosts, base } = assets;
  const list = (paths: string[]) => hosts.flatMap((host) => paths.map((path) => `${host}${path}`)).join(" ");
  if (base === undefined)
    return `style-src ${list(["/static/"])}; img-src ${list(["/static/"])} data:; font-src 'none'`;
  return `style-src ${list(["/static/", `${base}brand.css`])}; img-src ${list(["/static/", `${base}logo`, `${base}avatar`])} data:; font-src ${list([`${base}fonts/`])}`;
}

/** The CSP of a recipient or session page showing the assets of the account at `assets`. */
function brandedPageCsp(assets: PageAssets): string {
  return `default-src 'none'; script-src 'self'; connect-src 'self'; ${assetSources(assets)}; frame-ancestors 'none'; form-action 'self'; base-uri 'none'`;
}

/**
 * The CSP of a page showing the signing step: the branded page's policy, plus what the PDF viewer
 * and the signature pad need and nothing more. `worker-src 'self'` names the pdf.js worker's source
 * (it falls back to `script-src 'self'` anyway; stated so a later script-src change cannot drop
 * it); `font-src` adds the two signature font files and pdf.js's standard fonts directory (a PDF
 * that names Helvetica without embedding it is drawn with Liberation Sans, which pdf.js loads by
 * URL from there). The PDF itself is fetched under `connect-src 'self'`; pdf.js loads a document's
 * embedded fonts as bytes (`FontFace` from an ArrayBuffer, no URL to allow) and decodes images with
 * WebAssembly inside its worker, whose own response carries no CSP, so the page needs no
 * `'wasm-unsafe-eval'`; the drawn or typed signature is shown as a `data:` PNG, which `img-src`
 * already allows.
 */
export function signingPageCsp(assets: PageAssets): string {
  const fonts = assets.hosts
    .flatMap((host) =>
      [...SIGNATURE_FONT_PATHS, esignAssetUrls.standardFonts].map((path) => `${host}${path}`),
    )
    .join(" ");
  const withFonts = brandedPageCsp(assets).replace(/font-src ([^;]*)/, (_all, list: string) =>
    list === "'none'" ? `font-src ${fonts}` : `font-src ${list} ${fonts}`,
  );
  return withFonts.replace("connect-src 'self';", "connect-src 'self'; worker-src 'self';");
}

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
 * The recipient security headers of a page that may show an account's stylesheet (`/r/`, `/s/`),
 * with a CSP that allows that account's assets at `assets` (see `pageAssets`) and Ferry's static
 * files only.
 */
export function applyBrandedPageHeaders(reply: FastifyReply, https: boolean, assets: PageAssets): void {
  applyRecipientHeaders(reply, https);
  reply.header("content-security-policy", brandedPageCsp(assets));
}

/**
 * The headers of a page showing the signing step (`src/web/esign-signing-view.tsx`): those of
 * applyBrandedPageHeaders with the CSP of signingPageCsp.
 */
export function applySigningPageHeaders(reply: FastifyReply, https: boolean, assets: PageAssets): void {
  applyRecipientHeaders(reply, https);
  reply.header("content-security-policy", signingPageCsp(assets));
}

/**
 * Marks a reply as cacheable for a year in the reader's browser only (`private`: the URL holds the
 * link's secret); the recipient headers applied later keep it instead of `no-store`.
 */
export function longCache(reply: FastifyReply): void {
  reply.header("cache-control", LONG_CACHE);
}
