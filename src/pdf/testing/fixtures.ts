/** PDFs and images made for tests and benchmarks (nothing large is committed). */
import { PDF, rgb } from "@libpdf/core";
import sharp from "sharp";

/** A text PDF of `pages` Letter pages, each with a heading and paragraphs; `rotate` turns page 2. */
export async function textPdf(
  pages: number,
  options: { rotateSecond?: 90 | 180 | 270 } = {},
): Promise<Uint8Array> {
  const pdf = PDF.create();
  for (let n = 1; n <= pages; n++) {
    const page = pdf.addPage({
      size: "letter",
      ...(n === 2 && options.rotateSecond ? { rotate: options.rotateSecond } : {}),
    });
    page.drawText(`Agreement, page ${n}`, { x: 72, y: 720, size: 18 });
    for (let line = 0; line < 40; line++) {
      page.drawText(`Clause ${n}.${line + 1}: the parties agree to the terms set out in this document.`, {
        x: 72,
        y: 690 - line * 15,
        size: 10,
        color: rgb(0.2, 0.2, 0.2),
      });
    }
  }
  return pdf.save();
}

/**
 * An image-heavy PDF like a scan: `pages` pages each holding one noisy JPEG of about
 * `bytesPerPage` (random pixels do not compress, so the size is predictable).
 */
export async function scannedPdf(pages: number, bytesPerPage: number): Promise<Uint8Array> {
  const pdf = PDF.create();
  // Random greyscale noise at quality 90 is about 0.9 bytes per pixel.
  const side = Math.round(Math.sqrt(bytesPerPage / 0.9));
  for (let n = 0; n < pages; n++) {
    const noise = Buffer.alloc(side * side);
    for (let i = 0; i < noise.length; i++) noise[i] = (Math.random() * 256) | 0;
    const jpeg = await sharp(noise, { raw: { width: side, height: side, channels: 1 } })
      .jpeg({ quality: 90 })
      .toBuffer();
    const page = pdf.addPage({ size: "a4" });
    page.drawImage(pdf.embedJpeg(jpeg), { x: 0, y: 0, width: page.width, height: page.height });
  }
  return pdf.save();
}

/** A PDF protected with a user password. */
export async function encryptedPdf(): Promise<Uint8Array> {
  const pdf = PDF.create();
  pdf.addPage({ size: "letter" }).drawText("secret", { x: 72, y: 700 });
  pdf.setProtection({ userPassword: "open sesame", ownerPassword: "owner" });
  return pdf.save();
}

/** A drawn signature: a dark stroke on a transparent background, as a PNG. */
export async function drawnSignaturePng(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100"><path d="M10 70 C 60 10, 90 90, 140 40 S 220 80, 290 30" stroke="#102060" stroke-width="5" fill="none"/></svg>`;
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer());
}
