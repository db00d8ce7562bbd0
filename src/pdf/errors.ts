/**
 * The PDF engine's one error: a closed set of reasons, each with the HTTP status an API maps it to
 * (400 not a PDF, 413 too large, 422 a PDF Ferry refuses or fields that do not fit, 503 too many
 * documents waiting for a worker). It is an
 * AppError, so a route that lets it through answers in the spec's error shape.
 */
import { AppError, type ErrorCode } from "../shared/errors.js";

/** Why the engine refused. */
export type PdfErrorReason =
  | "NOT_A_PDF"
  | "PDF_TOO_LARGE"
  | "PDF_ENCRYPTED"
  | "PDF_TOO_MANY_PAGES"
  | "PDF_UNREADABLE"
  | "FIELDS_INVALID"
  | "FIELD_VALUE_INVALID"
  | "SEALING_IDENTITY_INVALID"
  | "ENGINE_BUSY"
  | "ENGINE_FAILED";

const STATUS_CODE: Record<PdfErrorReason, ErrorCode> = {
  NOT_A_PDF: "INVALID_REQUEST",
  PDF_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  PDF_ENCRYPTED: "UNPROCESSABLE_ENTITY",
  PDF_TOO_MANY_PAGES: "UNPROCESSABLE_ENTITY",
  PDF_UNREADABLE: "UNPROCESSABLE_ENTITY",
  FIELDS_INVALID: "UNPROCESSABLE_ENTITY",
  FIELD_VALUE_INVALID: "UNPROCESSABLE_ENTITY",
  SEALING_IDENTITY_INVALID: "INTERNAL_SERVER_ERROR",
  ENGINE_BUSY: "SERVICE_UNAVAILABLE",
  ENGINE_FAILED: "INTERNAL_SERVER_ERROR",
};

/** A refusal of the PDF engine: `reason` is stable, `detail` is safe to show. */
export class PdfError extends AppError {
  constructor(
    readonly reason: PdfErrorReason,
    detail: string,
  ) {
    super(STATUS_CODE[reason], detail);
    this.name = "PdfError";
  }
}
