import type { MediaRow } from "./media.repository.js";

/**
 * The API Media object: the spec's Media fields plus those existing clients read (docs/media.md,
 * "The Media object"). `file` appears only inside a request's `media` (`presentMediaInRequest`).
 * `current_chunk` is the number of chunks received.
 */
export interface MediaView {
  id: number;
  request: number;
  /** The container feature the file belongs to; null for a request's file. */
  feature: number | null;
  /** The container recipient who uploaded it in their session; null otherwise. */
  recipient: number | null;
  name: string;
  content_type: string;
  bytes: number;
  extension: string;
  total_chunks: number;
  current_chunk: number;
  /** The size declared with the first chunk (`total_bytes`), which the chunks must add up to; null when none was. */
  total_bytes: number | null;
  /** The uploader's fingerprint of the file, given with the first chunk; null when none was. */
  fingerprint: string | null;
  /** MD5 hex of the plaintext (for compatible clients); null until available. */
  file_checksum: string | null;
  /** SHA-256 hex of the plaintext; null until available. */
  sha256: string | null;
  state: "uploading" | "available" | "removed";
  times_downloaded: number;
  max_allowed_times_downloaded: number | null;
  removed_at: string | null;
  created: string;
  updated: string;
}

/** A media inside a request's `media` list: the Media object plus the stored file name `file`. */
export interface MediaInRequestView extends MediaView {
  file: string;
}

/** Allow-lists a media row as the API Media object (the one source of truth for media fields). */
export function presentMedia(row: MediaRow): MediaView {
  return {
    id: row.id,
    request: row.request_id,
    feature: row.feature_id,
    recipient: row.recipient_id,
    name: row.name,
    content_type: row.content_type,
    bytes: Number(row.bytes),
    extension: row.extension,
    total_chunks: row.total_chunks,
    current_chunk: row.received_chunks,
    total_bytes: row.declared_bytes === null ? null : Number(row.declared_bytes),
    fingerprint: row.fingerprint,
    file_checksum: row.md5,
    sha256: row.sha256,
    state: row.state,
    times_downloaded: row.times_downloaded,
    max_allowed_times_downloaded: row.max_allowed_times_downloaded,
    removed_at: row.removed_at,
    created: row.created,
    updated: row.updated,
  };
}

/** Allow-lists a media row as it appears inside a request (adds `file`). */
export function presentMediaInRequest(row: MediaRow): MediaInRequestView {
  return { ...presentMedia(row), file: row.file };
}
