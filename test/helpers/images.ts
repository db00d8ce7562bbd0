/** Real images for tests (made with sharp), and PNGs built chunk by chunk to be wrong on purpose. */
import { crc32 } from "node:zlib";
import sharp from "sharp";

const RED = { r: 200, g: 20, b: 20, alpha: 1 };

/** A small solid image of `type` (PNG, JPEG, GIF or WebP). */
export async function imageOf(
  type: "image/png" | "image/jpeg" | "image/gif" | "image/webp",
  width = 3,
  height = 2,
): Promise<Buffer> {
  const image = sharp({ create: { width, height, channels: 4, background: RED } });
  switch (type) {
    case "image/png":
      return image.png().toBuffer();
    case "image/jpeg":
      return image.jpeg().toBuffer();
    case "image/gif":
      return image.gif().toBuffer();
    case "image/webp":
      return image.webp().toBuffer();
  }
}

/** A GIF of `frames` frames of `width`×`height` (an animation). */
export async function animatedGif(frames: number, width = 4, height = 4): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * frames * 4);
  for (let i = 0; i < raw.length; i += 4) raw.set([(i / 4) % 255, 80, 160, 255], i);
  return sharp(raw, { raw: { width, height: height * frames, channels: 4, pageHeight: height } })
    .gif()
    .toBuffer();
}

/** One PNG chunk: length, type, data, CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/** `png` with `chunk` inserted before its IEND (the last 12 bytes). */
export function withChunkBeforeEnd(png: Buffer, chunk: Buffer): Buffer {
  return Buffer.concat([png.subarray(0, png.length - 12), chunk, png.subarray(png.length - 12)]);
}

/** A valid PNG of exactly `size` bytes: a small image padded with a private ancillary chunk. */
export async function pngOfSize(size: number): Promise<Buffer> {
  const png = await imageOf("image/png");
  return withChunkBeforeEnd(png, pngChunk("prVt", Buffer.alloc(size - png.length - 12, 0x61)));
}

/**
 * A well-formed PNG whose header claims `width`×`height` pixels with a few bytes of compressed
 * data: decoding it would need width × height × 3 bytes (a decompression bomb).
 */
export function pngClaiming(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A GIF of `frames` frames, each `width`×`height` pixels by its image descriptor, with only a few
 * bytes of compressed data: decoding it would need width × height × frames × 4 bytes.
 */
export function gifClaiming(width: number, height: number, frames: number): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt16LE(width, 0);
  size.writeUInt16LE(height, 2);
  const frame = Buffer.concat([
    Buffer.from([0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00]), // graphic control: 0.1 s
    Buffer.from([0x2c, 0, 0, 0, 0]), // an image at 0,0
    size,
    Buffer.from([0x00, 0x02, 0x02, 0x44, 0x01, 0x00]), // no local colours; a few LZW codes
  ]);
  return Buffer.concat([
    Buffer.from("GIF89a", "latin1"),
    size,
    Buffer.from([0x80, 0, 0]), // a global colour table of 2 colours
    Buffer.from([0xff, 0xff, 0xff, 0, 0, 0]),
    ...Array.from({ length: frames }, () => frame),
    Buffer.from([0x3b]),
  ]);
}
