/**
 * The fonts the sealed document is written with: Dancing Script (OFL, @fontsource/dancing-script)
 * for typed signatures and initials, Noto Sans (OFL, @fontsource/noto-sans) for every other text.
 * Fontsource ships WOFF files split by script; each is unwrapped to the TrueType file it carries
 * and embedded (subset at save). A text is drawn in runs, each in the first file of its family
 * that has the run's characters; a character no file has becomes "?" on the page (the exact value
 * stays in the embedded seal record).
 */
import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import type { Color, EmbeddedFont, PDF, PDFPage } from "@libpdf/core";

/** A font family as the stamper uses it: the files of its scripts, in order of preference. */
export type FontFamily = "signature" | "text";

/**
 * The TrueType/OpenType file inside a WOFF 1.0 file (W3C WOFF File Format 1.0, section 5): each
 * table zlib-inflated when stored compressed, laid out again behind an sfnt table directory.
 * Throws on anything that is not WOFF 1.0.
 */
export function woffToSfnt(woff: Uint8Array): Uint8Array {
  const view = new DataView(woff.buffer, woff.byteOffset, woff.byteLength);
  if (view.getUint32(0) !== 0x774f4646) throw new Error("not a WOFF 1.0 font");
  const flavor = view.getUint32(4);
  const numTables = view.getUint16(12);
  const tables: { tag: number; checksum: number; data: Uint8Array }[] = [];
  for (let i = 0; i < numTables; i++) {
    const at = 44 + i * 20;
    const offset = view.getUint32(at + 4);
    const compLength = view.getUint32(at + 8);
    const origLength = view.getUint32(at + 12);
    const stored = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? new Uint8Array(inflateSync(stored)) : stored;
    if (data.byteLength !== origLength) throw new Error("WOFF table length mismatch");
    tables.push({ tag: view.getUint32(at), checksum: view.getUint32(at + 16), data });
  }
  const padded = (n: number) => (n + 3) & ~3;
  const headerSize = 12 + 16 * numTables;
  const total = tables.reduce((sum, t) => sum + padded(t.data.byteLength), headerSize);
  const out = new Uint8Array(total);
  const w = new DataView(out.buffer);
  const entrySelector = Math.floor(Math.log2(numTables));
  const searchRange = 2 ** entrySelector * 16;
  w.setUint32(0, flavor);
  w.setUint16(4, numTables);
  w.setUint16(6, searchRange);
  w.setUint16(8, entrySelector);
  w.setUint16(10, numTables * 16 - searchRange);
  let offset = headerSize;
  tables.forEach((t, i) => {
    const at = 12 + i * 16;
    w.setUint32(at, t.tag);
    w.setUint32(at + 4, t.checksum);
    w.setUint32(at + 8, offset);
    w.setUint32(at + 12, t.data.byteLength);
    out.set(t.data, offset);
    offset += padded(t.data.byteLength);
  });
  return out;
}

const sfntCache = new Map<string, Uint8Array>();

/** One document's fonts: each file embedded on first use. */
export class DocumentFonts {
  private readonly embedded = new Map<string, EmbeddedFont>();

  constructor(
    private readonly pdf: PDF,
    private readonly paths: Record<FontFamily, string[]>,
  ) {}

  private font(path: string): EmbeddedFont {
    let font = this.embedded.get(path);
    if (!font) {
      let sfnt = sfntCache.get(path);
      if (!sfnt) {
        sfnt = woffToSfnt(readFileSync(path));
        sfntCache.set(path, sfnt);
      }
      font = this.pdf.embedFont(sfnt);
      this.embedded.set(path, font);
    }
    return font;
  }

  /** `text` cut into runs, each with the first font of `family` that has its characters. */
  runs(text: string, family: FontFamily): { text: string; font: EmbeddedFont }[] {
    // A typed signature falls back to the text family for characters the script font lacks.
    const paths = family === "signature" ? [...this.paths.signature, ...this.paths.text] : this.paths.text;
    const fonts = paths.map((p) => this.font(p));
    const out: { text: string; font: EmbeddedFont }[] = [];
    for (const raw of text) {
      // Control characters draw nothing: they become spaces.
      const code = raw.codePointAt(0)!;
      const char = code < 0x20 || code === 0x7f ? " " : raw;
      const font = fonts.find((f) => f.canEncode(char));
      const [c, f] = font ? [char, font] : ["?", fonts[0]!];
      const last = out[out.length - 1];
      if (last && last.font === f) last.text += c;
      else out.push({ text: c, font: f });
    }
    return out;
  }

  /**
   * `text` broken into lines no wider than `maxWidth` at `size`: at spaces, and inside a word longer
   * than a line (hashes, user agents).
   */
  wrap(text: string, family: FontFamily, size: number, maxWidth: number): string[] {
    const lines: string[] = [];
    let line = "";
    const fits = (s: string) => this.width(s, family, size) <= maxWidth;
    for (const word of text.split(/\s+/).filter(Boolean)) {
      const candidate = line ? `${line} ${word}` : word;
      if (fits(candidate)) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      line = "";
      for (const char of word) {
        if (fits(line + char)) line += char;
        else {
          if (line) lines.push(line);
          line = char;
        }
      }
    }
    if (line || lines.length === 0) lines.push(line);
    return lines;
  }

  /** Width of `text` at `size` points. */
  width(text: string, family: FontFamily, size: number): number {
    return this.runs(text, family).reduce((sum, r) => sum + r.font.widthOfTextAtSize(r.text, size), 0);
  }

  /** Draws one line of `text` with its baseline at (x, y) in the page's current coordinates. */
  drawLine(
    page: PDFPage,
    text: string,
    options: { x: number; y: number; size: number; family: FontFamily; color?: Color },
  ): void {
    let x = options.x;
    for (const run of this.runs(text, options.family)) {
      page.drawText(run.text, {
        x,
        y: options.y,
        size: options.size,
        font: run.font,
        ...(options.color ? { color: options.color } : {}),
      });
      x += run.font.widthOfTextAtSize(run.text, options.size);
    }
  }
}
