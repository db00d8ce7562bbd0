/**
 * The esign step of a session in Debian's Chromium against a real server: two signers in order in
 * one container (the first accepts the consent, fills the fields and adopts a typed signature on a
 * desktop screen; the second waits until then, and on a phone screen adopts a signature drawn with
 * the mouse), the step then `sealing`; the seal job run as the worker runs it, the step `signed`,
 * the owner downloads the sealed PDF and poppler's pdfsig finds its seal valid over the whole file;
 * the second signer downloads the same PDF from the step page. In another container a signer
 * declines with a reason. No CSP refusal, no script error, no sideways scrolling on the phone.
 * Screenshots of the consent, signing, done and sealed states under
 * test-results/screenshots/esign-step-*.png.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiCall, apiCaller, expectJson } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, SCREENSHOT_DIR } from "../helpers/browser.js";
import { sendContainer, sessionOf } from "../helpers/containers.js";
import { agreementStep, ESIGN_PATH, sealQueued } from "../helpers/esign.js";
import { freePort } from "../helpers/process.js";

const SHOTS = join(SCREENSHOT_DIR, "screenshots");
const DESKTOP = { viewport: { width: 1280, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true };

let t: TestApp;
let owner: TestAccount;
let call: ApiCall;
let base: string;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  call = apiCaller(t, owner);
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "ferry-esign-e2e-"));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** pdfsig's report of a PDF (poppler-utils). */
function pdfsig(bytes: Buffer): string {
  const path = join(dir, "sealed.pdf");
  writeFileSync(path, bytes);
  const out = spawnSync("pdfsig", [path], { encoding: "utf8" });
  return `${out.stdout}${out.stderr}`;
}

/** A page recording CSP refusals and script errors. */
async function open(options: Parameters<Browser["newContext"]>[0]) {
  const context: BrowserContext = await browser.newContext(options);
  const page: Page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (/Refused|Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return { context, page, problems };
}

/** What the screen shows, saved as test-results/screenshots/esign-step-<name>.png. */
async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `esign-step-${name}.png`) });
}

/** Sideways scrolling of the page, against the layout viewport the context set. */
async function overflow(page: Page, width: number): Promise<number> {
  return page.evaluate((w) => document.documentElement.scrollWidth - w, width);
}

/** Draws a zigzag with the mouse across the middle of the signature pad. */
async function drawWithMouse(page: Page) {
  const pad = await page.locator(".fy-signing-pad").boundingBox();
  if (!pad) throw new Error("no pad");
  const y = pad.y + pad.height / 2;
  await page.mouse.move(pad.x + pad.width * 0.15, y);
  await page.mouse.down();
  for (let i = 1; i <= 12; i += 1)
    await page.mouse.move(pad.x + pad.width * (0.15 + i * 0.055), y + (i % 2 ? -20 : 20), { steps: 3 });
  await page.mouse.up();
  await page.locator(".fy-signing-pad:not([data-drawing])").waitFor();
}

const firstPage = '.fy-signing-page[data-page="1"][data-rendered]';

describe("the esign step in Chromium", () => {
  it("two signers in order: typed on a desktop, drawn on a phone, then sealed and checked by pdfsig", async () => {
    const { c, ada, bob, step } = await agreementStep(call);
    const tokens = await sendContainer(call, c.id);
    const adaUrl = `${base}${sessionOf(tokens, ada).base}steps/${step.id}/`;
    const bobUrl = `${base}${sessionOf(tokens, bob).base}steps/${step.id}/`;

    // Bob, second in order, only waits while Ada has not signed.
    const early = await open(PHONE);
    await early.page.goto(bobUrl);
    await early.page.locator("#esign-waiting").waitFor();
    await expect(early.page.locator("#esign-waiting").innerText()).resolves.toContain(
      "Waiting for the signer before you (buyer) to sign.",
    );
    expect(await early.page.locator("#signing").count()).toBe(0);
    expect(await overflow(early.page, 390)).toBeLessThanOrEqual(0);
    await shot(early.page, "waiting-phone");
    await early.context.close();

    // Ada on a desktop: consent, fields, a typed signature, Finish.
    const a = await open(DESKTOP);
    await a.page.goto(adaUrl);
    await a.page.getByRole("heading", { name: "Consent to sign electronically" }).waitFor();
    expect(await axeViolations(a.page)).toEqual([]);
    await shot(a.page, "consent-desktop");
    await a.page.getByRole("button", { name: "I agree" }).click();
    await a.page.locator(firstPage).waitFor();
    await shot(a.page, "signing-desktop");
    await a.page.getByRole("textbox", { name: "Text (required)" }).fill("Ada Lovelace");
    await a.page.getByRole("checkbox", { name: "Checkbox (required)" }).check();
    await a.page.getByRole("textbox", { name: "Text", exact: true }).fill("Paid in full.");
    await a.page.getByRole("button", { name: "Signature (required)" }).click();
    const dialog = a.page.getByRole("dialog", { name: "Adopt your signature" });
    await dialog.waitFor();
    await expect(a.page.getByLabel("Your full name").inputValue()).resolves.toBe("Ada Lovelace");
    await dialog.getByRole("button", { name: "Adopt and sign" }).click();
    await a.page.locator(".fy-signing-signature img").waitFor();
    await shot(a.page, "signed-field-desktop");
    const finish = a.page.getByRole("button", { name: "Finish" });
    await expect(finish.isDisabled()).resolves.toBe(false);
    expect(await axeViolations(a.page)).toEqual([]);
    await Promise.all([a.page.waitForURL(adaUrl), finish.click()]);
    await a.page.locator("#esign-done").waitFor();
    await shot(a.page, "done-desktop");
    expect(a.problems).toEqual([]);
    await a.context.close();
    const half = expectJson(await call("GET", `${ESIGN_PATH}${step.id}/`), 200);
    expect(half.status).toBe("partially_signed");
    expect(half.signers.map((s: { status: string }) => s.status)).toEqual(["signed", "ready"]);

    // Bob on a phone: consent, a signature drawn with the mouse, Finish.
    const b = await open(PHONE);
    await b.page.goto(bobUrl);
    await b.page.getByRole("heading", { name: "Consent to sign electronically" }).waitFor();
    expect(await overflow(b.page, 390)).toBeLessThanOrEqual(0);
    await shot(b.page, "consent-phone");
    await b.page.getByRole("button", { name: "I agree" }).click();
    await b.page.locator(firstPage).waitFor();
    expect(await overflow(b.page, 390)).toBeLessThanOrEqual(0);
    await shot(b.page, "signing-phone");
    await b.page.getByRole("button", { name: "Signature (required)" }).click();
    const pad = b.page.getByRole("dialog", { name: "Adopt your signature" });
    await pad.waitFor();
    await pad.getByRole("radio", { name: "Draw" }).check();
    await drawWithMouse(b.page);
    await shot(b.page, "drawn-phone");
    await pad.getByRole("button", { name: "Adopt and sign" }).click();
    await b.page.locator(".fy-signing-signature img").waitFor();
    await shot(b.page, "signed-field-phone");
    expect(await overflow(b.page, 390)).toBeLessThanOrEqual(0);
    await Promise.all([b.page.waitForURL(bobUrl), b.page.getByRole("button", { name: "Finish" }).click()]);
    await b.page.locator("#esign-done").waitFor();
    await b.page.locator("#esign-sealing").waitFor();
    expect(await overflow(b.page, 390)).toBeLessThanOrEqual(0);
    await shot(b.page, "done-phone");
    const sealing = expectJson(await call("GET", `${ESIGN_PATH}${step.id}/`), 200);
    expect(sealing).toMatchObject({ status: "sealing", state: "pending", sealed_document: null });

    // The seal job, as the worker runs it: the step completes with the sealed PDF.
    await sealQueued(t);
    const done = expectJson(await call("GET", `${ESIGN_PATH}${step.id}/`), 200);
    expect(done).toMatchObject({ status: "signed", state: "complete" });
    expect(done.signers.map((s: { status: string }) => s.status)).toEqual(["signed", "signed"]);
    const download = await call("GET", `/v1/media/${done.sealed_document}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers["content-type"]).toContain("application/pdf");
    const sealed = download.rawPayload;
    const report = pdfsig(sealed);
    expect(report).toContain("Signature is Valid.");
    expect(report).toContain("Total document signed");
    // Its second page (the signatures) as poppler renders it, beside the screenshots.
    mkdirSync(SHOTS, { recursive: true });
    const render = spawnSync(
      "pdftoppm",
      [
        "-png",
        "-r",
        "72",
        "-f",
        "2",
        "-l",
        "2",
        "-singlefile",
        join(dir, "sealed.pdf"),
        join(SHOTS, "esign-step-sealed-page-2"),
      ],
      { encoding: "utf8" },
    );
    expect(render.status, render.stderr).toBe(0);

    // Bob's step page now offers his copy: the same bytes, downloaded by the browser.
    await b.page.reload();
    const copyLink = b.page.getByRole("link", { name: "Download your copy of the signed document (PDF)" });
    await copyLink.waitFor();
    expect(await overflow(b.page, 390)).toBeLessThanOrEqual(0);
    await shot(b.page, "sealed-phone");
    const [saved] = await Promise.all([b.page.waitForEvent("download"), copyLink.click()]);
    expect(saved.suggestedFilename()).toBe(`signed-${step.id}.pdf`);
    const copyPath = join(dir, "copy.pdf");
    await saved.saveAs(copyPath);
    expect(readFileSync(copyPath).equals(sealed)).toBe(true);
    expect(b.problems).toEqual([]);
    await b.context.close();
    // What was stored: Ada's typed mark with her text, Bob's drawn one, both PNGs.
    // Stored sealed (signers' addresses, agents and marks are personal data), opened by the engine.
    const db = t.ferry.database.db;
    const stored = await db
      .selectFrom("enrichment_features")
      .selectAll()
      .where("feature_id", "=", step.id)
      .executeTakeFirstOrThrow();
    expect(stored.result_kid).not.toBeNull();
    expect(stored.result).not.toContain("Ada Lovelace");
    const row = await db
      .selectFrom("container_features")
      .selectAll()
      .where("id", "=", step.id)
      .executeTakeFirstOrThrow();
    const view = await t.ferry.enrichments.engine.view(db, row, stored);
    const result = view.result as {
      signed: Record<string, { values: Record<string, { method?: string; text?: string; image?: string }> }>;
    };
    expect(result.signed[String(ada.id)]!.values.buyer_sig).toMatchObject({
      method: "typed",
      text: "Ada Lovelace",
    });
    expect(result.signed[String(ada.id)]!.values.buyer_note).toBe("Paid in full.");
    expect(result.signed[String(bob.id)]!.values.witness_sig!.method).toBe("drawn");
    expect(result.signed[String(bob.id)]!.values.witness_sig!.image).toMatch(/^data:image\/png;base64,/);
  });

  it("declines with a reason", async () => {
    const { c, ada, step } = await agreementStep(call);
    const tokens = await sendContainer(call, c.id);
    const url = `${base}${sessionOf(tokens, ada).base}steps/${step.id}/`;
    const { context, page, problems } = await open(PHONE);
    await page.goto(url);
    await page.getByRole("button", { name: "I agree" }).click();
    await page.locator(firstPage).waitFor();
    await page.getByText("Decline to sign").click();
    await page.getByRole("textbox", { name: "Why do you decline?" }).fill("The price is wrong.");
    await Promise.all([
      page.waitForURL(url),
      page.getByRole("button", { name: "Decline", exact: true }).click(),
    ]);
    await page.locator("#esign-closed").waitFor();
    await expect(page.locator("#esign-closed").innerText()).resolves.toContain("The price is wrong.");
    expect(await overflow(page, 390)).toBeLessThanOrEqual(0);
    await shot(page, "declined-phone");
    expect(problems).toEqual([]);
    await context.close();
    const declined = expectJson(await call("GET", `${ESIGN_PATH}${step.id}/`), 200);
    expect(declined).toMatchObject({ status: "declined", state: "complete" });
    expect(declined.signers[0]).toMatchObject({ status: "declined", declined_reason: "The price is wrong." });
  });
});
