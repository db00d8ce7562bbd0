/**
 * /verify/document in Debian's Chromium, on a desktop and a phone viewport: the form uploads a
 * sealed PDF and shows it sealed and unchanged with its signer; a changed copy shows the warning;
 * both pages are axe-clean under their strict CSP (screenshots under test-results/).
 */
import type { Browser, BrowserContextOptions } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../test/helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../../../test/helpers/browser.js";
import { freePort } from "../../../test/helpers/process.js";
import { drawnSignaturePng, textPdf } from "../../pdf/testing/fixtures.js";

let t: TestApp;
let browser: Browser;
let base: string;
let sealed: Buffer;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  const result = await t.ferry.pdf.sealDocument({
    original: await textPdf(2),
    documentId: "esg_browser_1",
    title: "Equipment lease",
    sealedAt: "2026-01-15T10:00:00.000Z",
    fields: [
      {
        id: "sig",
        role: "lessee",
        type: "signature",
        page: 2,
        x: 72,
        y: 640,
        width: 220,
        height: 60,
        value: { kind: "drawn", png: await drawnSignaturePng() },
      },
    ],
    signers: [
      {
        name: "Grace Lessee",
        email: "grace@example.com",
        role: "lessee",
        authentication: ["link", "two_factor_code", "reverse_authentication"],
        consentAt: "2026-01-15T09:50:00.000Z",
        signedAt: "2026-01-15T09:55:00.000Z",
        ip: "198.51.100.4",
        userAgent: "Mozilla/5.0",
      },
    ],
    audit: [{ at: "2026-01-15T09:55:00.000Z", event: "Signed", actor: "grace@example.com" }],
  });
  sealed = Buffer.from(result.bytes);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const VIEWPORTS: [string, BrowserContextOptions][] = [
  ["desktop", { viewport: { width: 1280, height: 900 } }],
  ["phone", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }],
];

describe("the verify page in Chromium", () => {
  for (const [name, options] of VIEWPORTS) {
    it(`checks a sealed PDF and a changed copy (${name})`, async () => {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      /** Submits the form and waits for the answer page to load. */
      const submit = async () => {
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === "POST"),
          page.click("button[type=submit]"),
        ]);
        await page.waitForLoadState("load");
        expect(response.status(), (await page.locator("main").textContent()) ?? "").toBe(200);
      };
      try {
        await page.goto(`${base}/verify/document`);
        expect(await page.locator("h1").textContent()).toBe("Check a signed document");
        expect(await axeViolations(page)).toEqual([]);
        await screenshot(page, `verify-document-form-${name}`);

        await page.setInputFiles("#verify-file", {
          name: "lease.pdf",
          mimeType: "application/pdf",
          buffer: sealed,
        });
        await submit();
        const verdict = page.locator("[data-verdict]");
        expect(await verdict.getAttribute("data-verdict")).toBe("sealed_unchanged");
        expect(await verdict.textContent()).toBe("Sealed by this service and unchanged since it was sealed.");
        expect(await page.locator("main").textContent()).toContain("Grace Lessee");
        expect(await axeViolations(page)).toEqual([]);
        await screenshot(page, `verify-document-sealed-${name}`);

        const changed = Buffer.concat([sealed, Buffer.from("\n% a later update\n")]);
        await page.setInputFiles("#verify-file", {
          name: "lease.pdf",
          mimeType: "application/pdf",
          buffer: changed,
        });
        await submit();
        expect(await page.locator("[data-verdict]").getAttribute("data-verdict")).toBe(
          "changed_after_sealing",
        );
        expect(await page.locator("main").textContent()).toContain("As sealed, the document was signed by:");
        await screenshot(page, `verify-document-changed-${name}`);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
