/** Reads a PDF the engine is asked to work on, refusing what it does not take (PdfError). */
import { createHash } from "node:crypto";
import { PDF, type PDFPage } from "@libpdf/core";
import { PdfError } from "./errors.js";
import { type PageSize, PDF_LIMITS, type PdfInspection } from "./types.js";

/** The visible box of a page in user space (CropBox, which defaults to the MediaBox). */
export function visibleBox(page: PDFPage): { x: number; y: number; width: number; height: number } {
  return page.getCropBox();
}

/** The page's size as a viewer shows it: the visible box, width and height swapped at 90 and 270 degrees. */
export function displayedSize(page: PDFPage): PageSize {
  const box = visibleBox(page);
  const turned = page.rotation === 90 || page.rotation === 270;
  return turned ? { width: box.height, height: box.width } : { width: box.width, height: box.height };
}

/** True when the bytes start like a PDF (`%PDF-` within the first 1024 bytes, as readers allow). */
export function looksLikePdf(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024));
  return head.indexOf("%PDF-") !== -1;
}

/** True when the file declares encryption in a trailer or cross-reference stream. */
function declaresEncryption(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf("/Encrypt") !== -1;
}

/**
 * Opens a PDF for the engine: refuses more than 50 MB (PDF_TOO_LARGE), anything that is not a PDF
 * (NOT_A_PDF), an encrypted document (PDF_ENCRYPTED), one that cannot be parsed or has no page
 * (PDF_UNREADABLE) and more than 500 pages (PDF_TOO_MANY_PAGES).
 */
export async function openPdf(bytes: Uint8Array): Promise<PDF> {
  if (bytes.byteLength > PDF_LIMITS.maxBytes)
    throw new PdfError("PDF_TOO_LARGE", "The PDF is larger than 50 MB.");
  if (!looksLikePdf(bytes)) throw new PdfError("NOT_A_PDF", "The file is not a PDF.");
  let pdf: PDF;
  try {
    pdf = await PDF.load(bytes);
  } catch {
    if (declaresEncryption(bytes))
      throw new PdfError(
        "PDF_ENCRYPTED",
        "The PDF is encrypted or password-protected; remove the protection first.",
      );
    throw new PdfError("PDF_UNREADABLE", "The PDF cannot be read: it is damaged or not a PDF.");
  }
  if (pdf.isEncrypted)
    throw new PdfError(
      "PDF_ENCRYPTED",
      "The PDF is encrypted or password-protected; remove the protection first.",
    );
  const count = pdf.getPageCount();
  if (count === 0) throw new PdfError("PDF_UNREADABLE", "The PDF has no pages.");
  if (count > PDF_LIMITS.maxPages)
    throw new PdfError(
      "PDF_TOO_MANY_PAGES",
      `The PDF has ${count} pages; the limit is ${PDF_LIMITS.maxPages}.`,
    );
  return pdf;
}

/** Inspects a PDF in the calling thread (the pool runs it off the event loop: see index.ts). */
export async function inspectPdfBytes(bytes: Uint8Array): Promise<PdfInspection> {
  const pdf = await openPdf(bytes);
  const pages = pdf.getPages().map(displayedSize);
  const result: PdfInspection = {
    pages,
    encrypted: false,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    size: bytes.byteLength,
  };
  const form = pdf.hasForm() ? pdf.getForm() : null;
  if (form) {
    const fields = form.getFields().map((f) => ({ name: f.name, type: f.type }));
    if (fields.length > 0) result.formFields = fields;
  }
  return result;
}
