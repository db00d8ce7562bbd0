// The compiled server: src/main.ts bundled by esbuild into dist/ferry.mjs (npm packages stay
// external), with the template render worker beside it as dist/render-worker.cjs. Built on the first
// start after a clone and again whenever a source file is newer than the bundle, so `ferry` always
// runs the sources as they are without a type-stripping loader in the process (ADR 0030).
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Newest modification time of the server's sources (tests and browser scripts do not count). */
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

function isFresh(bundle, srcDir) {
  try {
    return statSync(bundle).mtimeMs >= newestSource(srcDir);
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

/** Builds `root`/dist/ when it is missing or stale; returns the bundle's path. */
export async function compiledServer(root = repository) {
  const srcDir = join(root, "src");
  const distDir = join(root, "dist");
  const bundle = join(distDir, "ferry.mjs");
  if (isFresh(bundle, srcDir)) return bundle;
  const { build } = await import("esbuild");
  const common = { bundle: true, platform: "node", target: "node20", write: false, logLevel: "warning" };
  const [server, renderWorker] = await Promise.all([
    build({
      ...common,
      entryPoints: [join(srcDir, "main.ts")],
      format: "esm",
      packages: "external",
      jsx: "automatic",
      jsxImportSource: "preact",
    }),
    // The render worker runs untrusted templates in its own thread: one self-contained script.
    build({
      ...common,
      entryPoints: [join(srcDir, "features/templates/render/render-worker.ts")],
      format: "cjs",
    }),
  ]);
  mkdirSync(distDir, { recursive: true });
  writeAtomically(join(distDir, "render-worker.cjs"), renderWorker.outputFiles[0].text);
  writeAtomically(bundle, server.outputFiles[0].text);
  return bundle;
}
