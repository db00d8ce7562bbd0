/**
 * The pull page resumes an unfinished upload only with the same file (ADR 0022), in headless
 * Chromium against a real server: a file stopped partway, then another file with the same name and
 * chunk count in a fresh browser, then the first file again. Chunks of 64 KiB keep the files small.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../helpers/api.js";
import { axeViolations, launchBrowser, screenshot, uploadChunkOf } from "../helpers/browser.js";
import { buildRequest } from "../helpers/factories.js";
import { useHarness } from "../helpers/harness.js";
import { freePort } from "../helpers/process.js";

const CHUNK = 64 * 1024;
const NAME = "receipts-2025.zip";
/** Two different files with one name and five chunks each, as in a folder of yearly exports. */
const A = randomBytes(300_000);
const B = randomBytes(290_000);

let port: number;
let base: string;
beforeAll(async () => {
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
});
const h = useHarness({ env: () => ({ PUBLIC_BASE_URL: base, MAX_CHUNK_BYTES: String(CHUNK) }) });

let browser: Browser;
let dir: string;
const paths = { a: "", b: "" };
beforeAll(async () => {
  await h.t.app.listen({ port, host: "127.0.0.1" });
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "ferry-resume-"));
  for (const [key, data] of [
    ["a", A],
    ["b", B],
  ] as const) {
    mkdirSync(join(dir, key));
    paths[key] = join(dir, key, NAME);
    writeFileSync(paths[key], data);
  }
});
afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** One upload call the page made: method, chunk number and the path it went to. */
interface UploadCall {
  method: string;
  chunk: number;
  path: string;
}

/** A page in a new browser context (no cookies, no storage) that records its upload calls. */
async function freshPage(): Promise<{
  page: Page;
  calls: UploadCall[];
  errors: string[];
  close(): Promise<void>;
}> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const calls: UploadCall[] = [];
  const errors: string[] = [];
  // Intercepted requests expose their multipart bodies, which carry the chunk numbers.
  await page.route("**/uploads**", (route) => route.continue());
  page.on("request", (request) => {
    const info = uploadChunkOf(request);
    if (info) calls.push({ ...info, path: new URL(request.url()).pathname });
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return { page, calls, errors, close: () => context.close() };
}

const mediaOfRequest = async (requestId: number): Promise<Json[]> =>
  (expectJson(await h.call("GET", `/v1/media/?request=${requestId}`), 200).results as Json[]).sort(
    (x, y) => x.id - y.id,
  );

describe("pull page: an unfinished upload is resumed only with the same file", () => {
  let request: Json;
  let link: string;
  let aId: number;

  beforeAll(async () => {
    request = await buildRequest(h.t, h.owner, { message: "Please upload this year's receipts." });
    link = `${base}/r/${request.identifier}/`;
  });

  it("stops file A partway when the network is cut, two of five chunks stored", async () => {
    const { page, close } = await freshPage();
    let stored = 0;
    await page.route("**/uploads**", async (route) => {
      // Two chunks go through, then the connection is cut for good.
      if (stored >= 2) return route.abort("internetdisconnected");
      if (route.request().method() !== "GET") stored += 1;
      return route.continue();
    });
    await page.goto(link);
    await page.setInputFiles("#file-input", paths.a);
    await page.locator('#upload-list li[data-state="retrying"]').waitFor();
    await screenshot(page, "recipient-resume-1-interrupted");
    await close();
    const [a] = await mediaOfRequest(request.id);
    expect(a).toMatchObject({ name: NAME, state: "uploading", current_chunk: 2, total_bytes: A.length });
    aId = a!.id;
  });

  it("uploads a different file with the same name as a new media, byte for byte, leaving A's chunks alone", async () => {
    const { page, calls, errors, close } = await freshPage();
    let lost = false;
    await page.route("**/uploads**", async (route) => {
      if (route.request().method() === "POST" && !lost) {
        // The first chunk reaches the server but its answer never reaches the page.
        lost = true;
        await route.fetch();
        return route.abort("connectionreset");
      }
      return route.continue();
    });
    await page.goto(link);
    await page.setInputFiles("#file-input", paths.b);
    // Submit is refused while A's upload is unfinished: the page says so instead of "you can submit".
    const notice = `Unfinished earlier upload: ${NAME} (2 of 5 parts). Choose that same file again to finish it, or remove it, then submit.`;
    await page.locator("#submit-hint").filter({ hasText: notice }).waitFor();
    await page.locator('#upload-list li[data-state="done"]').waitFor();
    expect(await page.locator("#upload-status").textContent()).toBe(notice);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "recipient-resume-2-other-file");
    await close();
    expect(lost).toBe(true);
    expect(errors).toEqual([]);
    expect(calls.filter((c) => c.path.endsWith(`/uploads/${aId}`))).toEqual([]);
    const [a, b, ...more] = await mediaOfRequest(request.id);
    expect(more).toEqual([]);
    expect(a).toMatchObject({ id: aId, state: "uploading", current_chunk: 2, bytes: 2 * CHUNK });
    expect(b).toMatchObject({ name: NAME, state: "available", bytes: B.length, sha256: sha(B) });
    const download = await h.call("GET", `/v1/media/${b!.id}/download`);
    expect(sha(download.rawPayload)).toBe(sha(B));
  });

  it("resumes file A chosen again: only its missing chunks are sent, and it completes byte for byte", async () => {
    const { page, calls, errors, close } = await freshPage();
    await page.goto(link);
    await page.setInputFiles("#file-input", paths.a);
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    await screenshot(page, "recipient-resume-3-resumed");
    await close();
    expect(errors).toEqual([]);
    expect(calls).toEqual(
      [3, 4, 5].map((chunk) => ({ method: "PUT", chunk, path: `/r/${request.identifier}/uploads/${aId}` })),
    );
    const a = (await mediaOfRequest(request.id)).find((m) => m.id === aId);
    expect(a).toMatchObject({ state: "available", bytes: A.length, sha256: sha(A) });
    const download = await h.call("GET", `/v1/media/${aId}/download`);
    expect(sha(download.rawPayload)).toBe(sha(A));
  });
});
