import type { AuditEntryRow } from "./audit.repository.js";
import { chainedFieldsOf, chainHash, etagForHash } from "./audit.writer.js";

/** The spec's Log entry: every field a string. */
export interface LogEntry {
  PartitionKey: string;
  RowKey: string;
  Timestamp: string;
  code: string;
  api_key_id: string;
  related_model: string;
  relation_key: string;
  value: string;
  from: string;
  method: string;
  path: string;
  data: string;
  content_type: string;
  etag: string;
}

/** The spec's Marker: where the next page starts (PartitionKey and RowKey of its first entry). */
export interface Marker {
  nextpartitionkey: string;
  nextrowkey: string;
}

/**
 * Allow-lists a stored entry into the spec's Log entry. The etag is recomputed from the entry's
 * current content and its link to the previous entry, so it changes if the row was ever rewritten.
 */
export function presentLogEntry(row: AuditEntryRow): LogEntry {
  return {
    PartitionKey: row.partition_key,
    RowKey: row.row_key,
    Timestamp: row.timestamp,
    code: row.code,
    api_key_id: row.api_key_id,
    related_model: row.related_model,
    relation_key: row.relation_key,
    value: row.value,
    from: row.from_address,
    method: row.method,
    path: row.path,
    data: row.data,
    content_type: row.content_type,
    etag: etagForHash(chainHash(row.prev_hash, chainedFieldsOf(row))),
  };
}

/** The marker pointing at `row` (the first entry of the next page). */
export function presentMarker(row: AuditEntryRow): Marker {
  return { nextpartitionkey: row.partition_key, nextrowkey: row.row_key };
}
