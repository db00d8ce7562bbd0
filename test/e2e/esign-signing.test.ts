/**
 * The signing step in Debian's Chromium: a test-only Fastify app serves Ferry's real static routes
 * (the signing script, pdf.js's worker and data files, the signature font) and one page rendering
 * the signing view, under the signing page's CSP, over a 3-page PDF made here with @libpdf/core.
 * The browser renders the pages, places the fields, adopts typed and drawn marks (mouse and touch),
 * finishes and declines; the forms post to the test app, which records what it received.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PDF, rgb } from "@libpdf/core";
import Fastify, { type FastifyInstance } from "fastify";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { h, type VNode } from "preact";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerBodyParsers } from "../../src/http/body-parsers.js";
import { type Locale, translator } from "../../src/shared/i18n/i18n.js";
import { esignAssetUrls } from "../../src/web/esign-assets.js";
import { type SigningField, type SigningValues, SigningView } from "../../src/web/esign-signing-view.js";
import { Layout, renderDocument } from "../../src/web/layout.js";
import { applySigningPageHeaders, pageAssets } from "../../src/web/security-headers.js";
import { webStaticRoutes } from "../../src/web/static.routes.js";
import { axeViolations, launchBrowser, SCREENSHOT_DIR, screenshot } from "../helpers/browser.js";
import { freePort } from "../helpers/process.js";

/** Letter pages, 612 × 792 points. */
const PAGE = { width: 612, height: 792 };

const FIELDS: SigningField[] = [
  {
    id: "name",
    type: "text",
    page: 1,
    x: 72,
    y: 160,
    width: 250,
    height: 24,
    required: true,
    label: "Full name",
  },
  {
    id: "agree",
    type: "checkbox",
    page: 1,
    x: 72,
    y: 210,
    width: 18,
    height: 18,
    required: true,
    label: "I agree",
  },
  { id: "dated", type: "date", page: 1, x: 360, y: 160, width: 160, height: 24, required: true, label: "" },
  { id: "sig", type: "signature", page: 3, x: 72, y: 560, width: 230, height: 56, required: true, label: "" },
  { id: "ini", type: "initials", page: 3, x: 400, y: 566, width: 90, height: 44, required: true, label: "" },
  {
    id: "notes",
    type: "text",
    page: 3,
    x: 72,
    y: 660,
    width: 320,
    height: 24,
    required: false,
    label: "Notes",
  },
];

/** A 3-page PDF with a heading, some lines and a labelled box under each field. */
async function makePdf(): Promise<Uint8Array> {
  const pdf = PDF.create();
  for (let n = 1; n <= 3; n += 1) {
    const page = pdf.addPage({ size: "letter" });
    page.drawText(`Service agreement, page ${n} of 3`, {
      x: 72,
      y: PAGE.height - 90,
      size: 22,
      color: rgb(0, 0, 0),
    });
    for (let line = 0; line < 8; line += 1) {
      page.drawText(`Clause ${n}.${line + 1}: the parties agree to the terms written on this line.`, {
        x: 72,
        y: PAGE.height - 260 - line * 22,
        size: 11,
        color: rgb(0.1, 0.1, 0.1),
      });
    }
    for (const f of FIELDS.filter((f) => f.page === n)) {
      // PDF user space grows upwards: the field's top-left corner (y down) is its bottom edge here.
      page.drawRectangle({
        x: f.x,
        y: PAGE.height - f.y - f.height,
        width: f.width,
        height: f.height,
        borderColor: rgb(0.2, 0.2, 0.6),
        borderWidth: 0.75,
      });
    }
  }
  return pdf.save();
}

interface Received {
  url: string;
  body: Record<string, string>;
}

let app: FastifyInstance;
let base: string;
let browser: Browser;
let pdf: Uint8Array;
const received: Received[] = [];

const CSRF = { name: "csrf_token", value: "csrf-test-token-1234567890" };

beforeAll(async () => {
  pdf = await makePdf();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  app = Fastify();
  await registerBodyParsers(app, 1_048_576);
  await app.register(webStaticRoutes as never);
  app.get<{ Querystring: { lang?: string; pdf?: string } }>("/s/test-token/sign", async (request, reply) => {
    const locale = (request.query.lang ?? "en") as Locale;
    const i18n = translator(locale);
    const view = h(SigningView, {
      headingLevel: 2,
      i18n,
      pdfUrl: request.query.pdf === "missing" ? "/s/test-token/missing.pdf" : "/s/test-token/document.pdf",
      fields: FIELDS,
      actionUrl: "/s/test-token/sign/finish",
      declineUrl: "/s/test-token/sign/decline",
      csrfField: CSRF,
      signerName: "Jane Doe",
    });
    applySigningPageHeaders(reply, false, pageAssets(request, "/s/test-token/", base));
    return reply.type("text/html; charset=utf-8").send(
      renderDocument(
        h(Layout, {
          title: "Sign",
          sandbox: false,
          brandName: "Ferry",
          i18n,
          // As on a session page: the page's own heading, then the step.
          children: [h("h1", null, "Service agreement"), view],
        }) as VNode,
      ),
    );
  });
  app.get("/s/test-token/document.pdf", async (_request, reply) =>
    reply.type("application/pdf").header("cache-control", "no-store").send(Buffer.from(pdf)),
  );
  for (const action of ["finish", "decline"]) {
    app.post(`/s/test-token/sign/${action}`, async (request, reply) => {
      received.push({ url: request.url, body: request.body as Record<string, string> });
      return reply
        .type("text/html; charset=utf-8")
        .send(`<!doctype html><title>ok</title><h1>${action} received</h1>`);
    });
  }
  await app.listen({ port, host: "127.0.0.1" });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A page that records CSP violations (events and console refusals) and script errors. */
async function openSigning(
  context: BrowserContext,
  query = "",
  ready = '.fy-signing-page[data-page="1"][data-rendered]',
): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (/Refused|Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.exposeFunction("reportViolation", (text: string) => problems.push(`violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { reportViolation: (t: string) => void }).reportViolation(
        `${e.violatedDirective} ${e.blockedURI}`,
      );
    });
  });
  await page.goto(`${base}/s/test-token/sign${query}`);
  await page.locator(ready).waitFor();
  return { page, problems };
}

/** Share of a rendered page's canvas pixels that are not white (0 for a blank page). */
async function inkOf(page: Page, number: number): Promise<number> {
  return page.evaluate((n) => {
    const canvas = document.querySelector<HTMLCanvasElement>(`.fy-signing-page[data-page="${n}"] canvas`)!;
    const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
    let dark = 0;
    for (let i = 0; i < data.length; i += 4)
      if (data[i]! < 200 || data[i + 1]! < 200 || data[i + 2]! < 200) dark += 1;
    return dark / (data.length / 4);
  }, number);
}

/** Each field's box relative to its page, in CSS pixels, and the page's CSS width. */
async function fieldBoxes(page: Page) {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>(".fy-signing-field")].map((el) => {
      const pageEl = el.closest<HTMLElement>(".fy-signing-page")!;
      const p = pageEl.getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return {
        page: Number(pageEl.dataset.page),
        pageWidth: p.width,
        left: r.left - p.left,
        top: r.top - p.top,
        width: r.width,
        height: r.height,
      };
    }),
  );
}

/** Draws a zigzag stroke with the mouse across the middle of the pad. */
async function drawWithMouse(page: Page) {
  const pad = await page.locator(".fy-signing-pad").boundingBox();
  if (!pad) throw new Error("no pad");
  const y = pad.y + pad.height / 2;
  await page.mouse.move(pad.x + pad.width * 0.15, y);
  await page.mouse.down();
  for (let i = 1; i <= 12; i += 1)
    await page.mouse.move(pad.x + pad.width * (0.15 + i * 0.055), y + (i % 2 ? -30 : 30), { steps: 3 });
  await page.mouse.up();
}

/** Draws a stroke with a finger (DevTools touch events, which Chromium turns into pointer events). */
async function drawWithTouch(page: Page) {
  const pad = await page.locator(".fy-signing-pad").boundingBox();
  if (!pad) throw new Error("no pad");
  const cdp = await page.context().newCDPSession(page);
  const at = (i: number) => ({
    x: pad.x + pad.width * (0.2 + i * 0.05),
    y: pad.y + pad.height / 2 + (i % 2 ? -20 : 20),
  });
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [at(0)] });
  for (let i = 1; i <= 10; i += 1)
    await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [at(i)] });
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
  await cdp.detach();
}

/** Saves what the screen shows (not the whole page: the bar is sticky, the dialog modal). */
async function screen(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
}

function lastValues(action: string): SigningValues {
  const last = received.filter((r) => r.url.endsWith(action)).at(-1);
  if (!last) throw new Error(`nothing posted to ${action}`);
  expect(last.body.csrf_token).toBe(CSRF.value);
  return JSON.parse(last.body.values ?? "null") as SigningValues;
}

/** The signature value of a posted field, asserted to be a PNG data URL of some size. */
function expectMark(value: unknown, method: "typed" | "drawn") {
  const mark = value as { method: string; image: string; text?: string };
  expect(mark.method).toBe(method);
  expect(mark.image).toMatch(/^data:image\/png;base64,/);
  const png = Buffer.from(mark.image.split(",")[1]!, "base64");
  expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
  expect(png.length).toBeGreaterThan(300);
  return mark;
}

function today(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
}

describe("the signing step on a desktop screen (1280 × 800)", () => {
  it("renders pages as they come into view, places the fields, and posts typed and drawn marks", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, problems } = await openSigning(context);
    await screenshot(page, "esign-desktop-open");

    // Page 1 is drawn; page 3 (two page heights below the fold) is not, until scrolled to.
    expect(await inkOf(page, 1)).toBeGreaterThan(0.002);
    expect(await page.locator('.fy-signing-page[data-page="3"][data-rendered]').count()).toBe(0);
    await page.locator('.fy-signing-page[data-page="3"]').scrollIntoViewIfNeeded();
    await page.locator('.fy-signing-page[data-page="3"][data-rendered]').waitFor();
    await page.locator('.fy-signing-page[data-page="2"][data-rendered]').waitFor();
    expect(await inkOf(page, 2)).toBeGreaterThan(0.002);
    expect(await inkOf(page, 3)).toBeGreaterThan(0.002);

    // Each field sits on its box: the page's CSS width over 612 points is the scale.
    const boxes = await fieldBoxes(page);
    const ordered = [...FIELDS].sort((a, b) => a.page - b.page || a.y - b.y || a.x - b.x);
    expect(boxes).toHaveLength(FIELDS.length);
    boxes.forEach((box, i) => {
      const field = ordered[i]!;
      const scale = box.pageWidth / PAGE.width;
      expect(box.page).toBe(field.page);
      expect(Math.abs(box.left - field.x * scale)).toBeLessThan(1.5);
      expect(Math.abs(box.top - field.y * scale)).toBeLessThan(1.5);
      expect(Math.abs(box.width - field.width * scale)).toBeLessThan(1.5);
      expect(Math.abs(box.height - field.height * scale)).toBeLessThan(1.5);
    });

    const finish = page.getByRole("button", { name: "Finish" });
    await expect(finish.isDisabled()).resolves.toBe(true);
    await expect(page.locator('[data-role="status"]').textContent()).resolves.toBe("4 required fields left");

    // Keyboard: "Next field" moves to the first required field left.
    await page.getByRole("button", { name: "Next field" }).click();
    await expect(page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).resolves.toBe(
      "Full name (required)",
    );
    await page.keyboard.type("Jane Doe");
    await page.getByRole("button", { name: "Next field" }).click();
    await expect(page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).resolves.toBe(
      "I agree (required)",
    );
    await page.keyboard.press("Space");
    await expect(page.locator('[data-role="status"]').textContent()).resolves.toBe("2 required fields left");

    // Typed signature: the dialog offers the signer's name in the signature font.
    await page.getByRole("button", { name: "Signature (required)" }).click();
    const dialog = page.getByRole("dialog", { name: "Adopt your signature" });
    await dialog.waitFor();
    await expect(page.getByLabel("Your full name").inputValue()).resolves.toBe("Jane Doe");
    await page.evaluate(() => document.fonts.ready);
    await expect(
      page.evaluate(() => document.fonts.check('16px "Ferry Signature"', "Jane Doe")),
    ).resolves.toBe(true);
    await screen(page, "esign-desktop-typed");
    await dialog.getByRole("button", { name: "Adopt and sign" }).click();
    await page.locator(".fy-signing-signature img").waitFor();
    await expect(finish.isDisabled()).resolves.toBe(true);

    // Drawn initials: an empty pad is refused with a message, then a stroke is adopted.
    await page.getByRole("button", { name: "Initials (required)" }).click();
    const initials = page.getByRole("dialog", { name: "Adopt your initials" });
    await initials.waitFor();
    await initials.getByRole("radio", { name: "Draw" }).check();
    await initials.getByRole("button", { name: "Adopt and sign" }).click();
    await expect(initials.getByRole("alert").textContent()).resolves.toBe("Draw in the box first.");
    await drawWithMouse(page);
    await screen(page, "esign-desktop-drawn");
    await initials.getByRole("button", { name: "Adopt and sign" }).click();
    await page.locator(".fy-signing-initials img").waitFor();

    await expect(page.locator('[data-role="status"]').textContent()).resolves.toBe(
      "All required fields are filled: choose Finish to sign.",
    );
    await expect(finish.isDisabled()).resolves.toBe(false);
    await page.getByRole("textbox", { name: "Notes" }).fill("  Read and understood.  ");
    await screen(page, "esign-desktop-filled");
    expect(await axeViolations(page)).toEqual([]);

    await Promise.all([page.waitForURL(`${base}/s/test-token/sign/finish`), finish.click()]);
    const values = lastValues("finish");
    expect(Object.keys(values).sort()).toEqual(FIELDS.map((f) => f.id).sort());
    expect(values.name).toBe("Jane Doe");
    expect(values.agree).toBe(true);
    expect(values.dated).toBe(today());
    expect(values.notes).toBe("Read and understood.");
    expect(expectMark(values.sig, "typed").text).toBe("Jane Doe");
    expectMark(values.ini, "drawn");
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe("the signing step on a phone (390 × 844, touch)", () => {
  it("fits the page to the screen, takes a signature drawn with a finger, and posts it", async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const { page, problems } = await openSigning(context);
    await screenshot(page, "esign-phone-open");
    const width = await page.locator('.fy-signing-page[data-page="1"]').evaluate((el) => el.clientWidth);
    // The page fills the column (no sideways scrolling) and its canvas has the screen's density.
    expect(width).toBeGreaterThan(340);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const canvasWidth = await page
      .locator('.fy-signing-page[data-page="1"] canvas')
      .evaluate((c) => (c as HTMLCanvasElement).width);
    expect(canvasWidth).toBe(Math.floor(width * 2));

    await page.getByRole("textbox", { name: "Full name (required)" }).fill("Jane Doe");
    await page.getByRole("checkbox", { name: "I agree (required)" }).check();
    await page.getByRole("button", { name: "Signature (required)" }).tap();
    const dialog = page.getByRole("dialog", { name: "Adopt your signature" });
    await dialog.waitFor();
    await dialog.getByRole("radio", { name: "Draw" }).check();
    await drawWithTouch(page);
    await screen(page, "esign-phone-drawn");
    await dialog.getByRole("button", { name: "Adopt and sign" }).tap();
    await page.locator(".fy-signing-signature img").waitFor();

    await page.getByRole("button", { name: "Initials (required)" }).tap();
    const initials = page.getByRole("dialog", { name: "Adopt your initials" });
    await initials.waitFor();
    // The dialog keeps the method chosen last (drawn): the signer switches to typing.
    await expect(initials.getByRole("radio", { name: "Draw" }).isChecked()).resolves.toBe(true);
    await initials.getByRole("radio", { name: "Type" }).tap();
    await expect(initials.getByLabel("Your initials").inputValue()).resolves.toBe("JD");
    await initials.getByRole("button", { name: "Adopt and sign" }).tap();
    await page.locator(".fy-signing-initials img").waitFor();
    await page.locator(".fy-signing-initials").scrollIntoViewIfNeeded();
    await screen(page, "esign-phone-filled");

    const finish = page.getByRole("button", { name: "Finish" });
    await Promise.all([page.waitForURL(`${base}/s/test-token/sign/finish`), finish.tap()]);
    const values = lastValues("finish");
    expectMark(values.sig, "drawn");
    expect(expectMark(values.ini, "typed").text).toBe("JD");
    expect(values.notes).toBe("");
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe("declining", () => {
  it("requires a reason, says so in the page's language, then posts it with the CSRF field", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, problems } = await openSigning(context, "?lang=es");
    const before = received.length;
    await page.getByText("Rechazar la firma").click();
    const reason = page.getByRole("textbox", { name: "¿Por qué lo rechaza?" });
    await reason.fill("   ");
    await page.getByRole("button", { name: "Rechazar", exact: true }).click();
    await expect(reason.evaluate((el) => (el as HTMLTextAreaElement).validationMessage)).resolves.toBe(
      "Escriba por qué lo rechaza.",
    );
    expect(received.length).toBe(before);
    await reason.fill("The amounts are wrong.");
    await Promise.all([
      page.waitForURL(`${base}/s/test-token/sign/decline`),
      page.getByRole("button", { name: "Rechazar", exact: true }).click(),
    ]);
    const last = received.at(-1)!;
    expect(last.url).toBe("/s/test-token/sign/decline");
    expect(last.body).toEqual({ csrf_token: CSRF.value, reason: "The amounts are wrong." });
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe("a document that cannot be loaded", () => {
  it("says so in the page's language and still offers to decline", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const { page, problems } = await openSigning(
      context,
      "?lang=de&pdf=missing",
      '[data-role="error"]:not([hidden])',
    );
    await expect(page.getByRole("alert").textContent()).resolves.toBe(
      "Das Dokument konnte nicht angezeigt werden. Laden Sie die Seite neu, um es erneut zu versuchen.",
    );
    await expect(page.locator('[data-role="bar"]').isHidden()).resolves.toBe(true);
    await expect(page.getByText("Unterschrift ablehnen").isVisible()).resolves.toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe("the signing page's files", () => {
  it("are served from node_modules with their types, long caching and ETags", async () => {
    const cases = [
      {
        url: esignAssetUrls.worker,
        type: "text/javascript; charset=utf-8",
        cache: "public, max-age=31536000, immutable",
      },
      {
        url: esignAssetUrls.signatureFonts[0].url,
        type: "font/woff2",
        cache: "public, max-age=31536000, immutable",
      },
      {
        url: esignAssetUrls.signatureFonts[1].url,
        type: "font/woff2",
        cache: "public, max-age=31536000, immutable",
      },
      {
        url: `${esignAssetUrls.cMaps}UniJIS-UCS2-H.bcmap`,
        type: "application/octet-stream",
        cache: "public, max-age=604800",
      },
      {
        url: `${esignAssetUrls.standardFonts}LiberationSans-Regular.ttf`,
        type: "font/ttf",
        cache: "public, max-age=604800",
      },
      {
        url: `${esignAssetUrls.wasm}openjpeg.wasm`,
        type: "application/wasm",
        cache: "public, max-age=604800",
      },
      {
        url: esignAssetUrls.script,
        type: "text/javascript; charset=utf-8",
        cache: "public, max-age=300, must-revalidate",
      },
      {
        url: esignAssetUrls.stylesheet,
        type: "text/css; charset=utf-8",
        cache: "public, max-age=300, must-revalidate",
      },
    ];
    for (const c of cases) {
      const res = await app.inject({ method: "GET", url: c.url, headers: { "accept-encoding": "gzip" } });
      expect({
        url: c.url,
        status: res.statusCode,
        type: res.headers["content-type"],
        cache: res.headers["cache-control"],
      }).toEqual({
        url: c.url,
        status: 200,
        type: c.type,
        cache: c.cache,
      });
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      const again = await app.inject({
        method: "GET",
        url: c.url,
        headers: { "if-none-match": String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
    }
  });

  it("serves no other file of the packages, nor any path outside them", async () => {
    for (const url of [
      "/static/pdfjs/cmaps/../package.json",
      "/static/pdfjs/cmaps/%2e%2e/package.json",
      "/static/pdfjs/wasm/quickjs-eval.wasm",
      "/static/pdfjs/wasm/LICENSE_QCMS",
      "/static/pdfjs/build/pdf.mjs",
      "/static/pdf.worker.min.mjs",
    ]) {
      expect({ url, status: (await app.inject({ method: "GET", url })).statusCode }).toEqual({
        url,
        status: 404,
      });
    }
  });
});
