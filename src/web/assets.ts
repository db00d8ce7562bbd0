import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { assetUrls } from "./layout.js";

/** One first-party static asset, kept in memory. */
interface WebAsset {
  body: Buffer;
  /** gzip of body, sent when the client accepts it. */
  gzip: Buffer;
  contentType: string;
  etag: string;
}

// Next to this module when it runs from src/; the compiled server (dist/) reads them from src/web.
const webDir = existsSync(resolve(import.meta.dirname, "client"))
  ? import.meta.dirname
  : resolve(import.meta.dirname, "../src/web");

/** Paths of the client entry and the default stylesheet (sources, in the repository). */
const assetSources = {
  clientEntry: resolve(webDir, "client/recipient.ts"),
  dashboardEntry: resolve(webDir, "client/dashboard.ts"),
  dashboardStylesheet: resolve(webDir, "static/dashboard.css"),
  stylesheet: resolve(webDir, "static/recipient.css"),
  favicon: resolve(webDir, "static/favicon.svg"),
};

function toAsset(body: Buffer, contentType: string): WebAsset {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, gzip: gzipSync(body, { level: 9 }), contentType, etag };
}

/**
 * Bundles the client script with esbuild (ES2020, minified, no source in pages) and reads the default
 * stylesheet; returns them by URL path. Runs once at server start, in memory: nothing is written, so
 * concurrent servers never race on a build directory. `scripts/build-web.ts` writes the same output to
 * src/web/static/build/ for inspection.
 */
export async function buildWebAssets(): Promise<Map<string, WebAsset>> {
  const bundle = (entry: string) =>
    build({
      entryPoints: [entry],
      bundle: true,
      format: "esm",
      target: "es2020",
      minify: true,
      write: false,
      legalComments: "none",
      logLevel: "silent",
    });
  const dashboard = (await bundle(assetSources.dashboardEntry)).outputFiles[0];
  if (!dashboard) throw new Error("esbuild produced no output for the dashboard client script");
  const result = await build({
    entryPoints: [assetSources.clientEntry],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    write: false,
    legalComments: "none",
    logLevel: "silent",
  });
  const js = result.outputFiles[0];
  if (!js) throw new Error("esbuild produced no output for the recipient client script");
  const assets = new Map<string, WebAsset>();
  assets.set(assetUrls.js, toAsset(Buffer.from(js.contents), "text/javascript; charset=utf-8"));
  assets.set(assetUrls.css, toAsset(readFileSync(assetSources.stylesheet), "text/css; charset=utf-8"));
  assets.set(assetUrls.icon, toAsset(readFileSync(assetSources.favicon), "image/svg+xml"));
  // The dashboard's own script (copy buttons) and stylesheet, under the same CSP.
  assets.set(
    "/static/dashboard.js",
    toAsset(Buffer.from(dashboard.contents), "text/javascript; charset=utf-8"),
  );
  assets.set(
    "/static/dashboard.css",
    toAsset(readFileSync(assetSources.dashboardStylesheet), "text/css; charset=utf-8"),
  );
  return assets;
}
