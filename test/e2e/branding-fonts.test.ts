/**
 * An account's uploaded font in Debian's Chromium: the account's stylesheet names it with
 * `@font-face { src: url(fonts/<name>) }`, the pull page and the container session page load it
 * from Ferry's origin under their strict CSP (no violation), and the page text uses it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiCall, apiCaller, expectJson } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../helpers/containers.js";
import { freePort } from "../helpers/process.js";

let t: TestApp;
let owner: TestAccount;
let call: ApiCall;
let browser: Browser;
let base: string;

/** A TrueType font shipped with playwright-core (a dependency), so the test needs no binary file. */
function trueTypeFont(): Buffer {
  const root = dirname(createRequire(import.meta.url).resolve("playwright-core/package.json"));
  const found = readdirSync(join(root, "lib"), { recursive: true }).find((p) => String(p).endsWith(".ttf"));
  if (!found) throw new Error("no .ttf file in playwright-core");
  return readFileSync(join(root, "lib", String(found)));
}

/** Wraps a TrueType font into WOFF 1.0 with uncompressed tables (the format allows it). */
function toWoff(ttf: Buffer): Buffer {
  const numTables = ttf.readUInt16BE(4);
  const align = (n: number) => (n + 3) & ~3;
  const tables = Array.from({ length: numTables }, (_, i) => {
    const at = 12 + i * 16;
    return {
      tag: ttf.subarray(at, at + 4),
      checksum: ttf.readUInt32BE(at + 4),
      data: ttf.subarray(ttf.readUInt32BE(at + 8), ttf.readUInt32BE(at + 8) + ttf.readUInt32BE(at + 12)),
    };
  });
  const header = Buffer.alloc(44 + 20 * numTables);
  let offset = header.length;
  let sfntSize = 12 + 16 * numTables;
  const bodies: Buffer[] = [];
  tables.forEach((table, i) => {
    const at = 44 + i * 20;
    table.tag.copy(header, at);
    header.writeUInt32BE(offset, at + 4);
    header.writeUInt32BE(table.data.length, at + 8);
    header.writeUInt32BE(table.data.length, at + 12);
    header.writeUInt32BE(table.checksum, at + 16);
    const padded = Buffer.alloc(align(table.data.length));
    table.data.copy(padded);
    bodies.push(padded);
    offset += padded.length;
    sfntSize += align(table.data.length);
  });
  header.write("wOFF", 0, "latin1");
  header.writeUInt32BE(ttf.readUInt32BE(0), 4);
  header.writeUInt32BE(offset, 8);
  header.writeUInt16BE(numTables, 12);
  header.writeUInt32BE(sfntSize, 16);
  header.writeUInt16BE(1, 20);
  return Buffer.concat([header, ...bodies]);
}

const FONT = toWoff(trueTypeFont());
const CSS = `@font-face { font-family: "Brand Face"; src: url(fonts/brand.woff) format("woff"); }
body { font-family: "Brand Face", system-ui, sans-serif; }`;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  call = apiCaller(t, owner);
  expectJson(await call("PUT", "/v1/branding/fonts/brand.woff", { file: FONT.toString("base64") }), 201);
  expectJson(await call("PUT", "/v1/branding/", { css: CSS }), 200);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Opens `url`, waits for its fonts, and returns what the page loaded and any CSP refusal. */
async function fontsOf(url: string, name: string) {
  const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
  const page: Page = await context.newPage();
  const errors: string[] = [];
  const fontResponses: { url: string; status: number; type: string | undefined }[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  page.on("response", (r) => {
    if (r.request().resourceType() === "font")
      fontResponses.push({ url: r.url(), status: r.status(), type: r.headers()["content-type"] });
  });
  await page.goto(url);
  await page.getByRole("heading").first().waitFor();
  const loaded = await page.evaluate(async () => {
    await document.fonts.ready;
    return {
      faces: [...document.fonts].map((f) => ({ family: f.family, status: f.status })),
      usable: document.fonts.check('16px "Brand Face"'),
      family: getComputedStyle(document.body).fontFamily,
    };
  });
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, name);
  await context.close();
  return { loaded, errors, fontResponses };
}

describe("an account's uploaded font", () => {
  it("is loaded from Ferry's origin and used by the pull page, with no CSP violation", async () => {
    const identifier = expectJson(await call("POST", "/v1/request/", { type: "pull" }), 201).identifier;
    const { loaded, errors, fontResponses } = await fontsOf(`${base}/r/${identifier}/`, "font-pull");
    expect(fontResponses).toEqual([
      { url: `${base}/r/${identifier}/fonts/brand.woff`, status: 200, type: "font/woff" },
    ]);
    expect(loaded.faces).toEqual([{ family: "Brand Face", status: "loaded" }]);
    expect(loaded.usable).toBe(true);
    expect(loaded.family).toMatch(/^"Brand Face"/);
    expect(errors).toEqual([]);
  });

  it("is loaded and used by the container session page, with no CSP violation", async () => {
    const c = await buildContainer(call);
    expectJson(
      await call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Your ID" }),
      201,
    );
    const r = await addRecipient(call, c.id, { first_name: "Kim" });
    const session = sessionOf(await sendContainer(call, c.id), r);
    const { loaded, errors, fontResponses } = await fontsOf(`${base}${session.base}`, "font-session");
    expect(fontResponses).toEqual([
      { url: `${base}${session.base}fonts/brand.woff`, status: 200, type: "font/woff" },
    ]);
    expect(loaded.faces).toEqual([{ family: "Brand Face", status: "loaded" }]);
    expect(loaded.usable).toBe(true);
    expect(errors).toEqual([]);
  });

  it("is refused when the stylesheet points at a data: URL", async () => {
    const data = `@font-face { font-family: "Inline Face"; src: url(data:font/woff;base64,${FONT.subarray(0, 300).toString("base64")}) format("woff"); }
body { font-family: "Inline Face", sans-serif; }`;
    expectJson(await call("PUT", "/v1/branding/", { css: data }), 200);
    try {
      const identifier = expectJson(await call("POST", "/v1/request/", { type: "pull" }), 201).identifier;
      const { loaded, errors } = await fontsOf(`${base}/r/${identifier}/`, "font-data-refused");
      expect(loaded.faces).toEqual([{ family: "Inline Face", status: "error" }]);
      expect(errors.some((e) => /font-src/.test(e))).toBe(true);
    } finally {
      expectJson(await call("PUT", "/v1/branding/", { css: CSS }), 200);
    }
  });
});
