/**
 * Images accounts show to recipients (a branding logo, a requester's avatar), checked as images
 * before they are accepted (ADR 0059): the type by the first bytes, the file ending where its own
 * structure says the image ends (nothing hidden after it, so no polyglot), the size in pixels read
 * from the header before anything is decoded (no decompression bomb), then the whole image decoded
 * and re-encoded with `sharp`, which drops its metadata (EXIF, GPS, comments, private chunks).
 * SVG is not an image here: it is a document (scripts, links, styles) and is refused.
 */

/** The raster types accepted. */
export type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** Names of the types, for messages. */
const NAMES: Record<ImageType, string> = {
  "image/png": "PNG",
  "image/jpeg": "JPEG",
  "image/gif": "GIF",
  "image/webp": "WebP",
};

/** sharp's format names. */
const FORMATS: Record<ImageType, string> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/** An image that passed every check, re-encoded. */
export interface CheckedImage {
  type: ImageType;
  /** The re-encoded image (without the original's metadata). */
  bytes: Buffer;
  width: number;
  height: number;
}

/** Why an image was refused; `message` is written for the person who uploaded it. */
export class ImageRefusedError extends Error {}

/** Sniffs PNG, JPEG, GIF or WebP by its first bytes; undefined for anything else. */
export function sniffImageType(bytes: Buffer): ImageType | undefined {
  if (
    bytes.length >= 8 &&
    bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  )
    return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.length >= 6 && /^GIF8[79]a$/.test(bytes.subarray(0, 6).toString("latin1"))) return "image/gif";
  if (
    bytes.length >= 12 &&
    bytes.subarray(0, 4).toString("latin1") === "RIFF" &&
    bytes.subarray(8, 12).toString("latin1") === "WEBP"
  )
    return "image/webp";
  return undefined;
}

/** "PNG, JPEG or WebP". */
export function imageTypeNames(types: readonly ImageType[]): string {
  const names = types.map((t) => NAMES[t]);
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : (names[0] ?? "");
}

/**
 * Where the image of `type` in `bytes` ends by its own structure (PNG chunks to IEND, JPEG
 * segments and scans to EOI, GIF blocks to the trailer, WebP's RIFF size); undefined when the
 * structure breaks off before its end.
 */
export function imageEnd(bytes: Buffer, type: ImageType): number | undefined {
  switch (type) {
    case "image/png":
      return pngEnd(bytes);
    case "image/jpeg":
      return jpegEnd(bytes);
    case "image/gif":
      return gifEnd(bytes);
    case "image/webp": {
      if (bytes.length < 12) return undefined;
      const size = bytes.readUInt32LE(4);
      const end = 8 + size + (size % 2);
      return end <= bytes.length ? end : undefined;
    }
  }
}

function pngEnd(bytes: Buffer): number | undefined {
  for (let off = 8; off + 12 <= bytes.length; ) {
    const next = off + 12 + bytes.readUInt32BE(off);
    if (next > bytes.length) return undefined;
    if (bytes.toString("latin1", off + 4, off + 8) === "IEND") return next;
    off = next;
  }
  return undefined;
}

function jpegEnd(bytes: Buffer): number | undefined {
  let off = 2;
  while (off + 1 < bytes.length) {
    if (bytes[off] !== 0xff) return undefined;
    while (bytes[off + 1] === 0xff) off++; // fill bytes
    const marker = bytes[off + 1]!;
    if (marker === 0xd9) return off + 2;
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      off += 2;
      continue;
    }
    if (off + 4 > bytes.length) return undefined;
    const next = off + 2 + bytes.readUInt16BE(off + 2);
    if (next > bytes.length) return undefined;
    off = next;
    if (marker === 0xda) {
      // Entropy-coded data runs to the next marker (0xFF then neither 0 nor a restart marker).
      while (off + 1 < bytes.length) {
        const b = bytes[off + 1]!;
        if (bytes[off] === 0xff && b !== 0 && !(b >= 0xd0 && b <= 0xd7)) break;
        off++;
      }
    }
  }
  return undefined;
}

function gifEnd(bytes: Buffer): number | undefined {
  if (bytes.length < 13) return undefined;
  const colorTable = (packed: number) => (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);
  let off = 13 + colorTable(bytes[10]!);
  const skipSubBlocks = () => {
    for (;;) {
      if (off >= bytes.length) return false;
      const n = bytes[off]!;
      off += 1 + n;
      if (n === 0) return true;
    }
  };
  while (off < bytes.length) {
    const block = bytes[off]!;
    if (block === 0x3b) return off + 1;
    if (block === 0x21) {
      off += 2;
      if (!skipSubBlocks()) return undefined;
    } else if (block === 0x2c) {
      if (off + 10 > bytes.length) return undefined;
      off += 10 + colorTable(bytes[off + 9]!) + 1; // descriptor, local colours, LZW code size
      if (!skipSubBlocks()) return undefined;
    } else return undefined;
  }
  return undefined;
}

/**
 * Checks `bytes` as an image of one of `allowed` and re-encodes it (`what` names it in messages:
 * "The logo"). Throws ImageRefusedError: not one of the types (SVG included), data after the
 * image's end, a structure or pixels that do not decode, more than `maxPixels` pixels (all
 * frames together), or a re-encoded image over `maxBytes`.
 */
export async function checkImage(
  bytes: Buffer,
  options: { what: string; allowed: readonly ImageType[]; maxPixels: number; maxBytes: number },
): Promise<CheckedImage> {
  const { what, allowed, maxPixels, maxBytes } = options;
  const type = sniffImageType(bytes);
  if (!type || !allowed.includes(type))
    throw new ImageRefusedError(`Upload a ${imageTypeNames(allowed)} image.`);
  const name = NAMES[type];
  const damaged = () =>
    new ImageRefusedError(`${what} is not a valid ${name} image: it could not be decoded.`);
  const end = imageEnd(bytes, type);
  if (end === undefined) throw damaged();
  if (end < bytes.length) {
    throw new ImageRefusedError(
      `${what} has ${bytes.length - end} bytes of other data after the end of its ${name} image: upload the image alone.`,
    );
  }
  const { default: sharp } = await import("sharp");
  const animated = type === "image/gif" || type === "image/webp";
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>;
  try {
    meta = await sharp(bytes, { animated, limitInputPixels: false }).metadata();
  } catch {
    throw damaged();
  }
  if (meta.format !== FORMATS[type] || !meta.width || !meta.height) throw damaged();
  // Loaded with every frame (animated), `height` is that of all frames stacked.
  const frames = animated ? (meta.pages ?? 1) : 1;
  const height = meta.pageHeight ?? Math.round(meta.height / frames);
  if (meta.width * height * frames > maxPixels) {
    throw new ImageRefusedError(
      `${what} is ${meta.width}×${height} pixels${frames > 1 ? ` in ${frames} frames` : ""}: at most ${maxPixels.toLocaleString("en")} pixels are accepted.`,
    );
  }
  let output: Buffer;
  try {
    const image = sharp(bytes, { animated, limitInputPixels: maxPixels, failOn: "warning" }).rotate();
    output = await (type === "image/png"
      ? image.png({ compressionLevel: 9 })
      : type === "image/jpeg"
        ? image.jpeg({ quality: 90, mozjpeg: true })
        : type === "image/gif"
          ? image.gif()
          : image.webp({ quality: 90 })
    ).toBuffer();
  } catch {
    throw damaged();
  }
  if (output.length > maxBytes) {
    throw new ImageRefusedError(
      `${what} is larger than ${Math.floor(maxBytes / 1024)} KB once re-encoded: upload a smaller image.`,
    );
  }
  return { type, bytes: output, width: meta.width, height };
}
