/**
 * The PDF engine's types. Coordinates: PDF points (1/72 inch), origin at the TOP-LEFT corner of the
 * page as a viewer shows it (its visible box, the CropBox, after the page's /Rotate), x to the
 * right, y downwards; `page` is 1-based. A field drawn in a browser over a page rendered at scale s
 * is at (left / s, top / s) with size (width / s, height / s).
 */

/** Limits of a document the engine accepts. */
export const PDF_LIMITS = {
  /** Largest file, in bytes (50 MB). */
  maxBytes: 50 * 1024 * 1024,
  /** Most pages. */
  maxPages: 500,
} as const;

/** One page's displayed size, in points (rotation applied). */
export interface PageSize {
  width: number;
  height: number;
}

/** A form field the PDF already carries (AcroForm), as a template source. */
export interface ExistingFormField {
  name: string;
  type: string;
}

/** What inspectPdf learns about an acceptable document. */
export interface PdfInspection {
  pages: PageSize[];
  /** Always false for a document inspectPdf returns (encrypted documents are refused). */
  encrypted: boolean;
  /** AcroForm fields, when the document has a form. */
  formFields?: ExistingFormField[];
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  /** Size in bytes. */
  size: number;
}

/** The kinds of field a signer fills. */
export type FieldType = "signature" | "initials" | "date" | "text" | "checkbox";

/** A field placed on the document (see the coordinate system above). */
export interface FieldPlacement {
  id: string;
  /** The signer role that fills it. */
  role: string;
  type: FieldType;
  /** 1-based page number. */
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A problem with one field, found by validateFields. */
export interface FieldProblem {
  fieldId: string;
  code: "PAGE_MISSING" | "OFF_PAGE" | "TOO_SMALL" | "OVERLAP" | "DUPLICATE_ID";
  /** The other field of an overlap. */
  otherFieldId?: string;
  message: string;
}

/**
 * A field's value: a signature or initials either typed (drawn in the bundled script font) or drawn
 * (PNG bytes); a date or text as a string; a checkbox as a boolean.
 */
export type FieldValue =
  | { kind: "typed"; text: string }
  | { kind: "drawn"; png: Uint8Array }
  | { kind: "text"; text: string }
  | { kind: "checkbox"; checked: boolean };

/** A placed field with the value its signer gave (no value: left empty, drawn as nothing). */
export interface FilledField extends FieldPlacement {
  value?: FieldValue | undefined;
}

/** How a signer was identified: a link, a two-factor code, reverse authentication, or another word. */
export type AuthenticationMethod = "link" | "two_factor_code" | "reverse_authentication" | (string & {});

/** A signer as the certificate page states them. Times are ISO 8601. */
export interface SealSigner {
  name: string;
  email: string;
  role: string;
  authentication: AuthenticationMethod[];
  signedAt: string;
  ip: string;
  userAgent: string;
  consentAt: string;
}

/** One line of the audit page. */
export interface SealAuditEntry {
  at: string;
  event: string;
  actor: string;
  ip?: string | undefined;
}

/** Everything sealDocument needs. */
export interface SealInput {
  original: Uint8Array;
  fields: FilledField[];
  signers: SealSigner[];
  audit: SealAuditEntry[];
  documentId: string;
  title: string;
  /** When the seal is made (default: now). ISO 8601. */
  sealedAt?: string | undefined;
}

/** What sealDocument returns. */
export interface SealResult {
  /** The sealed PDF. */
  bytes: Uint8Array;
  /** SHA-256 of the original upload, hex. */
  originalSha256: string;
  /** SHA-256 of the completed document (fields filled, before the certificate pages), hex. */
  completedSha256: string;
  /** SHA-256 of the sealed PDF, hex. */
  sealedSha256: string;
  sealedAt: string;
}

/** The record embedded in the sealed PDF (inside the signed bytes) that verification reads back. */
export interface SealRecord {
  format: "ferry-seal/1";
  documentId: string;
  title: string;
  sealedAt: string;
  originalSha256: string;
  completedSha256: string;
  /** Length in bytes of the completed document: the sealed file's first bytes are exactly it. */
  completedLength: number;
  signers: SealSigner[];
}

/** What verifyDocument finds. */
export interface VerificationResult {
  /** A signature by one of the operator's sealing certificates was found and is intact. */
  sealedByFerry: boolean;
  /** That signature covers the whole file: not one byte changed or was added after sealing. */
  unchanged: boolean;
  /** From the seal record of the signed revision (empty when not sealed by Ferry). */
  signers: SealSigner[];
  sealedAt: string | null;
  documentId: string | null;
  title: string | null;
  originalSha256: string | null;
  /** SHA-256 of the file checked, hex. */
  sha256: string;
  /** SHA-256 fingerprint of the certificate that sealed it. */
  certificateFingerprint: string | null;
}
