// The compiled server: src/main.ts bundled by esbuild into dist/ferry.mjs (npm packages stay
// external but typebox and Kysely), with the template render worker beside it as dist/render-worker.cjs
// and the PDF worker as dist/pdf-worker.cjs. Built on the first
// start after a clone and again whenever a source file is newer than the bundle, so `ferry` always
// runs the sources as they are without a type-stripping loader in the process (ADR 0030).
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Dependencies bundled into dist/ferry.mjs rather than imported from node_modules at run time. */
const BUNDLED_PACKAGES = ["typebox", "kysely"];

/** The pages' client scripts (src/web/client/NAME.ts), built to dist/static/NAME.js. */
const CLIENT_SCRIPTS = ["recipient", "dashboard", "esign"];

/**
 * How the pages' client scripts are bundled: ES2020, minified, no comments. src/web/assets.ts builds
 * them with the same options when the server runs from its sources (a test compares the bytes).
 */
const CLIENT_SCRIPT_OPTIONS = {
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "none",
};

/** Newest modification time of the server's sources and the pages' scripts (tests do not count). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".test.ts")) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/** Newer than every source and than the install of every bundled package (an upgrade rebuilds). */
function isFresh(bundle, root) {
  try {
    const installed = BUNDLED_PACKAGES.map(
      (name) => statSync(join(root, "node_modules", name, "package.json")).mtimeMs,
    );
    for (const name of CLIENT_SCRIPTS) statSync(join(root, "dist", "static", `${name}.js`));
    return statSync(bundle).mtimeMs >= Math.max(newestSource(join(root, "src")), ...installed);
  } catch {
    return false;
  }
}

/** Writes `text` to `path` through a temporary file, so concurrent starts never read half a file. */
function writeAtomically(path, text) {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

/** Chunks of earlier builds, once no start can still be loading them (an hour old). */
function removeOldChunks(dir, current) {
  const cutoff = Date.now() - 3600_000;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (!current.has(path) && statSync(path).mtimeMs < cutoff) rmSync(path, { force: true });
  }
}

/**
 * `text` with every non-ASCII character written as a \u escape. esbuild escapes them in strings,
 * templates and regular expressions but keeps the comments it preserves as they are; one such
 * character makes V8 hold the whole source as a two-byte string (twice the bundle's size, for the
 * life of the process), all-ASCII text is held in one byte per character.
 */
function asciiOnly(text) {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Builds `root`/dist/ when it is missing or stale; returns the bundle's path. */
export async function compiledServer(root = repository) {
  const srcDir = join(root, "src");
  const distDir = join(root, "dist");
  const bundle = join(distDir, "ferry.mjs");
  if (isFresh(bundle, root)) return bundle;
  const { build, stop } = await import("esbuild");
  const common = { bundle: true, platform: "node", target: "node20", write: false, logLevel: "warning" };
  const [server, renderWorker, pdfWorker, clientScripts] = await Promise.all([
    build({
      ...common,
      entryPoints: { ferry: join(srcDir, "main.ts") },
      outdir: distDir,
      format: "esm",
      // Modules imported on demand (the S3 blob store and its SDK) stay out of the start path.
      splitting: true,
      chunkNames: "chunks/[name]-[hash]",
      outExtension: { ".js": ".mjs" },
      // npm packages stay external, except the ES module packages of many files that every start
      // loads: typebox and Kysely are 640 modules, each resolved, read and linked by node's loader
      // (ADR 0040, last addendum).
      external: Object.keys(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).dependencies).filter(
        (name) => !BUNDLED_PACKAGES.includes(name),
      ),
      jsx: "automatic",
      jsxImportSource: "preact",
    }),
    // The render worker runs untrusted templates in its own thread: one self-contained script.
    build({
      ...common,
      entryPoints: [join(srcDir, "features/templates/render/render-worker.ts")],
      format: "cjs",
    }),
    // The PDF engine's worker parses, seals and verifies documents off the event loop (ADR 0060).
    build({
      ...common,
      entryPoints: [join(srcDir, "pdf/pdf-worker.ts")],
      format: "cjs",
    }),
    // The pages' scripts, served from dist/static/: a start never runs esbuild (src/web/assets.ts
    // builds them the same way when the server runs from its sources).
    build({
      ...CLIENT_SCRIPT_OPTIONS,
      entryPoints: CLIENT_SCRIPTS.map((name) => join(srcDir, "web", "client", `${name}.ts`)),
      outdir: join(distDir, "static"),
      write: false,
      logLevel: "warning",
    }),
  ]).finally(() =>
    // esbuild's service process would otherwise stay beside the server it has just built.
    stop(),
  );
  mkdirSync(join(distDir, "chunks"), { recursive: true });
  mkdirSync(join(distDir, "static"), { recursive: true });
  for (const file of clientScripts.outputFiles) writeAtomically(file.path, file.contents);
  writeAtomically(join(distDir, "render-worker.cjs"), asciiOnly(renderWorker.outputFiles[0].text));
  writeAtomically(join(distDir, "pdf-worker.cjs"), asciiOnly(pdfWorker.outputFiles[0].text));
  // Chunks first (their names carry a content hash), the entry last: a start never imports a chunk
  // that is not there yet. Chunks of earlier builds stay for starts that still run those builds.
  const entry = server.outputFiles.find((f) => f.path === bundle);
  for (const file of server.outputFiles) if (file !== entry) writeAtomically(file.path, asciiOnly(file.text));
  writeAtomically(bundle, asciiOnly(entry.text));
  removeOldChunks(join(distDir, "chunks"), new Set(server.outputFiles.map((f) => f.path)));
  return bundle;
}
