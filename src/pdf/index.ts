/**
 * Ferry's PDF engine: inspect an uploaded PDF, check where fields are placed, seal a signed document
 * (fields stamped, a signing certificate and an audit page appended, a PAdES signature over the
 * whole file) and verify a sealed one. Coordinates and limits: types.ts. Errors: PdfError.
 */
export { createPdfEngine, type PdfEngine, type PdfEngineOptions } from "./engine.js";
export { PdfError, type PdfErrorReason } from "./errors.js";
export { MIN_FIELD_SIDE, validateFields } from "./fields.js";
export { displayedSize } from "./inspect.js";
export { certificateFingerprint, type SigningIdentityOptions } from "./signing-identity.js";
export { MAX_PNG_BYTES, MAX_TEXT_VALUE } from "./stamp.js";
export * from "./types.js";
