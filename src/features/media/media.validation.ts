/** Field rules of media uploads: file names, media types, chunk numbers, declared size and fingerprint. */
import { ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import type { Uploader } from "./media.context.js";

/** Longest stored file name, in characters (the extension is kept when a name is cut). */
const MAX_NAME_LENGTH = 255;
/** Most chunks one media may have. */
const MAX_TOTAL_CHUNKS = 100_000;

// C0 and C1 controls and the bidi overrides that disguise extensions ("exe\u202Efdp.pdf").
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A safe file name from a client's: only the last path segment (both separators), no control or
 * bidi characters, no leading dots or surrounding spaces, at most MAX_NAME_LENGTH characters with
 * the extension kept. Returns "" when nothing usable is left.
 */
function sanitizeFileName(raw: string): string {
  const last = raw.split(/[\\/]/).pop() ?? "";
  let name = last.replace(CONTROL, "").normalize("NFC").trim().replace(/^\.+/, "").trim();
  if (name === "" || name === "." || name === "..") return "";
  if (name.length > MAX_NAME_LENGTH) {
    const ext = extensionOf(name);
    const tail = ext && ext.length <= 20 ? `.${ext}` : "";
    name = name.slice(0, MAX_NAME_LENGTH - tail.length) + tail;
  }
  return name;
}

/** Lower-case extension of a file name without the dot ("" when none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  if (dot <= 0 || dot === name.length - 1) return "";
  const ext = name.slice(dot + 1).toLowerCase();
  return /^[a-z0-9_+-]{1,20}$/.test(ext) ? ext : "";
}

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** A media type `type/subtype` (parameters dropped, lower-cased), or undefined when malformed. */
export function parseMediaType(raw: string): string | undefined {
  const bare = (raw.split(";")[0] ?? "").trim().toLowerCase();
  return MEDIA_TYPE.test(bare) ? bare : undefined;
}

/** Parses a positive integer field that arrives as text; undefined when absent, NaN when invalid. */
export function parsePositiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const s = raw.trim();
  if (!/^\d{1,12}$/.test(s)) return Number.NaN;
  return Number(s);
}

/** A byte count field that arrives as text; undefined when absent, NaN when invalid (15 digits at most). */
export function parseByteCount(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const s = raw.trim();
  return /^\d{1,15}$/.test(s) ? Number(s) : Number.NaN;
}

/** A client's fingerprint of a file: 1 to 128 printable ASCII characters, no spaces (ADR 0022). */
const FINGERPRINT = /^[\x21-\x7e]{1,128}$/;
const FINGERPRINT_MESSAGE = "Enter 1 to 128 printable ASCII characters without spaces.";

/** The `fingerprint` field: undefined when absent; 400 when malformed. */
export function parseFingerprint(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!FINGERPRINT.test(raw)) throw ValidationError.field("fingerprint", FINGERPRINT_MESSAGE);
  return raw;
}

/** Whether a `fingerprint` field is present but malformed. */
function badFingerprint(raw: string | undefined): boolean {
  return raw !== undefined && raw !== "" && !FINGERPRINT.test(raw);
}

/** What an upload says about its file with its first chunk: declared size and fingerprint (null: not given). */
export interface Declaration {
  /** `total_bytes`: the file's size in bytes, which its chunks must add up to. */
  bytes: number | null;
  fingerprint: string | null;
}

/** The declaration in an upload's fields, with the problems found in it (field → messages, empty when none). */
export function readDeclaration(fields: Record<string, string>): {
  declaration: Declaration;
  errors: Record<string, string[]>;
} {
  const errors: Record<string, string[]> = {};
  const bytes = parseByteCount(fields.total_bytes);
  if (bytes !== undefined && Number.isNaN(bytes)) errors.total_bytes = ["A valid integer is required."];
  const bad = badFingerprint(fields.fingerprint);
  if (bad) errors.fingerprint = [FINGERPRINT_MESSAGE];
  return {
    declaration: {
      bytes: bytes === undefined || Number.isNaN(bytes) ? null : bytes,
      fingerprint: bad ? null : (parseFingerprint(fields.fingerprint) ?? null),
    },
    errors,
  };
}

/** 400 unless 1 <= current <= total. */
export function checkChunkNumbers(total: number, current: number): void {
  if (!Number.isInteger(current) || current < 1 || current > total) {
    throw ValidationError.field(
      "current_chunk",
      `Ensure this value is between 1 and total_chunks (${total}).`,
    );
  }
}

/** What an owner's upload goes into: a request, or a container feature. */
export type TargetRef = { kind: "request"; id: number } | { kind: "feature"; id: number };

/** The body fields that may name a container feature (`push` and `pushpull` as clients send them). */
export const FEATURE_FIELDS = ["feature", "push", "pushpull", "pull"] as const;

/** The feature an owner's fields name, when one of FEATURE_FIELDS is given (undefined: none). */
export function featureField(fields: Record<string, string>): { field: string; raw: string } | undefined {
  for (const field of FEATURE_FIELDS) {
    const raw = fields[field];
    if (raw !== undefined && raw.trim() !== "") return { field, raw };
  }
  return undefined;
}

/** The fields of a new media, checked. */
export interface CreateInput {
  /** Set for owner uploads; recipients' targets come from their page. */
  target: TargetRef | undefined;
  name: string;
  contentType: string;
  total: number;
  current: number;
  declaration: Declaration;
}

/**
 * Checks the fields of a new media once the whole body is read (400 with every problem at once).
 * `name` and `content_type` default to the file part's name and type; `total_bytes` and
 * `fingerprint` are optional.
 */
export function parseCreateFields(
  uploader: Uploader,
  fields: Record<string, string>,
  file: { filename: string | undefined; mimetype: string | undefined },
): CreateInput {
  const errors: Record<string, string[]> = {};
  let target: TargetRef | undefined;
  if (uploader.kind === "owner") {
    const feature = featureField(fields);
    if (feature) {
      const id = parseId(feature.raw);
      if (id === undefined) errors[feature.field] = ["A valid integer is required."];
      else target = { kind: "feature", id };
    } else if (fields.request === undefined || fields.request.trim() === "")
      errors.request = ["This field is required."];
    else {
      const id = parseId(fields.request);
      if (id === undefined) errors.request = ["A valid integer is required."];
      else target = { kind: "request", id };
    }
  }
  const rawName = fields.name ?? file.filename ?? "";
  const name = sanitizeFileName(rawName);
  if (rawName.trim() === "") errors.name = ["This field is required."];
  else if (name === "") errors.name = ["Enter a file name with an extension, e.g. report.pdf."];
  const rawType = fields.content_type ?? file.mimetype ?? "application/octet-stream";
  const contentType = parseMediaType(rawType);
  if (!contentType) errors.content_type = ["Enter a media type such as application/pdf."];
  const total = parsePositiveInt(fields.total_chunks) ?? 1;
  const current = parsePositiveInt(fields.current_chunk) ?? 1;
  if (!Number.isInteger(total) || total < 1 || total > MAX_TOTAL_CHUNKS) {
    errors.total_chunks = [`Ensure this value is between 1 and ${MAX_TOTAL_CHUNKS}.`];
  } else if (!Number.isInteger(current) || current < 1 || current > total) {
    errors.current_chunk = [`Ensure this value is between 1 and total_chunks (${total}).`];
  }
  const { declaration, errors: declarationErrors } = readDeclaration(fields);
  Object.assign(errors, declarationErrors);
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return { target, name, contentType: contentType!, total, current, declaration };
}

/** A safe `Content-Disposition: attachment` header for a stored name (ASCII fallback + RFC 5987). */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_") || "download";
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
