/**
 * The signing page's third-party files, served by Ferry from node_modules (never from a CDN): the
 * pdf.js worker, its CMaps, standard fonts, ICC profiles and WebAssembly decoders (`pdfjs-dist`,
 * legacy build, which runs on the phones recipients have rather than only the newest browsers),
 * and the typed-signature font (Dancing Script, SIL Open Font License, `@fontsource/dancing-script`).
 * Each file is read on its first request and kept in memory with its gzip and ETag; nothing is
 * read at start.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

const gzipAsync = promisify(gzip);

const require = createRequire(import.meta.url);
const pdfjsRoot = dirname(require.resolve("pdfjs-dist/package.json"));
const fontRoot = dirname(require.resolve("@fontsource/dancing-script/package.json"));
const pdfjsVersion: string = JSON.parse(readFileSync(join(pdfjsRoot, "package.json"), "utf8")).version;
const fontVersion: string = JSON.parse(readFileSync(join(fontRoot, "package.json"), "utf8")).version;

/**
 * The URLs the signing page gives pdf.js and the signature font loader. The worker and font URLs
 * carry the package version (`?v=`), so they may be cached for a year and an upgrade changes them;
 * pdf.js appends file names to the directory URLs itself (they end in `/`).
 */
export const esignAssetUrls = {
  worker: `/static/pdf.worker.mjs?v=${pdfjsVersion}`,
  cMaps: "/static/pdfjs/cmaps/",
  standardFonts: "/static/pdfjs/standard_fonts/",
  wasm: "/static/pdfjs/wasm/",
  iccs: "/static/pdfjs/iccs/",
  /** The signature font, Latin and Latin Extended halves, each with the characters it covers. */
  signatureFonts: [
    {
      url: `/static/signature.woff2?v=${fontVersion}`,
      unicodeRange:
        "U+0000-00FF, U+0131, U+0152-0153, U+02BB-02BC, U+02C6, U+02DA, U+02DC, U+0304, U+0308, U+0329, U+2000-206F, U+20AC, U+2122, U+2191, U+2193, U+2212, U+2215, U+FEFF, U+FFFD",
    },
    {
      url: `/static/signature-ext.woff2?v=${fontVersion}`,
      unicodeRange:
        "U+0100-02BA, U+02BD-02C5, U+02C7-02CC, U+02CE-02D7, U+02DD-02FF, U+0304, U+0308, U+0329, U+1D00-1DBF, U+1E00-1E9F, U+1EF2-1EFF, U+2020, U+20A0-20AB, U+20AD-20C0, U+2113, U+2C60-2C7F, U+A720-A7FF",
    },
  ],
  /** The signing page's own script and stylesheet (built from src/web, see assets.ts). */
  script: "/static/esign.js",
  stylesheet: "/static/esign.css",
} as const;

/** The paths (no query) of the signature font files, for the signing page's `font-src`. */
export const SIGNATURE_FONT_PATHS = esignAssetUrls.signatureFonts.map((f) => f.url.split("?")[0]!);

/** One third-party file as served: body, gzip when it saves space, type, ETag. */
export interface VendorAsset {
  body: Buffer;
  gzip: Buffer | undefined;
  contentType: string;
  etag: string;
  cacheControl: string;
}

/** pdf.js data directories by URL prefix, with the file names each may serve and their types. */
const DIRECTORIES: { prefix: string; dir: string; types: Record<string, string> }[] = [
  {
    prefix: "/static/pdfjs/cmaps/",
    dir: join(pdfjsRoot, "cmaps"),
    types: { ".bcmap": "application/octet-stream" },
  },
  {
    prefix: "/static/pdfjs/standard_fonts/",
    dir: join(pdfjsRoot, "standard_fonts"),
    types: { ".pfb": "application/x-font-type1", ".ttf": "font/ttf" },
  },
  {
    prefix: "/static/pdfjs/wasm/",
    dir: join(pdfjsRoot, "wasm"),
    // The decoders and their JavaScript fallbacks; the scripting engine (quickjs) is never used.
    types: { ".wasm": "application/wasm", ".js": "text/javascript; charset=utf-8" },
  },
  {
    prefix: "/static/pdfjs/iccs/",
    dir: join(pdfjsRoot, "iccs"),
    types: { ".icc": "application/vnd.iccprofile" },
  },
];

/** Single files by URL path. */
const FILES: Record<string, { path: string; contentType: string }> = {
  "/static/pdf.worker.mjs": {
    path: join(pdfjsRoot, "legacy/build/pdf.worker.min.mjs"),
    contentType: "text/javascript; charset=utf-8",
  },
  "/static/signature.woff2": {
    path: join(fontRoot, "files/dancing-script-latin-400-normal.woff2"),
    contentType: "font/woff2",
  },
  "/static/signature-ext.woff2": {
    path: join(fontRoot, "files/dancing-script-latin-ext-400-normal.woff2"),
    contentType: "font/woff2",
  },
};

/** Extensions of files that are already compressed (gzip would only cost time). */
const COMPRESSED = new Set([".bcmap", ".woff2"]);

function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? "" : name.slice(dot);
}

/** Cache-Control of the files the page names with their version: a year. */
const VERSIONED_CACHE = "public, max-age=31536000, immutable";

/**
 * Cache-Control of the pdf.js data files, which pdf.js asks for by name without a version: a week,
 * then revalidated by ETag (the same names may hold other bytes after an upgrade).
 */
const DATA_CACHE = "public, max-age=604800";

interface IndexEntry {
  path: string;
  contentType: string;
  cacheControl: string;
}

/** URL path → file on disk, type and caching, for every file this module serves (listed once, lazily). */
let index: Map<string, IndexEntry> | undefined;

function fileIndex(): Map<string, IndexEntry> {
  if (index) return index;
  const built = new Map<string, IndexEntry>();
  for (const [url, file] of Object.entries(FILES)) built.set(url, { ...file, cacheControl: VERSIONED_CACHE });
  for (const { prefix, dir, types } of DIRECTORIES) {
    for (const name of readdirSync(dir)) {
      const type = types[extensionOf(name)];
      if (type && !name.startsWith("quickjs"))
        built.set(`${prefix}${name}`, { path: join(dir, name), contentType: type, cacheControl: DATA_CACHE });
    }
  }
  index = built;
  return built;
}

const loaded = new Map<string, Promise<VendorAsset>>();

async function load(entry: IndexEntry): Promise<VendorAsset> {
  const body = await readFile(entry.path);
  let gzip: Buffer | undefined;
  if (!COMPRESSED.has(extensionOf(entry.path))) {
    // On the thread pool: the worker (1.3 MB) takes a noticeable time to compress at level 9.
    const packed = await gzipAsync(body, { level: 9 });
    // Kept only when it saves at least a tenth.
    if (packed.length < body.length * 0.9) gzip = packed;
  }
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, gzip, contentType: entry.contentType, etag, cacheControl: entry.cacheControl };
}

/**
 * The third-party file at URL path `path` (no query string), or undefined when Ferry serves no such
 * file. Only names listed from the package directories are served: a path is never joined onto
 * the file system. The first request reads and compresses the file; later ones share the result.
 */
export function vendorAsset(path: string): Promise<VendorAsset> | undefined {
  const cached = loaded.get(path);
  if (cached) return cached;
  const entry = fileIndex().get(path);
  if (!entry) return undefined;
  const pending = load(entry);
  loaded.set(path, pending);
  // A failed read is tried again by the next request rather than remembered.
  pending.catch(() => loaded.delete(path));
  return pending;
}
