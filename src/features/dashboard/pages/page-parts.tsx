/**
 * Small parts shared by the owner pages (templates, branding, requests, containers, audit,
 * outbox): the 404 page, id and query parsing, paging links, times and excerpts.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import type { DashboardKit, PageContext } from "../dashboard-kit.js";
import type { DashboardSection } from "../views/layout.js";

/** The 404 page of an owner page: the object does not exist or belongs to another account. */
export function renderNotFound(
  kit: DashboardKit,
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: PageContext,
  section: DashboardSection,
  what: string,
  back: string,
): FastifyReply {
  return kit.render(
    request,
    reply,
    ctx,
    { title: "Not found", section, status: 404 },
    <p>
      This {what} does not exist in this account. <a href={back}>Back to the list</a>
    </p>,
  );
}

/** A positive integer id from a route parameter, or undefined (answered with 404). */
export function parseId(raw: unknown): number | undefined {
  const text = typeof raw === "string" ? raw : "";
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const id = Number(text);
  return id >= 1 && Number.isSafeInteger(id) ? id : undefined;
}

/** The query string as string values only (the first of repeated keys; other types dropped). */
export function queryOf(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  const q = request.query;
  if (!q || typeof q !== "object") return out;
  for (const [k, v] of Object.entries(q as Record<string, unknown>)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === "string") out[k] = first;
  }
  return out;
}

/** A 1-based page number from the query (1 when absent or not a positive integer). */
export function pageNumber(query: Record<string, string>): number {
  const raw = query.page ?? "";
  return /^\d{1,6}$/.test(raw) && Number(raw) >= 1 ? Number(raw) : 1;
}

/** `path?…` with `params` (empty values left out). */
export function hrefWith(path: string, params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== "") search.set(k, String(v));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** Previous / next page links of a paged list, keeping the filters. */
export function Pager(props: {
  path: string;
  filters: Record<string, string>;
  page: number;
  totalPages: number;
  label: string;
}): VNode | null {
  const { path, filters, page, totalPages } = props;
  if (totalPages <= 1 && page <= 1) return null;
  return (
    <nav class="fd-pager" aria-label={props.label}>
      {page > 1 ? (
        <a href={hrefWith(path, { ...filters, page: page - 1 })} rel="prev">
          Previous page
        </a>
      ) : null}
      <span>
        Page {page} of {Math.max(totalPages, page)}
      </span>
      {page < totalPages ? (
        <a href={hrefWith(path, { ...filters, page: page + 1 })} rel="next">
          Next page
        </a>
      ) : null}
    </nav>
  );
}

/** A stored or ISO timestamp shown as `YYYY-MM-DD HH:MM:SS UTC` in a <time> element. */
export function Time(props: { value: string | null | undefined }): VNode {
  const value = props.value;
  if (!value) return <span class="fd-muted">—</span>;
  const date = new Date(value.includes("T") || value.endsWith("Z") ? value : `${value.replace(" ", "T")}Z`);
  if (Number.isNaN(date.getTime())) return <span>{value}</span>;
  const iso = date.toISOString();
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`}</time>;
}

/** The first `max` characters of `text` on one line, with an ellipsis when cut. */
export function excerpt(text: string | null | undefined, max = 80): string {
  const one = (text ?? "").replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
