import { createHash } from "node:crypto";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { toTimestamp } from "../../shared/time.js";

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

/** The stored fields that the chain hash covers, in a fixed order. */
export interface ChainedFields {
  seq: number;
  partition_key: string;
  row_key: string;
  timestamp: string;
  code: string;
  api_key_id: string;
  related_model: string;
  relation_key: string;
  value: string;
  from_address: string;
  method: string;
  path: string;
  data: string;
  content_type: string;
}

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
  return createHash("sha256").update(prevHash).update("\n").update(canonical).digest("hex");
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

/** Appends audit entries to each account's hash chain. */
export class AuditWriter {
  constructor(
    // Kept in the constructor contract (container, tests); writes go through the executor given.
    // biome-ignore lint/correctness/noUnusedPrivateClassMembers: see above
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  /**
   * Writes one entry inside `ex` (pass the transaction of the change it records, so both commit
   * together). Serialises per account on the chain head row. Outside a transaction it opens one.
   */
  async write(ex: Executor, event: AuditEvent): Promise<void> {
    if (!ex.isTransaction) {
      await ex.transaction().execute((trx) => this.write(trx, event));
      return;
    }
    const timestamp = toTimestamp(this.clock.now());
    // Upsert-and-increment locks the head row until commit: concurrent writers queue here.
    const head = await ex
      .insertInto("audit_chain_heads")
      .values({ account_id: event.accountId, seq: 1, hash: CHAIN_GENESIS })
      .onConflict((oc) =>
        oc.column("account_id").doUpdateSet((eb) => ({ seq: eb("audit_chain_heads.seq", "+", 1) })),
      )
      .returning(["seq", "hash"])
      .executeTakeFirstOrThrow();
    const seq = Number(head.seq);
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
    const hash = chainHash(head.hash, fields);
    await ex
      .insertInto("audit_entries")
      .values({
        ...fields,
        account_id: event.accountId,
        etag: etagForHash(hash),
        prev_hash: head.hash,
        hash,
      })
      .execute();
    await ex
      .updateTable("audit_chain_heads")
      .set({ hash })
      .where("account_id", "=", event.accountId)
      .execute();
  }
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
 * The path as logged: no query string (it may carry tokens), recipient identifiers cut to their
 * first 4 characters (`/r/abcd…/`) so a log reader cannot open the recipient page, secrets redacted.
 */
export function sanitizePath(path: string): string {
  const bare = path.split(/[?#]/, 1)[0] ?? "";
  return redactSecrets(bare.replace(/\/r\/([^/]{4})[^/]*/g, "/r/$1…"));
}

function truncate(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}
