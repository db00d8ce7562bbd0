/**
 * One account's branding cannot use up another account's one-time files, and no other site can
 * either, in Debian's Chromium (ADR 0055). Account A's owner is signed in to the dashboard; A holds
 * a file a recipient uploaded, downloadable once. Account B's stylesheet, loaded by B's recipient
 * page, points every CSS way of fetching a URL (images, masks, cursors, fonts, imports) at A's
 * dashboard download, A's API download and A's recipient link. Then pages on another port and on
 * another host point images and links at the same downloads.
 *
 * The recipient page's CSP keeps the browser from asking for any of those URLs; with the CSP
 * bypassed the server refuses them (Fetch Metadata says image, style or font); another site's link
 * shows the file's Download button; A's integration then downloads the file once (200), as it
 * would have without the attack. The owner's own Download button still downloads.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiCall, apiCaller, expectJson, type Json } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { createDashboardUser, type DashboardUser, signInPage } from "../helpers/dashboard.js";
import { bytesOf, createRequest, multipart, partsOf, sha256 } from "../helpers/media.js";
import { eventually, freePort } from "../helpers/process.js";

/** A 1×1 PNG: account B's logo. */
const LOGO =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

let t: TestApp;
let base: string;
let browser: Browser;
let attacker: Server;
let attackerPort: number;
let a: TestAccount;
let b: TestAccount;
let owner: DashboardUser;
/** Account A's files and links. */
const A: { file: number; data: Buffer; second: number; secondData: Buffer; push: number; pushLink: string } =
  {
    file: 0,
    data: Buffer.alloc(0),
    second: 0,
    secondData: Buffer.alloc(0),
    push: 0,
    pushLink: "",
  };
/** Account B's recipient link (its page loads B's stylesheet). */
let bLink = "";
/** The HTML the page on another origin serves, set by each test. */
let attackPage = "";

const db = () => t.ferry.database.db;

async function timesDownloaded(id: number): Promise<number> {
  const row = await db()
    .selectFrom("media")
    .select("times_downloaded")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.times_downloaded;
}

/** A pull request of `who` with one file its recipient uploaded (downloadable once by the owner). */
async function receivedFile(
  who: TestAccount,
  name: string,
  data: Buffer,
): Promise<{ request: number; file: number }> {
  const request = await createRequest(t, who, { type: "pull" });
  const view = await t.ferry.media.recipientCreate(request, partsOf({ name }, data));
  return { request, file: view.id };
}

/** A sent push request of `who` with one file; returns its link and the file id. */
async function pushLink(call: ApiCall, max: number | null): Promise<{ link: string; file: number }> {
  const draft = expectJson(
    await call("POST", "/v1/request/", { type: "push", is_draft: true, contact: [], message: "Files" }),
    201,
  );
  const body = multipart(
    { request: draft.id, name: "a.txt", content_type: "text/plain" },
    { data: Buffer.from("a") },
  );
  const media = expectJson(
    await call("POST", "/v1/media/", body.payload, { contentType: body.headers["content-type"]! }),
    201,
  );
  const sent: Json = expectJson(
    await call("PATCH", `/v1/request/${draft.id}/`, { is_draft: false, max_allowed_times_downloaded: max }),
    200,
  );
  return { link: `/r/${sent.identifier}/`, file: media.id };
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  a = await createTestAccount(t);
  b = await createTestAccount(t);
  A.data = bytesOf(20_000, "a-passport");
  A.file = (await receivedFile(a, "passport.pdf", A.data)).file;
  A.secondData = bytesOf(9_000, "a-contract");
  A.second = (await receivedFile(a, "contract.pdf", A.secondData)).file;
  const aPush = await pushLink(apiCaller(t, a), 1);
  A.pushLink = aPush.link;
  A.push = aPush.file;
  owner = await createDashboardUser(t, { accountId: a.accountId });

  const targets = [
    `/dashboard/media/${A.file}/download`,
    `/v1/media/${A.file}/download`,
    `${A.pushLink}files/${A.push}/download`,
    `${A.pushLink}files/zip`,
  ];
  const [dash, api, push, zip] = targets;
  const css = `
@import url(${dash});
@import url(${zip});
body { background-image: url(${dash}); }
.fy-main { background-image: url(${api}), url(${push}); }
.fy-header { background-image: url(logo); }
.fy-footer { mask-image: url(${dash}); -webkit-mask-image: url(${dash}); border-image: url(${push}) 30; }
h1 { cursor: url(${dash}), auto; list-style-image: url(${api}); }
@font-face { font-family: "Stolen"; src: url(${dash}) format("woff2"), url(${api}); }
p { font-family: "Stolen", sans-serif; }
`;
  const call = apiCaller(t, b);
  expectJson(await call("PUT", "/v1/branding/", { css, logo: LOGO }), 200);
  bLink = (await pushLink(call, null)).link;

  attackerPort = await freePort();
  attacker = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(attackPage);
  });
  await new Promise<void>((resolve) => attacker.listen(attackerPort, "127.0.0.1", resolve));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await t?.close();
});

/** A browser context with A's owner signed in, recording every request to Ferry's origin. */
async function ownerBrowser(options: { bypassCSP?: boolean } = {}) {
  const context: BrowserContext = await browser.newContext({ acceptDownloads: true, ...options });
  const page: Page = await context.newPage();
  await signInPage(t, page, base, owner);
  const requested: { path: string; status?: number; failure?: string }[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.origin === base) requested.push({ path: url.pathname });
  });
  page.on("response", (r) => {
    const url = new URL(r.url());
    const entry = [...requested].reverse().find((q) => q.path === url.pathname && q.status === undefined);
    if (entry) entry.status = r.status();
  });
  page.on("requestfailed", (r) => {
    const url = new URL(r.url());
    const entry = [...requested].reverse().find((q) => q.path === url.pathname && q.failure === undefined);
    if (entry) entry.failure = r.failure()?.errorText ?? "failed";
  });
  return { context, page, requested };
}

/** Opens B's recipient page and waits until its stylesheet, images and fonts are done. */
async function openBPage(page: Page): Promise<void> {
  await page.goto(`${base}${bLink}`);
  await page.getByRole("heading").first().waitFor();
  await page.evaluate(async () => {
    await document.fonts.ready;
  });
  await page.waitForLoadState("networkidle");
}

const isAttackTarget = (path: string) =>
  path.startsWith("/dashboard/") || path.startsWith("/v1/") || path.startsWith(A.pushLink);

describe("account B's stylesheet on B's recipient page, opened by A's signed-in owner", () => {
  it("makes the browser ask for nothing but B's own assets and Ferry's static files", async () => {
    const { context, page, requested } = await ownerBrowser();
    await openBPage(page);
    // The stylesheet tried every target; the browser refused each under the page's CSP, so none
    // reached the server.
    const attacks = requested.filter((r) => isAttackTarget(r.path));
    const tried = new Set(attacks.map((r) => r.path));
    expect(tried).toEqual(
      new Set([
        `/dashboard/media/${A.file}/download`,
        `/v1/media/${A.file}/download`,
        `${A.pushLink}files/${A.push}/download`,
        `${A.pushLink}files/zip`,
      ]),
    );
    for (const r of attacks) expect(r, r.path).toEqual({ path: r.path, failure: "csp" });
    for (const r of requested.filter((q) => q.status !== undefined))
      expect(r.path.startsWith(bLink) || r.path.startsWith("/static/"), r.path).toBe(true);
    // B's own assets still load: its stylesheet and its logo.
    expect(requested.find((r) => r.path === `${bLink}brand.css`)?.status).toBe(200);
    expect(requested.find((r) => r.path === `${bLink}logo`)?.status).toBe(200);
    await context.close();
    expect(await timesDownloaded(A.file)).toBe(0);
    expect(await timesDownloaded(A.push)).toBe(0);
  });

  it("is refused by the server too when the browser ignores the page's CSP", async () => {
    const { context, page, requested } = await ownerBrowser({ bypassCSP: true });
    await openBPage(page);
    const attacks = requested.filter((r) => isAttackTarget(r.path));
    // The browser did send them this time (some it dropped once the refusal came back, before
    // reporting it); the server refused each: 403, or 401 for the API without its token.
    expect(attacks.some((r) => r.failure === "csp")).toBe(false);
    const answered = attacks.filter((r) => r.status !== undefined);
    expect(answered.map((r) => `${r.path} ${r.status}`)).toContain(`/dashboard/media/${A.file}/download 403`);
    for (const r of answered) expect(r.status, r.path).toBe(r.path.startsWith("/v1/") ? 401 : 403);
    await context.close();
    expect(await timesDownloaded(A.file)).toBe(0);
    expect(await timesDownloaded(A.push)).toBe(0);
  });
});

describe("another site's images and links to A's downloads, with A's owner signed in", () => {
  async function visitAttacker(host: string) {
    const target = `${base}/dashboard/media/${A.file}/download`;
    attackPage = `<!doctype html><title>Cat pictures</title>
<img src="${target}" alt="">
<img src="${base}${A.pushLink}files/${A.push}/download" alt="">
<a id="go" href="${target}">Cute cats</a>`;
    const owned = await ownerBrowser();
    const { page } = owned;
    await page.goto(`http://${host}:${attackerPort}/`);
    await page.waitForLoadState("networkidle");
    return owned;
  }

  for (const [name, host] of [
    ["another port of the same host (same-site)", "127.0.0.1"],
    ["another host (cross-site)", "localhost"],
  ] as const) {
    it(`from ${name}: the images are refused and the link shows the Download button`, async () => {
      const { context, page, requested } = await visitAttacker(host);
      // Each image was refused: 403, or, where the browser sent no dashboard cookie, the sign-in redirect.
      const images = requested.filter((r) => /\/download$/.test(r.path) && r.status !== undefined);
      for (const r of images) expect([403, 303], r.path).toContain(r.status);
      let downloaded = false;
      page.on("download", () => {
        downloaded = true;
      });
      await page.click("#go");
      await page.waitForURL(`${base}/dashboard/media/${A.file}/download`);
      await expect(page.getByRole("heading", { name: "Download a file" }).isVisible()).resolves.toBe(true);
      await expect(page.getByText("passport.pdf").first().isVisible()).resolves.toBe(true);
      expect(downloaded).toBe(false);
      await context.close();
      expect(await timesDownloaded(A.file)).toBe(0);
      expect(await timesDownloaded(A.push)).toBe(0);
    });
  }

  it("shows the Download button page at desktop and phone sizes, and its button downloads", async () => {
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1280, height: 800 },
    });
    const page = await context.newPage();
    await signInPage(t, page, base, owner);
    await page.goto(`${base}/dashboard/media/${A.second}/download`);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "dashboard-download-confirmation-desktop");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "dashboard-download-confirmation-phone");
    expect(await timesDownloaded(A.second)).toBe(0);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download contract.pdf" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("contract.pdf");
    expect(sha256(readFileSync((await download.path())!))).toBe(sha256(A.secondData));
    await context.close();
  });
});

describe("after all of it", () => {
  it("A's integration downloads its one-time file once, as if nothing had happened", async () => {
    expect(await timesDownloaded(A.file)).toBe(0);
    const api = apiCaller(t, a);
    const first = await api("GET", `/v1/media/${A.file}/download`, undefined, {
      headers: { accept: "application/json" },
    });
    expect(first.statusCode).toBe(200);
    expect(sha256(first.rawPayload)).toBe(sha256(A.data));
    await eventually(async () => (await timesDownloaded(A.file)) === 1);
  });

  it("the owner's Download button on the request page downloads a file", async () => {
    const { request, file } = await receivedFile(a, "scan.pdf", bytesOf(3_000, "a-scan"));
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    await signInPage(t, page, base, owner);
    await page.goto(`${base}/dashboard/requests/${request}`);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "dashboard-request-files");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download scan.pdf" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("scan.pdf");
    await context.close();
    await eventually(async () => (await timesDownloaded(file)) === 1);
  });
});
