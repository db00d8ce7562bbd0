/**
 * Where the signing step draws a page and its fields: PDF points (1/72 inch, origin at the page's
 * top-left corner as shown, y down) to CSS pixels at a scale, and the canvas size that renders a
 * page sharply without exceeding what a phone's browser will allocate. No DOM: unit-tested.
 */

/** A field's box on its page, in PDF points from the top-left corner of the page as shown. */
export interface PointBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A box in CSS pixels from the top-left corner of the page's element. */
export interface CssBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** CSS pixels per PDF point when a page `pageWidth` points wide fills `cssWidth` CSS pixels. */
export function fitScale(cssWidth: number, pageWidth: number): number {
  if (!(cssWidth > 0) || !(pageWidth > 0)) return 0;
  return cssWidth / pageWidth;
}

/** `box` (points) in CSS pixels at `scale`, each edge rounded to 1/100 pixel. */
export function toCssBox(box: PointBox, scale: number): CssBox {
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    left: round(box.x * scale),
    top: round(box.y * scale),
    width: round(box.width * scale),
    height: round(box.height * scale),
  };
}

/**
 * The pixel size of the canvas that renders a page of `cssWidth` × `cssHeight` CSS pixels on a
 * screen of `devicePixelRatio`, reduced (keeping the aspect) so it has at most `maxPixels` pixels:
 * mobile browsers refuse or blank canvases past about 16 million pixels. `ratio` is the device
 * pixels per CSS pixel actually used.
 */
export function canvasSize(
  cssWidth: number,
  cssHeight: number,
  devicePixelRatio: number,
  maxPixels = 8_000_000,
): { width: number; height: number; ratio: number } {
  let ratio = Math.max(1, devicePixelRatio || 1);
  const area = cssWidth * cssHeight * ratio * ratio;
  if (area > maxPixels) ratio = Math.sqrt(maxPixels / (cssWidth * cssHeight));
  return {
    width: Math.max(1, Math.floor(cssWidth * ratio)),
    height: Math.max(1, Math.floor(cssHeight * ratio)),
    ratio,
  };
}

/** The initials of a name as people write them: "Jane Q. van Doe" → "JQVD", at most four letters. */
export function initialsOf(name: string): string {
  return name
    .trim()
    .split(/[\s\-.]+/u)
    .filter(Boolean)
    .map((part) => Array.from(part)[0]!.toLocaleUpperCase())
    .join("")
    .slice(0, 4);
}
