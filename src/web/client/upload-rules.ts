/** Shapes and rules shared by the pull page's uploader: sizes, refusals, file identity, server answers. */

import { formatBytes, t } from "./messages.js";
import { sha256Hex } from "./sha256.js";

/** A file's upload as the server reports it (GET /r/<identifier>/uploads). */
export interface ServerUpload {
  id: number;
  name: string;
  bytes: number;
  /** The size declared with the first chunk (null for uploads that declared none). */
  size: number | null;
  /** The fingerprint given with the first chunk (null when none was). */
  fingerprint: string | null;
  state: string;
  total_chunks: number;
  received_chunks: number[];
}

/** Settings read from the page (data-* attributes of <main>). */
export interface UploaderOptions {
  /** The upload endpoints' URL: `/r/<identifier>/uploads`, or a session feature's. */
  base: string;
  csrf: string;
  chunkBytes: number;
  maxFileBytes: number;
  extensions: string[];
}

export { formatBytes } from "./messages.js";

/** Why a file may not be uploaded (a sentence naming it, in the page's language), or undefined when it may. */
export function refusal(file: { name: string; size: number }, options: UploaderOptions): string | undefined {
  const dot = file.name.lastIndexOf(".");
  const ext = dot > 0 ? file.name.slice(dot + 1).toLowerCase() : "";
  if (options.extensions.length > 0 && !options.extensions.includes(ext))
    return t("client.refusedType", { name: file.name, types: options.extensions.join(", ") });
  if (file.size === 0) return t("client.refusedEmpty", { name: file.name });
  if (file.size > options.maxFileBytes)
    return t("client.refusedSize", { name: file.name, size: formatBytes(options.maxFileBytes) });
  return undefined;
}

/**
 * The fingerprint of a file (ADR 0022): SHA-256, as 64 hex digits, over its name, size,
 * modification time and the SHA-256 of its first chunk of `chunkBytes`. The same file chosen again
 * (another tab, another day) gives the same value; another file of the same name and size almost
 * never does. Reads at most one chunk of the file.
 */
export async function fingerprintOf(file: File, chunkBytes: number): Promise<string> {
  const head = await sha256Hex(new Uint8Array(await file.slice(0, chunkBytes).arrayBuffer()));
  const identity = `ferry-upload-v1\n${file.name}\n${file.size}\n${file.lastModified}\n${head}`;
  return sha256Hex(new TextEncoder().encode(identity));
}

/** Whether `server` is an unfinished upload of the file whose size, chunk count and fingerprint these are. */
export function isUnfinishedUploadOf(
  server: ServerUpload,
  file: { size: number; totalChunks: number; fingerprint: string },
): boolean {
  return (
    server.state === "uploading" &&
    server.fingerprint === file.fingerprint &&
    server.size === file.size &&
    server.total_chunks === file.totalChunks
  );
}

/**
 * What the page says, instead of "you can now submit", while the server holds unfinished uploads no
 * chosen file continues (left in another tab or before a reload): Submit is refused until they end.
 */
export function unfinishedNotice(uploads: ServerUpload[]): string {
  const list = uploads
    .map((u) =>
      t("client.unfinishedItem", { name: u.name, received: u.received_chunks.length, total: u.total_chunks }),
    )
    .join(", ");
  return t("client.unfinishedNotice", { count: uploads.length, list });
}

/** A failed upload call: `status` 0 for network errors and aborts. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A readable message from an error body in the API's shapes. */
export function describeError(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    if (typeof parsed.detail === "string") return parsed.detail;
    const first = Object.values(parsed).flat()[0];
    if (typeof first === "string") return first;
  } catch {
    // not JSON
  }
  return t("client.uploadFailed", { status });
}

export async function errorText(res: Response): Promise<string> {
  return describeError(await res.text(), res.status);
}
