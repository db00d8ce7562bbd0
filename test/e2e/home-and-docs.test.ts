/**
 * Ferry's own pages outside the links, in headless Chromium: the home page at `/` with its icon,
 * and the API reference at `/docs`, both axe-clean under their CSP.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchBrowser, SCREENSHOT_DIR, screenshot } from "../helpers/browser.js";
import { useHarness } from "../helpers/harness.js";
import { freePort } from "../helpers/process.js";

let port: number;
let base: string;
beforeAll(async () => {
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
});
const h = useHarness({ env: () => ({ PUBLIC_BASE_URL: base }) });

let browser: Browser;
beforeAll(async () => {
  await h.t.app.listen({ port, host: "127.0.0.1" });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** A page that records script errors and CSP refusals. */
async function openPage(width = 1280, height = 900): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  return { page, errors };
}

describe("home page", () => {
  it("says what Ferry is and where to go, with an icon, accessible at desktop and phone widths", async () => {
    for (const [width, height, name] of [
      [1280, 900, "home"],
      [390, 844, "home-phone"],
    ] as const) {
      const { page, errors } = await openPage(width, height);
      const res = await page.goto(`${base}/`);
      expect(res?.status()).toBe(200);
      await page.getByRole("heading", { name: "Ferry: secure file exchange" }).waitFor();
      expect(await page.getByRole("link", { name: "/docs" }).getAttribute("href")).toBe("/docs");
      const icon = await page.request.get(
        `${base}${await page.locator('link[rel="icon"]').getAttribute("href")}`,
      );
      expect(icon.status()).toBe(200);
      expect(icon.headers()["content-type"]).toBe("image/svg+xml");
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, name);
      expect(errors).toEqual([]);
      await page.context().close();
    }
  });
});

describe("API reference", () => {
  it("renders the operations at /docs with no accessibility violation and no script error", async () => {
    const { page, errors } = await openPage();
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    await page.getByRole("heading", { level: 1, name: "Ferry: Secure File Exchange API" }).waitFor();
    // Every operation is there, named by its operationId when it has one.
    await page.locator("#op-deleteRecipientUpload").getByText("/r/{identifier}/uploads/{mediaId}").waitFor();
    expect(await page.locator(".fy-api-op").count()).toBeGreaterThan(50);
    const violations = await axeViolations(page);
    expect(
      violations.map((v) => `${v.id}: ${v.targets.length}: ${v.targets.slice(0, 4).join(" | ")}`),
    ).toEqual([]);
    // The page is long: its top, and one operation.
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: resolve(SCREENSHOT_DIR, "docs-top.png") });
    await page
      .locator("#op-deleteRecipientUpload")
      .screenshot({ path: resolve(SCREENSHOT_DIR, "docs-operation.png") });
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
