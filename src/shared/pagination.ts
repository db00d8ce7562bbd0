import { AppError, ValidationError } from "./errors.js";

/** Page request after defaults and clamping (page ≥ 1, page_size 1..100 clamped). */
export interface PageRequest {
  page: number;
  pageSize: number;
  offset: number;
}

/** The spec's paginated envelope. */
export interface Paginated<T> {
  links: { previous: string | null; next: string | null };
  total_pages: number;
  count: number;
  /** The page size used: the one asked for, or the maximum it was clamped to. */
  page_size: number;
  results: T[];
}

/**
 * Reads `page` and `page_size` from a query. page must be an integer ≥ 1 (else 400);
 * page_size is clamped into 1..max (default `defaultSize`).
 */
export function parsePageRequest(
  query: Record<string, unknown>,
  defaultSize = 10,
  maxSize = 100,
): PageRequest {
  const page = readPositiveInt(query.page, "page", 1);
  const requested = readPositiveInt(query.page_size, "page_size", defaultSize);
  const pageSize = Math.min(Math.max(requested, 1), maxSize);
  return { page, pageSize, offset: (page - 1) * pageSize };
}

function readPositiveInt(raw: unknown, field: string, def: number): number {
  if (raw === undefined || raw === "") return def;
  const s = String(raw).trim();
  if (!/^\d+$/.test(s) || Number(s) < 1) {
    throw ValidationError.field(field, "Ensure this value is an integer greater than or equal to 1.");
  }
  return Math.min(Number(s), 1_000_000_000);
}

/**
 * Builds the envelope with absolute `links` from `baseUrl` + `path` (other query parameters kept).
 * A page past the end is 404 (page 1 of an empty list is an empty page).
 */
export function paginate<T>(
  results: T[],
  count: number,
  req: PageRequest,
  baseUrl: string,
  path: string,
  query: Record<string, unknown>,
): Paginated<T> {
  const totalPages = Math.max(1, Math.ceil(count / req.pageSize));
  if (req.page > totalPages) throw new AppError("RESOURCE_NOT_FOUND", "Invalid page.");
  const link = (page: number): string => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && k !== "page" && k !== "page_size") params.set(k, String(v));
    }
    params.set("page", String(page));
    params.set("page_size", String(req.pageSize));
    return `${baseUrl}${path}?${params.toString()}`;
  };
  return {
    links: {
      previous: req.page > 1 ? link(req.page - 1) : null,
      next: req.page < totalPages ? link(req.page + 1) : null,
    },
    total_pages: totalPages,
    count,
    page_size: req.pageSize,
    results,
  };
}

/** Where to read one page of ids of a newest-first list: the end to walk from and how far. */
export interface IdWindow {
  /** `desc`: from the newest end; `asc`: from the oldest end (reverse the ids read). */
  order: "asc" | "desc";
  limit: number;
  offset: number;
}

/**
 * The window of a page of a newest-first list of `total` rows (a kept count, ADR 0070): a page in
 * the older half is walked from the oldest end, so the last page skips as few rows as the first.
 */
export function idWindow(page: { offset: number; limit: number }, total: number): IdWindow {
  const { offset, limit } = page;
  const after = total - offset - limit; // rows older than the page
  if (offset > 0 && after < offset && offset < total) {
    return { order: "asc", limit: Math.min(limit, total - offset), offset: Math.max(0, after) };
  }
  return { order: "desc", limit, offset };
}
