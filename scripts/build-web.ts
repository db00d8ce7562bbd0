/**
 * `node bin/run-ts.mjs scripts/build-web.ts`: writes the recipient pages' client bundles (the
 * signing step's too) and stylesheets (the same bytes the server builds in memory at start) to src/web/static/build/ for
 * inspection or for serving from a CDN. The directory is git-ignored.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { buildWebAssets, esignScript } from "../src/web/assets.js";
import { esignAssetUrls } from "../src/web/esign-assets.js";

const outDir = resolve(import.meta.dirname, "../src/web/static/build");
mkdirSync(outDir, { recursive: true });
const assets = await buildWebAssets();
assets.set(esignAssetUrls.script, await esignScript());
for (const [url, asset] of assets) {
  const file = resolve(outDir, basename(url));
  writeFileSync(file, asset.body);
  writeFileSync(`${file}.gz`, asset.gzip);
  console.log(`${file}  ${asset.body.length} bytes, ${asset.gzip.length} gzipped, etag ${asset.etag}`);
}
