import type { Database, Executor } from "../../db/database.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { parsePageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { type LogEntry, type Marker, presentLogEntry, presentMarker } from "./audit.presenter.js";
import {
  type AuditEntryRow,
  type AuditFilters,
  type AuditSearchScope,
  countChainEntries,
  countEntries,
  findOrdinal,
  ORDINAL_COLUMNS,
  sampleMatches,
  searchEntries,
} from "./audit.repository.js";

/** The search query as it arrives (`GET /v1/logentry/search/`); unknown keys are ignored. */
export interface LogSearchQuery {
  page?: unknown;
  page_size?: unknown;
  marker?: unknown;
  PartitionKey?: unknown;
  code?: unknown;
  related_model?: unknown;
  path?: unknown;
  from?: unknown;
  method?: unknown;
  content_type?: unknown;
  relation_key?: unknown;
  since?: unknown;
  until?: unknown;
}

/** Every query parameter of the log search; any other is refused with 400 naming these. */
export const LOG_SEARCH_PARAMETERS = [
  "page",
  "page_size",
  "marker",
  "PartitionKey",
  "code",
  "related_model",
  "relation_key",
  "path",
  "from",
  "method",
  "content_type",
  "since",
  "until",
] as const;

/** 400 for query parameters the log search does not know (a typo would otherwise filter nothing). */
export function checkSearchParameters(names: Iterable<string>): void {
  const unknown = [...new Set(names)].filter(
    (name) => !(LOG_SEARCH_PARAMETERS as readonly string[]).includes(name),
  );
  if (unknown.length === 0) return;
  const allowed = `Allowed parameters: ${LOG_SEARCH_PARAMETERS.join(", ")}.`;
  throw new ValidationError(
    Object.fromEntries(unknown.map((name) => [name, [`Unknown query parameter. ${allowed}`]])),
  );
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

/** Reads `since`/`until`: an ISO 8601 date-time with a zone, or a date (midnight UTC); stored form. */
function readTime(query: LogSearchQuery, name: "since" | "until"): string | undefined {
  const value = query[name];
  if (value === undefined || value === null || value === "") return undefined;
  const text = typeof value === "string" ? value.trim() : "";
  const date = ISO_TIME.test(text) ? new Date(text.length === 10 ? `${text}T00:00:00Z` : text) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw ValidationError.field(
      name,
      "Enter an ISO 8601 timestamp with a time zone, e.g. 2026-01-15T10:00:00Z, or a date (2026-01-15, midnight UTC).",
    );
  }
  return toTimestamp(date);
}

/** The filters of a search beyond the exact column filters: one entity, a time window. */
export function readScopeExtras(
  query: LogSearchQuery,
  filters: AuditFilters,
): Pick<AuditSearchScope, "relationKey" | "since" | "until"> {
  const out: Pick<AuditSearchScope, "relationKey" | "since" | "until"> = {};
  const key = query.relation_key;
  if (key !== undefined && key !== null && key !== "") {
    if (typeof key !== "string" && typeof key !== "number")
      throw ValidationError.field("relation_key", "Give one value.");
    if (filters.related_model === undefined) {
      throw ValidationError.field(
        "relation_key",
        "Give related_model with relation_key: a key names an entity only within its model (e.g. related_model=request&relation_key=42).",
      );
    }
    out.relationKey = String(key);
  }
  out.since = readTime(query, "since");
  out.until = readTime(query, "until");
  if (out.since !== undefined && out.until !== undefined && out.since >= out.until) {
    throw ValidationError.field("until", "until must be later than since.");
  }
  return out;
}

/** The spec's log search response. */
export interface LogSearchResult {
  next_marker: Marker | null;
  total_pages: number;
  /** Present (true) only when total_pages is an estimate (several filters over many entries). */
  total_pages_estimated?: true;
  /** Entries per page used (page_size above 100 answers 100). */
  page_size: number;
  results: LogEntry[];
}

/** Query parameter → stored column of each exact filter. */
const FILTER_COLUMNS: [keyof LogSearchQuery, keyof AuditFilters][] = [
  ["PartitionKey", "partition_key"],
  ["code", "code"],
  ["related_model", "related_model"],
  ["path", "path"],
  ["from", "from_address"],
  ["method", "method"],
  ["content_type", "content_type"],
];

/** Largest RowKey value: RowKey = MAX_ROW_KEY - seq (see rowKeyForSeq). */
const MAX_ROW_KEY = 999_999_999_999_999;

const BAD_MARKER =
  'Invalid marker. Pass back next_marker from a previous response, as JSON ({"nextpartitionkey":"…","nextrowkey":"…"}) or as "<nextpartitionkey>,<nextrowkey>".';

/**
 * Parses a marker's string form into the highest seq the page may start at. Accepted forms: the
 * JSON text of the Marker object (key case ignored) or `<nextpartitionkey>,<nextrowkey>`.
 * Throws ValidationError (400, field `marker`) for anything else, or a marker of another account.
 */
export function parseMarker(raw: string, accountId: number): number {
  let pk: unknown;
  let rk: unknown;
  const text = raw.trim();
  if (text.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw ValidationError.field("marker", BAD_MARKER);
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      for (const [k, v] of Object.entries(parsed)) {
        const key = k.toLowerCase();
        if (key === "nextpartitionkey" || key === "partitionkey") pk = v;
        if (key === "nextrowkey" || key === "rowkey") rk = v;
      }
    }
  } else {
    [pk, rk] = text.split(",");
  }
  if (typeof pk !== "string" || typeof rk !== "string") throw ValidationError.field("marker", BAD_MARKER);
  const pkMatch = /^(\d{1,15})-\d{8}$/.exec(pk.trim());
  const rkText = rk.trim();
  if (!pkMatch || Number(pkMatch[1]) !== accountId || !/^\d{15}$/.test(rkText)) {
    throw ValidationError.field("marker", BAD_MARKER);
  }
  const seq = MAX_ROW_KEY - Number(rkText);
  if (seq < 1) throw ValidationError.field("marker", BAD_MARKER);
  return seq;
}

/** Reads the exact filters of a search query; absent or empty values filter nothing. */
export function readFilters(query: LogSearchQuery): AuditFilters {
  const filters: AuditFilters = {};
  for (const [param, column] of FILTER_COLUMNS) {
    const value = query[param];
    if (value === undefined || value === null || value === "") continue;
    if (typeof value !== "string" && typeof value !== "number") {
      throw ValidationError.field(param, "Give one value.");
    }
    filters[column] = String(value);
  }
  return filters;
}

/**
 * Default of AUDIT_EXACT_COUNT_LIMIT: above this many entries of a search's narrowest filter, a
 * search with several filters gets an estimated `total_pages` (ADR 0037); at or below, exact.
 */
export const EXACT_COUNT_LIMIT = 10_000;

/** Entries of the lead filter read to estimate a count above the limit (±1–2 % for common mixes). */
const ESTIMATE_SAMPLE = 2_000;

/** How many entries a search holds, and whether that number is an estimate. */
interface MatchCount {
  count: number;
  estimated: boolean;
}

/**
 * Entries of one filter alone in `scope` (seq ≤ maxSeq), from its ordinals: newest − oldest + 1.
 * Undefined when an entry has no ordinal (inserted behind the writer's back).
 */
async function countOneFilter(
  db: Executor,
  scope: AuditSearchScope,
  column: keyof AuditFilters,
): Promise<number | undefined> {
  const alone: AuditSearchScope = { ...scope, filters: { [column]: scope.filters[column] } };
  const ordinal = ORDINAL_COLUMNS[column];
  const [newest, oldest] = await Promise.all([
    findOrdinal(db, alone, ordinal, "newest"),
    findOrdinal(db, alone, ordinal, "oldest"),
  ]);
  if (newest === undefined) return 0;
  if (newest < 1 || oldest === undefined || oldest < 1 || newest < oldest) return undefined;
  return newest - oldest + 1;
}

/**
 * Several exact filters: each filter's own count comes from its ordinals; the narrowest one leads.
 * When it has at most `limit` entries, all are read and checked against the other filters (exact);
 * otherwise its newest ESTIMATE_SAMPLE entries are, and their matching share scales its count.
 */
async function countSeveralFilters(
  db: Executor,
  scope: AuditSearchScope,
  limit: number,
): Promise<MatchCount> {
  const columns = Object.keys(scope.filters) as (keyof AuditFilters)[];
  const counts = await Promise.all(columns.map((c) => countOneFilter(db, scope, c)));
  if (counts.some((n) => n === undefined)) return { count: await countEntries(db, scope), estimated: false };
  let lead = 0;
  counts.forEach((n, i) => {
    if ((n as number) < (counts[lead] as number)) lead = i;
  });
  const leadCount = counts[lead] as number;
  if (leadCount === 0) return { count: 0, estimated: false };
  // Within the limit every entry of the lead filter is read (exact); above it, a sample will do.
  const size = leadCount <= limit ? limit + 1 : Math.min(limit + 1, ESTIMATE_SAMPLE);
  const { sampled, matched } = await sampleMatches(db, scope, columns[lead]!, size);
  if (sampled < size) return { count: matched, estimated: false };
  return { count: Math.round((leadCount * matched) / sampled), estimated: true };
}

/**
 * How many entries `scope` holds, `first` being its entry at position `offset` (if any). Without
 * filters: from the chain's bounds. With one filter: newest ordinal − oldest ordinal + 1 of that
 * filter's column (entries with one value are numbered 1, 2, 3… and retention removes only the
 * oldest, so an intact chain numbers them contiguously; `ferry audit verify` checks the chain). With
 * several filters: see countSeveralFilters. With an entity or a time window: a COUNT over one range.
 */
async function countMatches(
  db: Executor,
  scope: AuditSearchScope,
  first: AuditEntryRow | undefined,
  offset: number,
  limit: number,
): Promise<MatchCount> {
  const exact = (count: number): MatchCount => ({ count, estimated: false });
  const columns = Object.keys(scope.filters) as (keyof AuditFilters)[];
  if (scope.relationKey !== undefined || scope.since !== undefined || scope.until !== undefined) {
    return exact(await countEntries(db, scope));
  }
  if (columns.length === 0) return exact(await countChainEntries(db, scope.accountId, scope.maxSeq));
  const only = columns.length === 1 ? columns[0] : undefined;
  if (only === undefined) return countSeveralFilters(db, scope, limit);
  if (!first && offset === 0) return exact(0);
  const ordinal = ORDINAL_COLUMNS[only];
  const top = first ? Number(first[ordinal]) : await findOrdinal(db, scope, ordinal, "newest");
  if (top === undefined) return exact(0);
  const oldest = await findOrdinal(db, scope, ordinal, "oldest");
  const newest = first ? top + offset : top;
  // Entries stored without an ordinal (0: inserted behind the writer's back) are counted by rows.
  if (top < 1 || oldest === undefined || oldest < 1 || newest < oldest) {
    return exact(await countEntries(db, scope));
  }
  return exact(newest - oldest + 1);
}

/** Searches an account's audit log (spec: Log endpoint). */
export class AuditService {
  constructor(
    private readonly database: Database,
    private readonly exactCountLimit = EXACT_COUNT_LIMIT,
  ) {}

  /**
   * Entries of `accountId` matching every filter, newest first. `marker` (optional) starts the
   * listing at the entry it names (inclusive); `page` then counts pages of `page_size` (default
   * 100, clamped to 1..100) from there, and `total_pages` counts the pages from there.
   * `next_marker` names the first entry of the next page, or is null after the last entry.
   * Throws 400 on a bad page, page_size or marker, 404 for a page past the end.
   */
  async search(accountId: number, query: LogSearchQuery): Promise<LogSearchResult> {
    const page = parsePageRequest(query as Record<string, unknown>, 100, 100);
    const marker = query.marker;
    const maxSeq =
      marker === undefined || marker === null || marker === ""
        ? undefined
        : parseMarker(String(marker), accountId);
    const filters = readFilters(query);
    const scope: AuditSearchScope = { accountId, filters, maxSeq, ...readScopeExtras(query, filters) };
    const { db } = this.database;
    const rows = await searchEntries(db, scope, page.pageSize + 1, page.offset);
    const { count, estimated } =
      rows.length <= page.pageSize && rows.length > 0
        ? { count: page.offset + rows.length, estimated: false } // the last page: known from the rows read
        : await countMatches(db, scope, rows[0], page.offset, this.exactCountLimit);
    const next = rows.length > page.pageSize ? rows[page.pageSize] : undefined;
    let totalPages = Math.max(1, Math.ceil(count / page.pageSize));
    // An estimate never contradicts the rows read: this page exists, and so does the next one.
    if (estimated && rows.length > 0) totalPages = Math.max(totalPages, page.page + (next ? 1 : 0));
    if (page.page > totalPages || (estimated && rows.length === 0 && page.page > 1)) {
      throw new AppError("RESOURCE_NOT_FOUND", "Invalid page.");
    }
    return {
      next_marker: next ? presentMarker(next) : null,
      total_pages: totalPages,
      ...(estimated ? { total_pages_estimated: true as const } : {}),
      page_size: page.pageSize,
      results: rows.slice(0, page.pageSize).map(presentLogEntry),
    };
  }
}
