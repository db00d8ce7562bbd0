/** Field rules of media uploads: file names, media types, chunk numbers. */

/** Longest stored file name, in characters (the extension is kept when a name is cut). */
export const MAX_NAME_LENGTH = 255;
/** Most chunks one media may have. */
export const MAX_TOTAL_CHUNKS = 100_000;

// C0 and C1 controls and the bidi overrides that disguise extensions ("exe\u202Efdp.pdf").
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A safe file name from a client's: only the last path segment (both separators), no control or
 * bidi characters, no leading dots or surrounding spaces, at most MAX_NAME_LENGTH characters with
 * the extension kept. Returns "" when nothing usable is left.
 */
export function sanitizeFileName(raw: string): string {
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

/** A safe `Content-Disposition: attachment` header for a stored name (ASCII fallback + RFC 5987). */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_") || "download";
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
