/**
 * The esign step's document: a PDF media object of the account, read whole and checked by the PDF
 * engine (a PDF, not encrypted, at most 50 MB and 500 pages), with the fields checked against its
 * pages (on their page, not overlapping). The API's boxes have a bottom-left origin; the engine's a
 * top-left one: `toPlacement` converts.
 */
import {
  type FieldPlacement,
  type PageSize,
  PDF_LIMITS,
  type PdfEngine,
  PdfError,
} from "../../../../pdf/index.js";
import { AppError, unprocessable } from "../../../../shared/errors.js";
import type { KindMedia } from "../../enrichment-kind.js";
import type { EsignField } from "./esign.model.js";

/** A checked document: its page sizes and SHA-256. */
export interface CheckedDocument {
  pages: PageSize[];
  sha256: string;
}

/** The engine's placement of an API field on a page of `pages` (y measured from the top). */
export function toPlacement(field: EsignField, pages: readonly PageSize[]): FieldPlacement {
  const page = pages[field.page - 1];
  const top = page ? page.height - field.y - field.height : field.y;
  return {
    id: field.name,
    role: field.role,
    type: field.type,
    page: field.page,
    x: field.x,
    y: top,
    width: field.width,
    height: field.height,
  };
}

/**
 * Reads the account's media `mediaId` and checks it as a document to sign, then `fields` on its
 * pages. Every refusal is 422 naming what is wrong: not the account's media, not a PDF
 * (NOT_A_PDF), too large (PDF_TOO_LARGE), encrypted (PDF_ENCRYPTED), too many pages
 * (PDF_TOO_MANY_PAGES), damaged (PDF_UNREADABLE), a field off its page or overlapping another
 * (FIELDS_INVALID, naming the field). 503 when the engine is busy.
 */
export async function checkDocument(
  media: KindMedia,
  pdf: PdfEngine,
  accountId: number,
  mediaId: number,
  fields: readonly EsignField[],
): Promise<CheckedDocument> {
  let bytes: Buffer;
  try {
    bytes = await media.read(accountId, mediaId);
  } catch (error) {
    if (error instanceof AppError && error.status === 413) throw refused("PDF_TOO_LARGE", tooLarge());
    if (error instanceof AppError && error.status < 500)
      throw unprocessable(`The document ${mediaId} is not an available file of this account.`);
    throw error;
  }
  let pages: PageSize[];
  let sha256: string;
  try {
    if (bytes.length > PDF_LIMITS.maxBytes) throw new PdfError("PDF_TOO_LARGE", tooLarge());
    ({ pages, sha256 } = await pdf.inspectPdf(bytes));
  } catch (error) {
    if (error instanceof PdfError && error.reason !== "ENGINE_BUSY" && error.reason !== "ENGINE_FAILED")
      throw refused(error.reason, error.detail);
    throw error;
  }
  const problems = pdf.validateFields(
    pages,
    fields.map((f) => toPlacement(f, pages)),
  );
  const first = problems[0];
  if (first) throw refused("FIELDS_INVALID", first.message);
  return { pages, sha256 };
}

function tooLarge(): string {
  return `The document is larger than ${PDF_LIMITS.maxBytes / 1024 / 1024} MB.`;
}

/** 422 carrying the engine's reason first, so clients can branch on it. */
function refused(reason: string, detail: string): AppError {
  return new AppError("UNPROCESSABLE_ENTITY", `${reason}: ${detail}`);
}
