import { describe, expect, it } from "vitest";
import { canvasSize, fitScale, initialsOf, toCssBox } from "./esign-geometry.js";

describe("field geometry", () => {
  it("scales a Letter page (612 pt wide) to a 390 px phone column and a 640 px desktop column", () => {
    expect(fitScale(390, 612)).toBeCloseTo(0.6373, 4);
    expect(fitScale(612, 612)).toBe(1);
    expect(fitScale(0, 612)).toBe(0);
    expect(fitScale(390, 0)).toBe(0);
  });

  it("maps a box in points from the top-left corner to CSS pixels at the scale", () => {
    const box = { x: 72, y: 648, width: 216, height: 36 };
    expect(toCssBox(box, 1)).toEqual({ left: 72, top: 648, width: 216, height: 36 });
    expect(toCssBox(box, 2)).toEqual({ left: 144, top: 1296, width: 432, height: 72 });
    // 390 px wide: one point is 0.6373 px; edges are rounded to a hundredth of a pixel.
    expect(toCssBox(box, fitScale(390, 612))).toEqual({
      left: 45.88,
      top: 412.94,
      width: 137.65,
      height: 22.94,
    });
  });

  it("keeps the box's share of the page whatever the width", () => {
    const box = { x: 306, y: 396, width: 153, height: 99 };
    for (const width of [320, 390, 640, 1280]) {
      const css = toCssBox(box, fitScale(width, 612));
      expect(css.left / width).toBeCloseTo(0.5, 3);
      expect(css.width / width).toBeCloseTo(0.25, 3);
      expect(css.top / (width * (792 / 612))).toBeCloseTo(0.5, 3);
    }
  });
});

describe("canvas size", () => {
  it("renders at the device pixel ratio when the canvas stays small enough", () => {
    expect(canvasSize(390, 505, 3)).toEqual({ width: 1170, height: 1515, ratio: 3 });
    expect(canvasSize(640, 828, 1)).toEqual({ width: 640, height: 828, ratio: 1 });
  });

  it("lowers the ratio, keeping the aspect, when the canvas would pass the pixel budget", () => {
    const size = canvasSize(1280, 1656, 3, 8_000_000);
    expect(size.width * size.height).toBeLessThanOrEqual(8_000_000);
    expect(size.width / size.height).toBeCloseTo(1280 / 1656, 2);
    expect(size.ratio).toBeLessThan(3);
  });

  it("never goes below one device pixel per CSS pixel", () => {
    expect(canvasSize(100, 100, 0.5).ratio).toBe(1);
  });
});

describe("initials", () => {
  it("takes the first letter of each part of a name", () => {
    expect(initialsOf("Jane Doe")).toBe("JD");
    expect(initialsOf("  jean-luc  picard ")).toBe("JLP");
    expect(initialsOf("Émilie Q. Dupré")).toBe("ÉQD");
    expect(initialsOf("")).toBe("");
  });
});
