/**
 * `node bin/run-ts.mjs scripts/build-web.ts`: writes the recipient pages' client bundle and
 * stylesheet (the same bytes the server builds in memory at start) to src/web/static/build/ for
 * inspection or for serving from a CDN. The directory is git-ignored.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { buildWebAssets } from "../src/web/assets.js";

const outDir = resolve(import.meta.dirname, "../src/web/static/build");
mkdirSync(outDir, { recursive: true });
for (const [url, asset] of await buildWebAssets()) {
  const file = resolve(outDir, basename(url));
  writeFileSync(file, asset.body);
  writeFileSync(`${file}.gz`, asset.gzip);
  console.log(`${file}  ${asset.body.length} bytes, ${asset.gzip.length} gzipped, etag ${asset.etag}`);
}
