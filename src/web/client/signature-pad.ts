/**
 * The signature pad of the signing step: strokes drawn with pointer events (a finger, a pen or a
 * mouse alike), kept as points relative to the pad's width so a resize or a rotation redraws them
 * in place, and exported as a transparent PNG cropped to the ink. Also renders a typed name in
 * the signature font to the same kind of PNG.
 */

/** The family name the signature font is registered under (see loadSignatureFont). */
export const SIGNATURE_FAMILY = "Ferry Signature";

/** Ink colour of drawn and typed marks: a dark blue, as pens write. */
const INK = "#142a66";
/** Stroke width, as a share of the pad's width. */
const LINE = 0.007;
/** Pixels per unit of pad width in the exported PNG. */
const EXPORT_WIDTH = 1000;

type Point = { x: number; y: number };

/** A drawing surface on a canvas; `onChange` runs after each finished stroke and on clear. */
export class SignaturePad {
  private strokes: Point[][] = [];
  private active: { id: number; stroke: Point[] } | undefined;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly onChange: () => void,
  ) {
    canvas.addEventListener("pointerdown", (e) => this.down(e));
    canvas.addEventListener("pointermove", (e) => this.move(e));
    canvas.addEventListener("pointerup", (e) => this.up(e));
    canvas.addEventListener("pointercancel", (e) => this.up(e));
  }

  /** True when nothing is drawn. */
  isEmpty(): boolean {
    return this.strokes.every((s) => s.length === 0);
  }

  /** Removes every stroke. */
  clear(): void {
    this.strokes = [];
    this.active = undefined;
    this.redraw();
    this.onChange();
  }

  /** Matches the canvas's pixels to its CSS size and redraws (call when shown or resized). */
  resize(): void {
    const ratio = Math.max(1, window.devicePixelRatio || 1);
    const width = this.canvas.clientWidth;
    const height = this.canvas.clientHeight;
    if (width === 0 || height === 0) return;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.redraw();
  }

  /** The drawing as a PNG data URL cropped to the ink, or undefined when empty. */
  toPng(): string | undefined {
    const points = this.strokes.flat();
    if (points.length === 0) return undefined;
    const margin = LINE * 2;
    const minX = Math.min(...points.map((p) => p.x)) - margin;
    const minY = Math.min(...points.map((p) => p.y)) - margin;
    const maxX = Math.max(...points.map((p) => p.x)) + margin;
    const maxY = Math.max(...points.map((p) => p.y)) + margin;
    const out = document.createElement("canvas");
    out.width = Math.max(1, Math.ceil((maxX - minX) * EXPORT_WIDTH));
    out.height = Math.max(1, Math.ceil((maxY - minY) * EXPORT_WIDTH));
    const ctx = out.getContext("2d");
    if (!ctx) return undefined;
    drawStrokes(ctx, this.strokes, EXPORT_WIDTH, -minX * EXPORT_WIDTH, -minY * EXPORT_WIDTH);
    return out.toDataURL("image/png");
  }

  private point(e: PointerEvent): Point {
    const rect = this.canvas.getBoundingClientRect();
    return { x: (e.clientX - rect.left) / rect.width, y: (e.clientY - rect.top) / rect.width };
  }

  private down(e: PointerEvent): void {
    if (e.pointerType === "mouse" && e.button !== 0) return;
    if (this.active) return;
    e.preventDefault();
    this.canvas.setPointerCapture(e.pointerId);
    const stroke = [this.point(e)];
    this.active = { id: e.pointerId, stroke };
    this.strokes.push(stroke);
    this.redraw();
  }

  private move(e: PointerEvent): void {
    if (!this.active || this.active.id !== e.pointerId) return;
    e.preventDefault();
    const events = typeof e.getCoalescedEvents === "function" ? e.getCoalescedEvents() : [];
    for (const one of events.length > 0 ? events : [e]) this.active.stroke.push(this.point(one));
    this.redraw();
  }

  private up(e: PointerEvent): void {
    if (!this.active || this.active.id !== e.pointerId) return;
    this.active = undefined;
    this.onChange();
  }

  private redraw(): void {
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    drawStrokes(ctx, this.strokes, this.canvas.width, 0, 0);
  }
}

/** Draws `strokes` (units of pad width) at `scale` pixels per unit, shifted by `dx`, `dy` pixels. */
function drawStrokes(
  ctx: CanvasRenderingContext2D,
  strokes: Point[][],
  scale: number,
  dx: number,
  dy: number,
): void {
  ctx.strokeStyle = INK;
  ctx.fillStyle = INK;
  ctx.lineWidth = LINE * scale;
  ctx.lineCap = "round";
  ctx.lineJoin = "round";
  const at = (p: Point) => ({ x: p.x * scale + dx, y: p.y * scale + dy });
  for (const stroke of strokes) {
    if (stroke.length === 0) continue;
    const first = at(stroke[0]!);
    if (stroke.length === 1) {
      // A tap leaves a dot.
      ctx.beginPath();
      ctx.arc(first.x, first.y, ctx.lineWidth / 2, 0, Math.PI * 2);
      ctx.fill();
      continue;
    }
    ctx.beginPath();
    ctx.moveTo(first.x, first.y);
    // Through the midpoints, with each sampled point as the control: a smooth line, no corners.
    for (let i = 1; i < stroke.length - 1; i += 1) {
      const p = at(stroke[i]!);
      const next = at(stroke[i + 1]!);
      ctx.quadraticCurveTo(p.x, p.y, (p.x + next.x) / 2, (p.y + next.y) / 2);
    }
    const last = at(stroke[stroke.length - 1]!);
    ctx.lineTo(last.x, last.y);
    ctx.stroke();
  }
}

/** Registers the signature font files (Latin and Latin Extended) and starts loading them. */
export function loadSignatureFont(files: readonly { url: string; unicodeRange: string }[]): Promise<unknown> {
  const faces = files.map(
    (file) =>
      new FontFace(SIGNATURE_FAMILY, `url("${file.url}") format("woff2")`, {
        unicodeRange: file.unicodeRange,
      }),
  );
  for (const face of faces) document.fonts.add(face);
  return Promise.allSettled(faces.map((face) => face.load()));
}

/**
 * `text` written in the signature font as a PNG data URL, cropped to the text with a small margin.
 * Characters the font lacks fall back to the browser's cursive or serif face.
 */
export async function typedSignaturePng(text: string): Promise<string> {
  const size = 96;
  const font = `${size}px "${SIGNATURE_FAMILY}", cursive, serif`;
  await document.fonts.load(font, text).catch(() => undefined);
  const measure = document.createElement("canvas").getContext("2d")!;
  measure.font = font;
  const metrics = measure.measureText(text);
  const ascent = Math.ceil(metrics.actualBoundingBoxAscent || size * 0.9);
  const descent = Math.ceil(metrics.actualBoundingBoxDescent || size * 0.3);
  const left = Math.ceil(metrics.actualBoundingBoxLeft || 0);
  const right = Math.ceil(metrics.actualBoundingBoxRight || metrics.width);
  const margin = Math.round(size * 0.1);
  const out = document.createElement("canvas");
  out.width = Math.max(1, left + right + margin * 2);
  out.height = Math.max(1, ascent + descent + margin * 2);
  const ctx = out.getContext("2d")!;
  ctx.font = font;
  ctx.fillStyle = INK;
  ctx.textBaseline = "alphabetic";
  ctx.fillText(text, margin + left, margin + ascent);
  return out.toDataURL("image/png");
}
