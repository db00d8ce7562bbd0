import { hash as digest } from "node:crypto";
import { beforeCommit, type Database, type Executor } from "../../db/database.js";
import type { AuditEntriesTable } from "../../db/schema.js";
import type { Clock } from "../../shared/clock.js";
import { toTimestamp } from "../../shared/time.js";
import {
  advanceKnownHead,
  appendAfterKnownHead,
  appendBatchAfterKnownHead,
  type ChainHead,
  insertEntry,
  insertEntryAtHead,
  lockHead,
  lockNextSeq,
  type NewAuditEntry,
} from "./audit.repository.js";

/** Audit codes of the spec's Audit log events table. */
export const AuditCode = {
  TOKEN_ISSUED: "AAA-0001",
  TOKEN_REFUSED: "AAA-0002",
  API_CALL: "AAA-0010",
  PAGE_CALL: "AAA-0011",
  ENTITY_CREATED: "ABA-0010",
  ENTITY_DELETED: "ABA-0020",
  ENTITY_UPDATED: "ABA-0030",
  MEDIA_DOWNLOADED: "ABB-0010",
  FILES_PAGE_LOADED: "ABB-0020",
  REQUEST_SENT: "ABC-0010",
  EMAIL_OPENED: "ABD-0010",
} as const;

export type AuditCodeValue = (typeof AuditCode)[keyof typeof AuditCode];

/** What a caller records; every text field is optional and defaults to "". Never put secrets here. */
export interface AuditEvent {
  accountId: number;
  code: AuditCodeValue;
  apiKeyId?: number | string | null;
  relatedModel?: string;
  relationKey?: string | number;
  value?: string;
  from?: string;
  method?: string;
  path?: string;
  data?: string;
  contentType?: string;
}

/** Genesis value of each account's hash chain. */
export const CHAIN_GENESIS = "0".repeat(64);

/** Sortable RowKey: newer entries (higher seq) sort first as text. */
export function rowKeyForSeq(seq: number): string {
  return String(999_999_999_999_999 - seq).padStart(15, "0");
}

/** PartitionKey groups an account's entries by UTC day: `<accountId>-<YYYYMMDD>`. */
export function partitionKeyFor(accountId: number, timestamp: string): string {
  return `${accountId}-${timestamp.slice(0, 10).replaceAll("-", "")}`;
}

/** The stored fields that the chain hash covers (their order is fixed in chainHash). */
export type ChainedFields = Pick<
  AuditEntriesTable,
  | "seq"
  | "partition_key"
  | "row_key"
  | "timestamp"
  | "code"
  | "api_key_id"
  | "related_model"
  | "relation_key"
  | "value"
  | "from_address"
  | "method"
  | "path"
  | "data"
  | "content_type"
>;

/** hash = SHA-256(prev_hash, canonical JSON of the entry's fields): any rewrite, removal or insertion breaks the chain. */
export function chainHash(prevHash: string, f: ChainedFields): string {
  const canonical = JSON.stringify([
    f.seq,
    f.partition_key,
    f.row_key,
    f.timestamp,
    f.code,
    f.api_key_id,
    f.related_model,
    f.relation_key,
    f.value,
    f.from_address,
    f.method,
    f.path,
    f.data,
    f.content_type,
  ]);
  // One-shot hashing: about a third of the CPU of a Hash object for an entry this size.
  return digest("sha256", `${prevHash}\n${canonical}`, "hex");
}

/** The chained fields of a stored row (seq read as a number; other columns as stored). */
export function chainedFieldsOf(row: ChainedFields): ChainedFields {
  return {
    seq: Number(row.seq),
    partition_key: row.partition_key,
    row_key: row.row_key,
    timestamp: row.timestamp,
    code: row.code,
    api_key_id: row.api_key_id,
    related_model: row.related_model,
    relation_key: row.relation_key,
    value: row.value,
    from_address: row.from_address,
    method: row.method,
    path: row.path,
    data: row.data,
    content_type: row.content_type,
  };
}

/** The etag of an entry whose chain hash is `hash`: a weak tag of its first 128 bits. */
export function etagForHash(hash: string): string {
  return `W/"${hash.slice(0, 32)}"`;
}

/** How many accounts' heads a writer remembers (each a few dozen bytes). */
const CACHED_HEADS = 10_000;

/**
 * Appends audit entries to each account's hash chain.
 *
 * The writer remembers the last head it saw per account and appends with a compare-and-set on the
 * head row (`UPDATE … WHERE seq = ? AND hash = ?`): on PostgreSQL that and the insert are one
 * statement, so a standalone entry (AAA-0010) is one round trip, committed before it returns. When
 * the remembered head is stale (another process wrote, a transaction rolled back) the compare fails,
 * nothing is written, and the writer takes the locking path (an upsert that locks the head row).
 *
 * Entries written inside a transaction are kept until just before it commits (`beforeCommit`), then
 * appended together, so the transaction holds its account's head only for that append and the
 * commit, not from its first entry on; a rolled-back transaction appends none.
 *
 * Standalone entries are group-committed: those that arrive while a commit is running are appended
 * together, in arrival order per account, and each caller's promise resolves once they have
 * committed — an answered call still has its entry durable, but concurrent calls share one commit
 * instead of paying one each. On SQLite a batch holds every account's entries (and those of the same
 * turn of the event loop) in one transaction; on PostgreSQL a batch is one account's, in one
 * statement. A batch of several that fails is written again entry by entry, so one bad entry fails only its
 * caller; a lone entry's failure is its caller's.
 */
/** Most standalone entries one group commit appends. */
const MAX_BATCH = 256;

interface PendingEntry {
  event: AuditEvent;
  resolve(): void;
  reject(err: unknown): void;
}

export class AuditWriter {
  private readonly heads = new Map<number, ChainHead>();
  /** PostgreSQL: accounts with an append running, each with the entries waiting for the next. */
  private readonly waiting = new Map<number, PendingEntry[]>();
  /** The entries each open transaction has written, appended just before it commits. */
  private readonly kept = new WeakMap<Executor, AuditEvent[]>();
  private pending: PendingEntry[] = [];
  private flushing = false;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  /**
   * Writes one entry inside `ex` (pass the transaction of the change it records, so both commit
   * together): kept, and appended just before the transaction commits. Given no transaction, the
   * entry is committed on its own before the promise resolves.
   */
  async write(ex: Executor, event: AuditEvent): Promise<void> {
    if (ex.isTransaction) return this.writeBeforeCommit(ex, event);
    // Writers inside a transaction never wait below (one could hold the head row lock a queued or
    // batched writer waits for).
    if (this.database.dialect === "postgres") return this.writeQueued(event);
    // SQLite: joins the next group commit.
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ event, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * PostgreSQL: a standalone entry is an autocommitted compare-and-set statement. This process's
   * entries of one account go one statement after another, each on the head the previous one left,
   * so their compare-and-set does not fail; the entries that arrive while one runs are appended
   * together by the next statement (up to MAX_BATCH), so a busy account pays one round trip and one
   * commit per batch rather than per entry, and each caller's promise resolves once its batch has
   * committed.
   */
  private writeQueued(event: AuditEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry = { event, resolve, reject };
      const waiting = this.waiting.get(event.accountId);
      if (waiting) {
        waiting.push(entry);
        return;
      }
      this.waiting.set(event.accountId, []);
      void this.drain(event.accountId, [entry]);
    });
  }

  /** PostgreSQL: appends `batch`, then the account's entries that arrived meanwhile, until none is left. */
  private async drain(accountId: number, batch: PendingEntry[]): Promise<void> {
    const waiting = this.waiting.get(accountId)!;
    for (;;) {
      await this.settle(batch, (events) => this.writeBatchAlone(accountId, events));
      if (waiting.length === 0) break;
      batch = waiting.splice(0, MAX_BATCH);
    }
    this.waiting.delete(accountId);
  }

  /**
   * Keeps a transaction's entries until just before it commits, then appends them, each account's
   * together. Appending takes the account's chain head (on PostgreSQL its row lock) until the
   * commit: written as they came, the first entry would hold it through every statement after it,
   * and one account's changes would go one at a time for that long; kept, the head is held for the
   * append and the commit. A rolled-back transaction appends nothing.
   */
  private async writeBeforeCommit(trx: Executor, event: AuditEvent): Promise<void> {
    const kept = this.kept.get(trx);
    if (kept) {
      kept.push(event);
      return;
    }
    const events = [event];
    this.kept.set(trx, events);
    await beforeCommit(trx, () => this.appendKept(trx, events));
  }

  /** Appends a transaction's kept entries, each account's after its head, in the order written. */
  private async appendKept(trx: Executor, events: AuditEvent[]): Promise<void> {
    if (this.database.dialect === "sqlite") {
      for (const [accountId, head] of await this.appendAll(trx, events)) this.remember(accountId, head);
      return;
    }
    for (const [accountId, list] of byAccount(events)) {
      if (!(await this.appendToKnownHead(trx, accountId, list)))
        await this.appendBatchLocked(trx, accountId, list);
    }
  }

  /** PostgreSQL: appends one account's `events` after its head, locked until `trx` ends: two statements. */
  private async appendBatchLocked(trx: Executor, accountId: number, events: AuditEvent[]): Promise<void> {
    const locked = await lockHead(trx, accountId, CHAIN_GENESIS);
    const { entries, head } = this.chainAfter(locked, events);
    if (!(await appendBatchAfterKnownHead(trx, locked, entries)))
      throw new Error("the audit chain's head moved while locked");
    this.remember(accountId, head);
  }

  /** SQLite: commits the pending standalone entries in batches until none is left. */
  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      await this.settle(this.pending.splice(0, MAX_BATCH), (events) => this.commitBatch(events));
    }
    this.flushing = false;
  }

  /**
   * Writes `batch` with `write` and settles its callers; if that fails, writes the entries of a
   * batch of several again one by one, so one bad entry fails only its caller (a lone entry's
   * failure is its caller's: written again, an append that failed only after committing would be
   * recorded twice).
   */
  private async settle(batch: PendingEntry[], write: (events: AuditEvent[]) => Promise<void>): Promise<void> {
    try {
      await write(batch.map((p) => p.event));
      for (const p of batch) p.resolve();
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      for (const p of batch) {
        try {
          await this.writeAlone(p.event);
          p.resolve();
        } catch (err) {
          p.reject(err);
        }
      }
    }
  }

  /**
   * PostgreSQL: appends one account's `events` in one autocommitted statement after the remembered
   * head; if that head is stale (another process wrote), in one transaction on the locked path.
   */
  private async writeBatchAlone(accountId: number, events: AuditEvent[]): Promise<void> {
    if (await this.appendToKnownHead(this.database.db, accountId, events)) return;
    await this.database.db.transaction().execute((trx) => this.appendBatchLocked(trx, accountId, events));
  }

  /** SQLite: appends `events` in one transaction; heads are remembered once it has committed. */
  private async commitBatch(events: AuditEvent[]): Promise<void> {
    const remembered = await this.database.db.transaction().execute((trx) => this.appendAll(trx, events));
    // A rolled-back batch leaves the remembered heads as they were.
    for (const [accountId, head] of remembered) this.remember(accountId, head);
  }

  /**
   * SQLite: appends `events` inside `trx`, each account's in the order given, and returns each
   * account's new head. An account whose remembered head is still the stored one gets one
   * compare-and-set for all its entries; otherwise its entries take the locking path one by one.
   */
  private async appendAll(trx: Executor, events: AuditEvent[]): Promise<[number, ChainHead][]> {
    const heads: [number, ChainHead][] = [];
    for (const [accountId, list] of byAccount(events)) {
      const known = this.heads.get(accountId);
      if (known) {
        const { entries, head } = this.chainAfter(known, list);
        if (await advanceKnownHead(trx, accountId, known, head)) {
          for (const entry of entries) await insertEntry(trx, entry);
          heads.push([accountId, head]);
          continue;
        }
        this.heads.delete(accountId);
      }
      let head: ChainHead | undefined;
      for (const event of list) {
        const entry = this.entryAfter(await lockNextSeq(trx, accountId, CHAIN_GENESIS), event);
        await insertEntryAtHead(trx, entry);
        head = { seq: entry.seq, hash: entry.hash };
      }
      if (head) heads.push([accountId, head]);
    }
    return heads;
  }

  /** Appends one entry on its own, committed before it returns. */
  private writeAlone(event: AuditEvent): Promise<void> {
    return this.database.dialect === "postgres"
      ? this.writeBatchAlone(event.accountId, [event])
      : this.commitBatch([event]);
  }

  /**
   * PostgreSQL: appends one account's `events` after its remembered head if that is still the
   * stored head, in one statement (for a lone entry, the prepared single-entry one); false, with
   * nothing written, when the head is unknown or stale.
   */
  private async appendToKnownHead(ex: Executor, accountId: number, events: AuditEvent[]): Promise<boolean> {
    const known = this.heads.get(accountId);
    if (!known) return false;
    const { entries, head } = this.chainAfter(known, events);
    const [only] = entries;
    const appended =
      entries.length === 1 && only
        ? await appendAfterKnownHead(ex, known, only)
        : await appendBatchAfterKnownHead(ex, known, entries);
    if (appended) this.remember(accountId, head);
    else this.heads.delete(accountId);
    return appended;
  }

  /** The rows of `events` chained one after another from `known`, and the head after the last. */
  private chainAfter(known: ChainHead, events: AuditEvent[]): { entries: NewAuditEntry[]; head: ChainHead } {
    const entries: NewAuditEntry[] = [];
    let head = known;
    for (const event of events) {
      const entry = this.entryAfter(head, event);
      entries.push(entry);
      head = { seq: entry.seq, hash: entry.hash };
    }
    return { entries, head };
  }

  /** The row of the entry that follows `prev` in the account's chain. */
  private entryAfter(prev: ChainHead, event: AuditEvent): NewAuditEntry {
    const seq = prev.seq + 1;
    const timestamp = toTimestamp(this.clock.now());
    const fields: ChainedFields = {
      seq,
      partition_key: partitionKeyFor(event.accountId, timestamp),
      row_key: rowKeyForSeq(seq),
      timestamp,
      code: event.code,
      api_key_id: event.apiKeyId == null ? "" : String(event.apiKeyId),
      related_model: event.relatedModel ?? "",
      relation_key: event.relationKey == null ? "" : String(event.relationKey),
      value: truncate(redactSecrets(event.value ?? ""), 4000),
      from_address: truncate(event.from ?? "", 100),
      method: truncate(event.method ?? "", 20),
      path: truncate(sanitizePath(event.path ?? ""), 1000),
      data: truncate(redactSecrets(event.data ?? ""), 4000),
      content_type: truncate(event.contentType ?? "", 200),
    };
    const hash = chainHash(prev.hash, fields);
    return { ...fields, account_id: event.accountId, etag: etagForHash(hash), prev_hash: prev.hash, hash };
  }

  private remember(accountId: number, head: ChainHead): void {
    this.heads.delete(accountId);
    this.heads.set(accountId, head);
    if (this.heads.size > CACHED_HEADS) {
      const oldest = this.heads.keys().next().value;
      if (oldest !== undefined) this.heads.delete(oldest);
    }
  }
}

/** `events` grouped by account, each group in the order given. */
function byAccount(events: AuditEvent[]): Map<number, AuditEvent[]> {
  const groups = new Map<number, AuditEvent[]>();
  for (const event of events) {
    const list = groups.get(event.accountId);
    if (list) list.push(event);
    else groups.set(event.accountId, [event]);
  }
  return groups;
}

const SECRET_PATTERNS = [
  // JWTs (three base64url segments, the first a JSON header).
  /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+/g,
  // Ferry API keys.
  /fry_(?:sbx|live)_[A-Za-z0-9_-]{8,}/g,
];

/** Replaces anything shaped like a token or an API key with `[redacted]` (defence in depth: callers must not pass secrets). */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, "[redacted]");
  return out;
}

/**
 * The path as logged: no query string (it may carry tokens), recipient identifiers and session
 * tokens cut to their first 4 characters (`/r/abcd…/`, `/s/abcd…/`) so a log reader cannot open
 * the recipient's page, secrets redacted.
 */
export function sanitizePath(path: string): string {
  const bare = path.split(/[?#]/, 1)[0] ?? "";
  return redactSecrets(
    bare
      .replace(/\/([rs])\/([^/]{4})[^/]*/g, "/$1/$2…")
      .replace(/\/(webhook|steps\/return)\/([^/]{4})[^/]*/g, "/$1/$2…"),
  );
}

function truncate(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}
