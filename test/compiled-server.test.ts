/**
 * The compiled server: `ferry` runs dist/ferry.mjs, built from src/ on the first start and rebuilt
 * whenever a server source is newer than the bundle (never when only tests change).
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain JavaScript module of the command-line entry, without type declarations.
import { compiledServer } from "../bin/compiled-server.mjs";
import { buildWebAssets } from "../src/web/assets.js";
import { freePort, runFerry, spawnFerry, waitForHttp } from "./helpers/process.js";

const repo = resolve(import.meta.dirname, "..");
const build = compiledServer as (root: string) => Promise<string>;

describe("the compiled server", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "ferry-build-"));
    cpSync(join(repo, "src"), join(root, "src"), { recursive: true });
    cpSync(join(repo, "package.json"), join(root, "package.json"));
    // The packages linked one by one, and typebox's package.json copied: the test may date it.
    mkdirSync(join(root, "node_modules"));
    for (const name of readdirSync(join(repo, "node_modules"))) {
      if (name !== "typebox") symlinkSync(join(repo, "node_modules", name), join(root, "node_modules", name));
    }
    mkdirSync(join(root, "node_modules", "typebox"));
    for (const name of readdirSync(join(repo, "node_modules", "typebox"))) {
      const from = join(repo, "node_modules", "typebox", name);
      const to = join(root, "node_modules", "typebox", name);
      if (name === "package.json") cpSync(from, to);
      else symlinkSync(from, to);
    }
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is built on the first start, with the render worker beside it", async () => {
    const bundle = await build(root);
    expect(bundle).toBe(join(root, "dist", "ferry.mjs"));
    expect(statSync(bundle).size).toBeGreaterThan(100_000);
    expect(statSync(join(root, "dist", "render-worker.cjs")).size).toBeGreaterThan(10_000);
  });

  it("carries the pages' scripts, the same bytes the sources build", async () => {
    await build(root);
    const fromSources = await buildWebAssets();
    for (const name of ["recipient", "dashboard"]) {
      const built = readFileSync(join(root, "dist", "static", `${name}.js`));
      expect(built.length).toBeGreaterThan(500);
      expect(built.equals(fromSources.get(`/static/${name}.js`)!.body)).toBe(true);
    }
  });

  it("is rebuilt when a page script is missing", async () => {
    rmSync(join(root, "dist", "static", "dashboard.js"));
    await build(root);
    expect(statSync(join(root, "dist", "static", "dashboard.js")).size).toBeGreaterThan(500);
  });

  it("is plain ASCII, so V8 holds its source in one byte per character", async () => {
    const bundle = await build(root);
    for (const path of [bundle, join(root, "dist", "render-worker.cjs")]) {
      expect(readFileSync(path, "latin1")).not.toMatch(/[\u0080-\uffff]/);
    }
  });

  it("keeps modules loaded on demand out of the start path (the S3 SDK)", () => {
    const entry = readFileSync(join(root, "dist", "ferry.mjs"), "utf8");
    expect(entry).not.toContain("@aws-sdk/client-s3");
    const chunks = readdirSync(join(root, "dist", "chunks"));
    const s3 = chunks.find((name) => name.startsWith("s3-blob-store-"));
    expect(s3).toBeDefined();
    expect(readFileSync(join(root, "dist", "chunks", s3!), "utf8")).toContain("@aws-sdk/client-s3");
  });

  it("carries typebox and Kysely in the bundle and imports the other packages", () => {
    // The entry and the chunks it shares with modules loaded on demand (a vendor's provider).
    const chunks = readdirSync(join(root, "dist", "chunks")).filter((f) => f.endsWith(".mjs"));
    const bundle = [join(root, "dist", "ferry.mjs"), ...chunks.map((f) => join(root, "dist", "chunks", f))]
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    expect(bundle).not.toMatch(/from "(typebox|kysely)(\/[^"]*)?"/);
    expect(bundle).toContain("// node_modules/typebox/");
    expect(bundle).toContain("// node_modules/kysely/");
    expect(bundle).toMatch(/from "fastify"/);
    expect(bundle).not.toContain("// node_modules/fastify/");
  });

  it("is rebuilt when a bundled package is installed anew", async () => {
    const bundle = join(root, "dist", "ferry.mjs");
    const built = statSync(bundle).mtimeMs;
    const later = new Date(built + 60_000);
    utimesSync(join(root, "node_modules", "typebox", "package.json"), later, later);
    await build(root);
    expect(statSync(bundle).mtimeMs).not.toBe(built);
  });

  it("is kept while no server source changed, even when a test did", async () => {
    const bundle = join(root, "dist", "ferry.mjs");
    const built = new Date(Date.now() + 60_000);
    utimesSync(bundle, built, built);
    const testFile = join(root, "src", "features", "requests", "requests.test.ts");
    const later = new Date(Date.now() + 120_000);
    utimesSync(testFile, later, later);
    await build(root);
    // Unchanged (a rebuild would stamp it with the current time, a minute earlier); file systems
    // keep sub-millisecond times, so compare to the millisecond.
    expect(Math.abs(statSync(bundle).mtimeMs - built.getTime())).toBeLessThan(1);
  });

  it("is rebuilt when a server source is newer than the bundle", async () => {
    const bundle = join(root, "dist", "ferry.mjs");
    const built = statSync(bundle).mtimeMs;
    const later = new Date(built + 60_000);
    utimesSync(join(root, "src", "shared", "ids.ts"), later, later);
    await build(root);
    expect(statSync(bundle).mtimeMs).not.toBe(built);
  });

  it("serves the pages' scripts it carries, with no process of its own beside it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ferry-serve-"));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawnFerry(["serve"], { FERRY_DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" });
    try {
      await waitForHttp(`${base}/readyz`, server);
      const script = await fetch(`${base}/static/recipient.js`);
      expect(script.status).toBe(200);
      const served = Buffer.from(await script.arrayBuffer());
      expect(served.equals(readFileSync(join(repo, "dist", "static", "recipient.js")))).toBe(true);
      // The signing step's script, read from dist/ on its first request, and pdf.js's worker from
      // node_modules beside the bundle.
      const esign = await fetch(`${base}/static/esign.js`);
      expect(
        Buffer.from(await esign.arrayBuffer()).equals(readFileSync(join(repo, "dist", "static", "esign.js"))),
      ).toBe(true);
      const worker = await fetch(`${base}/static/pdf.worker.mjs`);
      expect([worker.status, worker.headers.get("content-type")]).toEqual([
        200,
        "text/javascript; charset=utf-8",
      ]);
      // No esbuild service (or any other child) stays beside a compiled server.
      const pid = server.child.pid!;
      const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
        readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean),
      );
      expect(children).toEqual([]);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("runs the command line from the bundle", async () => {
    const result = await runFerry(["help"], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: ferry <command>");
    expect(statSync(join(repo, "dist", "ferry.mjs")).isFile()).toBe(true);
  });
});
