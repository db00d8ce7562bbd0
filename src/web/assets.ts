import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { esignAssetUrls } from "./esign-assets.js";
import { assetUrls } from "./layout.js";

/** One first-party static asset, kept in memory. */
export interface WebAsset {
  body: Buffer;
  /** gzip of body, sent when the client accepts it. */
  gzip: Buffer;
  contentType: string;
  etag: string;
}

// Next to this module when it runs from src/; the compiled server (dist/) reads them from src/web.
const fromSources = existsSync(resolve(import.meta.dirname, "client"));
const webDir = fromSources ? import.meta.dirname : resolve(import.meta.dirname, "../src/web");

/** Paths of the client entry and the default stylesheet (sources, in the repository). */
const assetSources = {
  clientEntry: resolve(webDir, "client/recipient.ts"),
  dashboardEntry: resolve(webDir, "client/dashboard.ts"),
  dashboardStylesheet: resolve(webDir, "static/dashboard.css"),
  stylesheet: resolve(webDir, "static/recipient.css"),
  favicon: resolve(webDir, "static/favicon.svg"),
  esignEntry: resolve(webDir, "client/esign.ts"),
  esignStylesheet: resolve(webDir, "static/esign.css"),
};

function toAsset(body: Buffer, contentType: string): WebAsset {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, gzip: gzipSync(body, { level: 9 }), contentType, etag };
}

/** The pages' client scripts, minified: recipient.js and dashboard.js. */
interface ClientScripts {
  recipient: Buffer;
  dashboard: Buffer;
}

let builtFromSources: Promise<ClientScripts> | undefined;

/** One client entry bundled by esbuild with the options of bin/compiled-server.mjs. */
async function bundle(entry: string): Promise<Buffer> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    write: false,
    legalComments: "none",
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild produced no output for ${entry}`);
  return Buffer.from(output.contents);
}

/**
 * The client scripts. The compiled server reads them from dist/static/, where its build put them, so
 * a start never runs esbuild (whose service process would stay beside the server, about 17 MiB).
 * From the sources they are bundled once per process, with the options of bin/compiled-server.mjs.
 */
function clientScripts(): Promise<ClientScripts> {
  if (!fromSources) {
    const built = (name: string) => readFileSync(resolve(import.meta.dirname, "static", `${name}.js`));
    return Promise.resolve({ recipient: built("recipient"), dashboard: built("dashboard") });
  }
  builtFromSources ??= (async () => {
    const [recipient, dashboard] = await Promise.all([
      bundle(assetSources.clientEntry),
      bundle(assetSources.dashboardEntry),
    ]);
    return { recipient, dashboard };
  })();
  return builtFromSources;
}

/**
 * The first-party assets by URL path: the client scripts and the stylesheets, with their gzip and
 * ETag, kept in memory. `scripts/build-web.ts` writes the same output to src/web/static/build/ for
 * inspection.
 */
export async function buildWebAssets(): Promise<Map<string, WebAsset>> {
  const scripts = await clientScripts();
  const assets = new Map<string, WebAsset>();
  assets.set(assetUrls.js, toAsset(scripts.recipient, "text/javascript; charset=utf-8"));
  assets.set(assetUrls.css, toAsset(readFileSync(assetSources.stylesheet), "text/css; charset=utf-8"));
  assets.set(assetUrls.icon, toAsset(readFileSync(assetSources.favicon), "image/svg+xml"));
  // The dashboard's own script (copy buttons) and stylesheet, under the same CSP.
  assets.set("/static/dashboard.js", toAsset(scripts.dashboard, "text/javascript; charset=utf-8"));
  assets.set(
    "/static/dashboard.css",
    toAsset(readFileSync(assetSources.dashboardStylesheet), "text/css; charset=utf-8"),
  );
  // The signing step's stylesheet; its script (with pdf.js, about 0.5 MB) is built on first request.
  assets.set(
    esignAssetUrls.stylesheet,
    toAsset(readFileSync(assetSources.esignStylesheet), "text/css; charset=utf-8"),
  );
  return assets;
}

let esignBuilt: Promise<WebAsset> | undefined;

/**
 * The signing step's client script (`/static/esign.js`: the viewer, fields and signature pad, with
 * pdf.js), built on its first request rather than at start: most processes never serve a signing
 * page, and bundling pdf.js would add about a second to every start from the sources. The compiled
 * server reads it from dist/static/ like the others.
 */
export function esignScript(): Promise<WebAsset> {
  esignBuilt ??= (async () => {
    const body = fromSources
      ? await bundle(assetSources.esignEntry)
      : readFileSync(resolve(import.meta.dirname, "static", "esign.js"));
    return toAsset(body, "text/javascript; charset=utf-8");
  })();
  // A failed build is tried again by the next request.
  esignBuilt.catch(() => {
    esignBuilt = undefined;
  });
  return esignBuilt;
}
