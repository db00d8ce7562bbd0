/**
 * What the server hands the signing step's script (the page's JSON data block) and what the script
 * posts back (the `values` form field). Types and constants only: shared by the server-rendered
 * view (src/web/esign-signing-view.tsx) and the client (esign.ts).
 */

/** The kinds of field a signer fills. */
export const FIELD_TYPES = ["signature", "initials", "date", "text", "checkbox"] as const;
/** One of FIELD_TYPES. */
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * One field for this signer. `page` counts from 1; `x`, `y`, `width`, `height` are PDF points
 * (1/72 inch) from the top-left corner of the page as a viewer shows it (its crop box, with the
 * page's own rotation applied), y growing downwards.
 */
export interface SigningField {
  id: string;
  type: FieldType;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  required: boolean;
  /** What the field asks for, shown to the signer and read by screen readers (may be empty). */
  label: string;
}

/** An adopted signature or set of initials, as applied to a field. */
export interface SignatureValue {
  /** Typed (the name rendered in the signature font) or drawn with a finger, pen or mouse. */
  method: "typed" | "drawn";
  /** The typed text (typed only). */
  text?: string;
  /** The mark as a PNG `data:` URL, transparent background, cropped to the ink. */
  image: string;
}

/**
 * The value of one field in the posted `values` JSON, by field id: text fields a string (may be
 * empty when optional), checkboxes a boolean, dates the signer's local date `YYYY-MM-DD`,
 * signatures and initials a SignatureValue, or null when an optional one was left unsigned.
 */
export type FieldValue = string | boolean | SignatureValue | null;

/** The posted `values` form field, parsed: every field of the signer by id. */
export type SigningValues = Record<string, FieldValue>;

/** The id of the page's `<script type="application/json">` block holding SigningData. */
export const SIGNING_DATA_ID = "fy-signing-data";

/** The JSON data block of the signing step. */
export interface SigningData {
  pdfUrl: string;
  fields: SigningField[];
  signerName: string;
  /** pdf.js's worker and data directories, and the signature font files with their ranges. */
  assets: {
    worker: string;
    cMaps: string;
    standardFonts: string;
    wasm: string;
    iccs: string;
    signatureFonts: readonly { url: string; unicodeRange: string }[];
  };
  /** The page's language, the BCP 47 tag of its dates, and the `signing.*` messages (ICU). */
  locale: string;
  format: string;
  messages: Record<string, string>;
}
