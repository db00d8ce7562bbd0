/**
 * The pull page never leaves the recipient stuck, in headless Chromium against a real server: an
 * unfinished upload found after a reload can be removed (or continued), any file can be removed
 * before Submit, the same file is not added twice, Submit without files asks for a confirmation, a
 * refused Submit redirects (a reload posts nothing), and a file dropped anywhere on the page is
 * uploaded instead of opening in the browser. Screenshots at desktop and phone widths.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../helpers/api.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { buildMedia, buildPushRequest, buildRequest, sendDraft } from "../helpers/factories.js";
import { useHarness } from "../helpers/harness.js";
import { eventually, freePort } from "../helpers/process.js";
import { unzip } from "../helpers/zip.js";

const CHUNK = 64 * 1024;

let port: number;
let base: string;
beforeAll(async () => {
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
});
const h = useHarness({ env: () => ({ PUBLIC_BASE_URL: base, MAX_CHUNK_BYTES: String(CHUNK) }) });

let browser: Browser;
let dir: string;
/** Files on disk: `partial` (5 chunks, stopped after 2), `wrong` and `right` (small, whole). */
const files = { partial: "", wrong: "", right: "" };
beforeAll(async () => {
  await h.t.app.listen({ port, host: "127.0.0.1" });
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "ferry-dead-ends-"));
  mkdirSync(dir, { recursive: true });
  for (const [key, name, bytes] of [
    ["partial", "scans-2025.zip", 300_000],
    ["wrong", "wrong-invoice.pdf", 20_000],
    ["right", "invoice.pdf", 30_000],
  ] as const) {
    files[key] = join(dir, name);
    writeFileSync(files[key], randomBytes(bytes));
  }
});
afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const mediaOf = async (requestId: number): Promise<Json[]> =>
  (expectJson(await h.call("GET", `/v1/media/?request=${requestId}`), 200).results as Json[]).sort(
    (x, y) => x.id - y.id,
  );
const requestOf = async (id: number): Promise<Json> =>
  expectJson(await h.call("GET", `/v1/request/${id}/`), 200);

/** A page in a new browser context at `width` × `height`, failing the test on script errors. */
async function openPage(width = 1280, height = 900): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return { page, errors };
}

async function expectAxeClean(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
}

describe("pull page: reload, remove, submit", () => {
  let request: Json;
  let link: string;

  beforeAll(async () => {
    request = await buildRequest(h.t, h.owner, { message: "Please send the signed invoice." });
    link = `${base}/r/${request.identifier}/`;
  });

  it("lists an upload left unfinished before a reload, with a way to continue it or remove it", async () => {
    const { page, errors } = await openPage();
    let stored = 0;
    await page.route("**/uploads**", async (route) => {
      // The big file's first two chunks go through, then the connection is cut for it.
      const body = route.request().postDataBuffer()?.subarray(0, 4000).toString("latin1") ?? "";
      if (body.includes("scans-2025.zip") || /\/uploads\/\d+(\?|$)/.test(route.request().url())) {
        if (stored >= 2) return route.abort("internetdisconnected");
        stored += 1;
      }
      return route.continue();
    });
    await page.goto(link);
    await page.setInputFiles("#file-input", files.wrong);
    await page.locator("#received-list li").filter({ hasText: "wrong-invoice.pdf" }).waitFor();
    await page.setInputFiles("#file-input", files.partial);
    await page.locator('#upload-list li[data-state="retrying"]').waitFor();
    await page.unroute("**/uploads**");
    await page.reload();
    const earlier = page.locator("#upload-list li[data-earlier-id]");
    await earlier.waitFor();
    expect(await earlier.textContent()).toContain(
      "scans-2025.zip300.0 KB · Unfinished (2 of 5 parts). Choose this file again to continue.",
    );
    await expect(page.getByRole("button", { name: "Remove scans-2025.zip" }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole("button", { name: "Remove wrong-invoice.pdf" }).isVisible()).resolves.toBe(
      true,
    );
    // Nothing finished is missing: the checkbox for an empty Submit stays hidden.
    expect(await page.locator("#confirm-empty").isHidden()).toBe(true);
    await expectAxeClean(page);
    await screenshot(page, "recipient-dead-ends-1-after-reload");
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("removes the unfinished upload and a finished file, then submits the right one", async () => {
    const { page, errors } = await openPage(390, 844);
    await page.goto(link);
    await page.locator("#upload-list li[data-earlier-id]").waitFor();
    await page.getByRole("button", { name: "Remove scans-2025.zip" }).click();
    await page.locator("#upload-list li[data-earlier-id]").waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Remove wrong-invoice.pdf" }).click();
    await page.locator("#received-list li").waitFor({ state: "detached" });
    expect(await page.locator("#received-heading").textContent()).toBe("Received (0)");
    expect(await page.locator("#upload-status").textContent()).toBe("wrong-invoice.pdf removed.");
    // Focus stays in the uploader, not on the removed button's ghost.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("file-input");
    expect(await mediaOf(request.id)).toEqual([]);
    await expect(page.locator("#confirm-empty").isVisible()).resolves.toBe(true);
    await page.setInputFiles("#file-input", files.right);
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    expect(await page.locator("#confirm-empty").isHidden()).toBe(true);
    await expectAxeClean(page);
    await screenshot(page, "recipient-dead-ends-2-phone-removed");
    await page.fill("#receiver-message", "Here is the signed one.");
    await page.click("#submit-button");
    await page.getByRole("heading", { name: "Thank you, your files were sent" }).waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
    expect(await requestOf(request.id)).toMatchObject({
      complete: true,
      receiver_message: "Here is the signed one.",
    });
    expect((await mediaOf(request.id)).map((m) => m.name)).toEqual(["invoice.pdf"]);
  });
});

describe("pull page: no file, the same file twice, drops", () => {
  it("asks to confirm a Submit without files, and a reload of the refusal posts nothing", async () => {
    const request = await buildRequest(h.t, h.owner);
    const { page, errors } = await openPage();
    const posts: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST") posts.push(new URL(r.url()).pathname);
    });
    await page.goto(`${base}/r/${request.identifier}/`);
    await page.fill("#receiver-message", "I have nothing to send, sorry.");
    await page.click("#submit-button");
    await page.waitForURL(/\?error=empty/);
    await page.getByRole("alert").filter({ hasText: "You have not uploaded any file." }).waitFor();
    // The reply typed before the refusal is still there.
    expect(await page.inputValue("#receiver-message")).toBe("I have nothing to send, sorry.");
    await expectAxeClean(page);
    await screenshot(page, "recipient-dead-ends-3-empty-refused");
    await page.reload();
    expect(posts).toEqual([`/r/${request.identifier}/submit`]);
    expect((await requestOf(request.id)).complete).toBe(false);
    await page.fill("#receiver-message", "I have nothing to send, sorry.");
    await page.getByLabel("Submit without files").check();
    await page.click("#submit-button");
    await page.getByRole("heading", { name: "Thank you, your files were sent" }).waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
    expect(await requestOf(request.id)).toMatchObject({
      complete: true,
      receiver_message: "I have nothing to send, sorry.",
    });
  });

  it("refuses the same file twice, in the list and after a reload", async () => {
    const request = await buildRequest(h.t, h.owner);
    const { page, errors } = await openPage();
    await page.goto(`${base}/r/${request.identifier}/`);
    await page.setInputFiles("#file-input", files.right);
    await page.setInputFiles("#file-input", files.right);
    await page
      .locator('#upload-list li[data-state="error"]')
      .filter({ hasText: "invoice.pdf is already in the list: a file is added only once." })
      .waitFor();
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    await page.reload();
    await page.setInputFiles("#file-input", files.right);
    await page
      .locator('#upload-list li[data-state="error"]')
      .filter({ hasText: "Already uploaded: this same file is under Received." })
      .waitFor();
    await expectAxeClean(page);
    await screenshot(page, "recipient-dead-ends-4-same-file");
    expect(errors).toEqual([]);
    await page.context().close();
    expect((await mediaOf(request.id)).map((m) => m.name)).toEqual(["invoice.pdf"]);
  });

  it("uploads a file dropped anywhere on the page, showing where it goes while dragging", async () => {
    const request = await buildRequest(h.t, h.owner);
    const { page, errors } = await openPage();
    await page.goto(`${base}/r/${request.identifier}/`);
    const transfer = await page.evaluateHandle(() => {
      const data = new DataTransfer();
      data.items.add(new File(["dropped on the heading\n"], "dropped.txt", { type: "text/plain" }));
      return data;
    });
    await page.dispatchEvent("h1", "dragenter", { dataTransfer: transfer });
    await page.dispatchEvent("h1", "dragover", { dataTransfer: transfer });
    expect(await page.evaluate(() => document.body.classList.contains("fy-dragging"))).toBe(true);
    expect(await page.locator("#dropzone").getAttribute("class")).toContain("fy-dragover");
    await screenshot(page, "recipient-dead-ends-5-dragging");
    await page.dispatchEvent("h1", "drop", { dataTransfer: transfer });
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    expect(await page.evaluate(() => document.body.classList.contains("fy-dragging"))).toBe(false);
    expect(page.url()).toBe(`${base}/r/${request.identifier}/`);
    expect(errors).toEqual([]);
    await page.context().close();
    const [media] = await mediaOf(request.id);
    expect(media).toMatchObject({ name: "dropped.txt", state: "available", bytes: 23 });
  });

  it("shows an offline banner while the browser is offline, and hides it when it is back", async () => {
    const request = await buildRequest(h.t, h.owner);
    const { page, errors } = await openPage(390, 844);
    await page.goto(`${base}/r/${request.identifier}/`);
    const banner = page.getByRole("status").filter({ hasText: "You are offline." });
    expect(await banner.isHidden()).toBe(true);
    await page.context().setOffline(true);
    await banner.waitFor();
    await expectAxeClean(page);
    await screenshot(page, "recipient-dead-ends-6-offline-phone");
    await page.context().setOffline(false);
    await banner.waitFor({ state: "hidden" });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("refuses an empty file with a clear message", async () => {
    const request = await buildRequest(h.t, h.owner);
    const empty = join(dir, "empty.txt");
    writeFileSync(empty, "");
    const { page } = await openPage();
    await page.goto(`${base}/r/${request.identifier}/`);
    await page.setInputFiles("#file-input", empty);
    await page
      .locator('#upload-list li[data-state="error"]')
      .filter({ hasText: "empty.txt is empty (0 bytes): there is nothing to upload." })
      .waitFor();
    await page.context().close();
    expect(await mediaOf(request.id)).toEqual([]);
  });
});

describe("push page: summary and Download all", () => {
  it("sums up the files and downloads them all as one zip equal to the files", async () => {
    const draft = await buildPushRequest(h.t, h.owner, { message: "Your signed contract and its annexes." });
    const contents: Record<string, Buffer> = {
      "contract.pdf": randomBytes(180_000),
      "annex-a.docx": randomBytes(40_000),
      "site-photo.jpg": randomBytes(95_000),
    };
    for (const [name, data] of Object.entries(contents))
      await buildMedia(h.t, h.owner, {
        request: draft.id,
        name,
        data,
        content_type: "application/octet-stream",
      });
    const request = await sendDraft(h.t, h.owner, draft.id);
    for (const [width, height, name] of [
      [1280, 900, "recipient-push-summary"],
      [390, 844, "recipient-push-summary-phone"],
    ] as const) {
      const { page, errors } = await openPage(width, height);
      await page.goto(`${base}/r/${request.identifier}/`);
      expect(await page.locator("#files-summary").textContent()).toMatch(
        /^3 files · 315\.0 KB · expires in \d+ days?$/,
      );
      expect(await page.locator(".fy-file .fy-muted").allTextContents()).toEqual([
        "180.0 KB · PDF document",
        "40.0 KB · Word document",
        "95.0 KB · JPEG image",
      ]);
      await expectAxeClean(page);
      await screenshot(page, name);
      expect(errors).toEqual([]);
      await page.context().close();
    }
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${base}/r/${request.identifier}/`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download all (zip)" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("Files from Test Owner.zip");
    const entries = await unzip(readFileSync((await download.path())!));
    expect([...entries.keys()]).toEqual(Object.keys(contents));
    for (const [name, data] of Object.entries(contents)) expect(entries.get(name)?.equals(data)).toBe(true);
    await context.close();
    // Each file's download is recorded once the whole zip has left.
    await eventually(async () => (await mediaOf(request.id)).every((m) => m.times_downloaded === 1));
    expect((await mediaOf(request.id)).map((m) => m.times_downloaded)).toEqual([1, 1, 1]);
  });

  it("shows the completed page with a success mark and the time in the reader's zone", async () => {
    const request = await buildRequest(h.t, h.owner);
    const context = await browser.newContext({ timezoneId: "Asia/Tokyo", locale: "en-GB" });
    const page = await context.newPage();
    await page.goto(`${base}/r/${request.identifier}/`);
    await page.setInputFiles("#file-input", files.right);
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    await page.click("#submit-button");
    await page.getByRole("heading", { name: "Thank you, your files were sent" }).waitFor();
    const time = page.locator(".fy-completed time");
    const iso = (await time.getAttribute("datetime"))!;
    const tokyo = new Intl.DateTimeFormat("en-GB", {
      dateStyle: "long",
      timeStyle: "short",
      timeZone: "Asia/Tokyo",
    }).format(new Date(iso));
    expect(await time.textContent()).toBe(tokyo);
    expect(await time.getAttribute("title")).toMatch(/UTC$/);
    await expectAxeClean(page);
    await screenshot(page, "recipient-completed");
    await context.close();
  });
});
