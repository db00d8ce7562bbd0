/**
 * Where a browser says a request comes from, read from its Fetch Metadata request headers
 * (`Sec-Fetch-Site`, `Sec-Fetch-Mode`, `Sec-Fetch-Dest`; sent by Chromium since 2020, Firefox
 * since 2021, Safari since 2023). Downloads that use up a file or a quota run only in a context
 * their page could have started (ADR 0055).
 */
import type { FastifyRequest } from "fastify";

/**
 * - `unknown`: no `Sec-Fetch-Site`: not a browser (curl, a download manager), or a browser that
 *   does not send Fetch Metadata;
 * - `same-origin`: a top-level navigation (a link, a download link, a form) from a page of this
 *   origin;
 * - `user`: a top-level navigation the user started (address bar, bookmark, another application);
 * - `foreign`: a top-level navigation another site started (cross-site, or same-site: another port
 *   or subdomain);
 * - `embedded`: anything else a page asked for: an image, style sheet, font, script, frame, fetch.
 */
export type RequestContext = "unknown" | "same-origin" | "user" | "foreign" | "embedded";

/** Destinations of a top-level navigation: a page, or a download (a link with `download`). */
const TOP_LEVEL = new Set(["document", "empty"]);

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value.trim().toLowerCase() : undefined;
}

/** The context of `request` (see RequestContext). */
export function requestContext(request: FastifyRequest): RequestContext {
  const site = header(request, "sec-fetch-site");
  if (site === undefined) return "unknown";
  const dest = header(request, "sec-fetch-dest");
  // Browsers that send Site but not yet Dest (Chromium before 80) send Mode: a navigation is a
  // navigation; a frame of another site is still `foreign`, and pages of this origin frame nothing.
  if (header(request, "sec-fetch-mode") !== "navigate" || (dest !== undefined && !TOP_LEVEL.has(dest)))
    return "embedded";
  if (site === "same-origin") return "same-origin";
  if (site === "none") return "user";
  return "foreign";
}
