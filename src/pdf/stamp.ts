/**
 * Draws the signers' values into their fields, in the page's displayed coordinates (types.ts): a
 * transformation per page rotation maps them to the page's user space, so a field lands where the
 * signer saw it and its text stands upright as shown.
 */
import { ops, type PDF, type PDFPage, rgb } from "@libpdf/core";
import { PdfError } from "./errors.js";
import type { DocumentFonts } from "./fonts.js";
import { visibleBox } from "./inspect.js";
import type { FilledField } from "./types.js";

/** Longest text value a field takes, in characters. */
export const MAX_TEXT_VALUE = 500;
/** Largest drawn signature, in bytes of PNG. */
export const MAX_PNG_BYTES = 2 * 1024 * 1024;

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const INK = rgb(0.05, 0.1, 0.35);

/** Refuses a value that does not suit its field (FIELD_VALUE_INVALID). */
export function checkFieldValue(field: FilledField): void {
  const v = field.value;
  if (!v) return;
  const refuse = (why: string) => {
    throw new PdfError("FIELD_VALUE_INVALID", `Field ${field.id}: ${why}`);
  };
  switch (field.type) {
    case "signature":
    case "initials":
      if (v.kind !== "typed" && v.kind !== "drawn") refuse("a signature is typed text or a drawn PNG.");
      break;
    case "date":
    case "text":
      if (v.kind !== "text") refuse("the value must be text.");
      break;
    case "checkbox":
      if (v.kind !== "checkbox") refuse("the value must be checked or not.");
      break;
  }
  if ((v.kind === "typed" || v.kind === "text") && [...v.text].length > MAX_TEXT_VALUE)
    refuse(`the text is longer than ${MAX_TEXT_VALUE} characters.`);
  if (v.kind === "typed" && v.text.trim() === "") refuse("a typed signature is empty.");
  if (v.kind === "drawn") {
    if (v.png.byteLength > MAX_PNG_BYTES) refuse("the drawn signature is larger than 2 MB.");
    if (!PNG_MAGIC.every((b, i) => v.png[i] === b)) refuse("a drawn signature must be a PNG image.");
  }
}

/**
 * The matrix from displayed coordinates (origin bottom-left of the page as shown, y up) to the
 * page's user space, for its rotation (clockwise, as /Rotate turns the page for display).
 */
function displayToUser(page: PDFPage): [number, number, number, number, number, number] {
  const b = visibleBox(page);
  const [left, bottom, right, top] = [b.x, b.y, b.x + b.width, b.y + b.height];
  switch (page.rotation) {
    case 90:
      return [0, 1, -1, 0, right, bottom];
    case 180:
      return [-1, 0, 0, -1, right, top];
    case 270:
      return [0, -1, 1, 0, left, top];
    default:
      return [1, 0, 0, 1, left, bottom];
  }
}

/** Draws every field that has a value onto its page. Values are checked first (checkFieldValue). */
export function stampFields(pdf: PDF, fonts: DocumentFonts, fields: readonly FilledField[]): void {
  for (const field of fields) checkFieldValue(field);
  for (const field of fields) {
    const value = field.value;
    if (!value) continue;
    const page = pdf.getPage(field.page - 1)!;
    const turned = page.rotation === 90 || page.rotation === 270;
    const box = visibleBox(page);
    const shownHeight = turned ? box.width : box.height;
    // The field's box with its origin at the bottom-left, y up.
    const x = field.x;
    const y = shownHeight - field.y - field.height;
    const { width: w, height: h } = field;
    // libpdf isolates a page's existing content in q/Q at its first append, so that drawing starts
    // from the default matrix. A page without content (a blank page) has nothing to isolate then,
    // and the isolation would come at the next append and enclose the matrix below, leaving the
    // value drawn unturned in user space (misplaced on a rotated page). An empty first append
    // makes the isolation happen before the matrix on every page.
    page.drawOperators([ops.pushGraphicsState(), ops.popGraphicsState()]);
    page.drawOperators([ops.pushGraphicsState(), ops.concatMatrix(...displayToUser(page))]);
    switch (value.kind) {
      case "typed": {
        const family = "signature";
        const natural = fonts.width(value.text, family, 1);
        const size = Math.max(4, Math.min(h * 0.72, (w * 0.94) / Math.max(natural, 0.01)));
        const textWidth = natural * size;
        fonts.drawLine(page, value.text, {
          x: x + (w - textWidth) / 2,
          y: y + h * 0.28,
          size,
          family,
          color: INK,
        });
        break;
      }
      case "drawn": {
        const image = pdf.embedPng(value.png);
        const scale = Math.min(w / image.width, h / image.height);
        const iw = image.width * scale;
        const ih = image.height * scale;
        page.drawImage(image, { x: x + (w - iw) / 2, y: y + (h - ih) / 2, width: iw, height: ih });
        break;
      }
      case "text": {
        const natural = fonts.width(value.text, "text", 1);
        const size = Math.max(4, Math.min(h * 0.7, 11, (w * 0.98) / Math.max(natural, 0.01)));
        fonts.drawLine(page, value.text, {
          x: x + 1,
          y: y + (h - size) / 2 + size * 0.22,
          size,
          family: "text",
        });
        break;
      }
      case "checkbox": {
        if (!value.checked) break;
        const side = Math.min(w, h);
        const cx = x + (w - side) / 2;
        const cy = y + (h - side) / 2;
        const pad = side * 0.15;
        const thickness = Math.max(0.75, side * 0.1);
        page.drawLine({
          start: { x: cx + pad, y: cy + side * 0.5 },
          end: { x: cx + side * 0.42, y: cy + pad },
          thickness,
          color: INK,
        });
        page.drawLine({
          start: { x: cx + side * 0.42, y: cy + pad },
          end: { x: cx + side - pad, y: cy + side - pad },
          thickness,
          color: INK,
        });
        break;
      }
    }
    page.drawOperators([ops.popGraphicsState()]);
  }
}
