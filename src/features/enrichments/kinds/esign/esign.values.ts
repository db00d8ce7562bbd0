/**
 * The server's check of what a signer posts when they finish (the signing view's `values` JSON):
 * only the fields of the signer's role, every required one filled, each of its type (a date that
 * parses, a checkbox true or false, text under a cap), and a signature or initials that is either
 * a PNG `data:` URL under a size cap that decodes (read with sharp) or typed text under a cap.
 * Anything else is refused with a message naming the field; nothing is stored.
 */
import sharp from "sharp";
import type { MessageKey } from "../../../../shared/i18n/catalogues/en.js";
import type { EsignField } from "./esign.model.js";

/** Longest text field value, in characters (the signing view's inputs take as much). */
export const TEXT_MAX = 500;
/** Longest typed signature or initials, in characters (the adopt dialog takes as much). */
export const TYPED_MAX = 80;
/** Largest signature or initials image, in bytes once decoded. */
export const MARK_MAX_BYTES = 256 * 1024;
/** Largest side of a signature or initials image, in pixels. */
const MARK_MAX_SIDE = 8000;
const PNG_PREFIX = "data:image/png;base64,";

/** A stored signature or initials. */
export interface StoredMark {
  method: "typed" | "drawn";
  /** The typed text (typed only). */
  text?: string;
  /** The PNG as a `data:` URL, as adopted. */
  image: string;
}

/** A stored value: text and dates as text, checkboxes as booleans, marks, null for an optional one left empty. */
export type StoredValue = string | boolean | StoredMark | null;

/** Why the values were refused: a message key and its field. */
export interface ValuesProblem {
  key: MessageKey;
  field?: string;
  max?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function validDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** True when `image` is a PNG data URL under the caps that decodes as a PNG. */
async function decodablePng(image: unknown): Promise<boolean> {
  if (typeof image !== "string" || !image.startsWith(PNG_PREFIX)) return false;
  const base64 = image.slice(PNG_PREFIX.length);
  if (base64.length > Math.ceil(MARK_MAX_BYTES / 3) * 4 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64))
    return false;
  const bytes = Buffer.from(base64, "base64");
  if (bytes.length === 0 || bytes.length > MARK_MAX_BYTES) return false;
  try {
    const meta = await sharp(bytes, { limitInputPixels: MARK_MAX_SIDE * MARK_MAX_SIDE }).metadata();
    if (meta.format !== "png" || !meta.width || !meta.height) return false;
    if (meta.width > MARK_MAX_SIDE || meta.height > MARK_MAX_SIDE) return false;
    // Decoding the pixels, not only the header: a truncated or corrupt PNG fails here.
    await sharp(bytes).raw().toBuffer();
    return true;
  } catch {
    return false;
  }
}

async function readMark(raw: unknown, field: EsignField): Promise<StoredMark | ValuesProblem> {
  if (!isObject(raw)) return { key: "esign.error.signature", field: field.name };
  const keys = Object.keys(raw).filter((k) => !["method", "text", "image"].includes(k));
  if (keys.length) return { key: "esign.error.signature", field: field.name };
  if (raw.method === "typed") {
    const text = typeof raw.text === "string" ? raw.text.trim() : "";
    if (!text || text.length > TYPED_MAX) return { key: "esign.error.typed", field: field.name };
    if (!(await decodablePng(raw.image))) return { key: "esign.error.signature", field: field.name };
    return { method: "typed", text, image: raw.image as string };
  }
  if (raw.method === "drawn" && raw.text === undefined) {
    if (!(await decodablePng(raw.image))) return { key: "esign.error.signature", field: field.name };
    return { method: "drawn", image: raw.image as string };
  }
  return { key: "esign.error.signature", field: field.name };
}

/**
 * Reads the posted `values` of a signer whose fields are `mine`: the values to store, or the first
 * problem found.
 */
export async function readSigningValues(
  posted: string | undefined,
  mine: EsignField[],
  all: EsignField[],
): Promise<{ values: Record<string, StoredValue> } | { problem: ValuesProblem }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(posted ?? "");
  } catch {
    return { problem: { key: "esign.error.values" } };
  }
  if (!isObject(parsed)) return { problem: { key: "esign.error.values" } };
  const names = new Set(mine.map((f) => f.name));
  for (const key of Object.keys(parsed))
    if (!names.has(key)) {
      // Another role's field, or no field at all: the name of an unknown one is not repeated.
      const known = all.some((f) => f.name === key);
      return { problem: { key: "esign.error.notYours", field: known ? key : "?" } };
    }
  const values: Record<string, StoredValue> = {};
  for (const field of mine) {
    const required = field.required !== false;
    const raw = parsed[field.name];
    const empty =
      raw === undefined || raw === null || raw === false || (typeof raw === "string" && raw.trim() === "");
    if (empty) {
      if (required) return { problem: { key: "esign.error.missing", field: field.name } };
      values[field.name] = field.type === "checkbox" ? false : field.type === "text" ? "" : null;
      continue;
    }
    switch (field.type) {
      case "text":
        if (typeof raw !== "string" || raw.trim().length > TEXT_MAX)
          return { problem: { key: "esign.error.text", field: field.name, max: TEXT_MAX } };
        values[field.name] = raw.trim();
        break;
      case "date":
        if (typeof raw !== "string" || !validDate(raw))
          return { problem: { key: "esign.error.date", field: field.name } };
        values[field.name] = raw;
        break;
      case "checkbox":
        if (raw !== true) return { problem: { key: "esign.error.checkbox", field: field.name } };
        values[field.name] = true;
        break;
      case "signature":
      case "initials": {
        const mark = await readMark(raw, field);
        if ("key" in mark) return { problem: mark };
        values[field.name] = mark;
        break;
      }
    }
  }
  return { values };
}
