import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorker } from "../../src/app/build-worker.js";
import type { Worker } from "../../src/jobs/worker.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import {
  type AxeViolation,
  axeViolations,
  launchBrowser,
  screenshot,
  uploadChunkOf,
} from "../helpers/browser.js";
import { eventually, freePort } from "../helpers/process.js";
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON response bodies are read loosely in tests.
type Json = Record<string, any>;

const MB = 1000 * 1000;
let t: TestApp;
let owner: TestAccount;
let worker: Worker;
let browser: Browser;
let receiver: WebhookReceiver;
let base: string;
let dir: string;
let bigFile: string;
let bigSha: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({
    PUBLIC_BASE_URL: base,
    FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
    JOB_POLL_INTERVAL_MS: "50",
  });
  await t.app.listen({ port, host: "127.0.0.1" });
  worker = await buildWorker(t.ferry);
  await worker.start();
  owner = await createTestAccount(t);
  await t.ferry.database.db
    .updateTable("accounts")
    .set({ name: "Acme Bank" })
    .where("id", "=", owner.accountId)
    .execute();
  receiver = await startWebhookReceiver();
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "ferry-e2e-"));
  const big = randomBytes(50 * MB);
  bigFile = join(dir, "statement-50mb.bin");
  writeFileSync(bigFile, big);
  bigSha = sha(big);
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await receiver?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function sha(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

async function api(method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: method as "GET",
    url,
    headers: { ...owner.headers, ...headers },
    ...(payload !== undefined ? { payload: payload as string } : {}),
  });
}

async function createRequest(fields: Json): Promise<Json> {
  const res = await api("POST", "/v1/request/", fields);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function uploadOwnerMedia(requestId: number, name: string, bytes: Buffer): Promise<void> {
  const boundary = "----e2e";
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n${requestId}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}\r\n`),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="content_type"\r\n\r\napplication/octet-stream\r\n`,
    ),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await api("POST", "/v1/media/", body, {
    "content-type": `multipart/form-data; boundary=${boundary}`,
  });
  expect(res.statusCode, res.body).toBe(201);
}

/** The newest captured message to `to`, once the worker has delivered it. */
async function captured(to: string, after = 0): Promise<Json> {
  let found: Json | undefined;
  await eventually(async () => {
    const res = await api("GET", `/v1/sandbox/messages/?to=${encodeURIComponent(to)}`);
    found = (res.json().results as Json[]).find((m) => m.id > after);
    return !!found;
  });
  return found!;
}

async function newPage(): Promise<{
  context: BrowserContext;
  page: Page;
  dialogs: string[];
  errors: string[];
}> {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on("dialog", (d) => {
    // Leaving during an upload asks first (beforeunload): accepted, so reloads go ahead.
    if (d.type() === "beforeunload") {
      dialogs.push("beforeunload");
      void d.accept();
      return;
    }
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return { context, page, dialogs, errors };
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
}

describe("push: email link, two-factor by SMS, downloads", () => {
  const files = { "report.pdf": randomBytes(300_000), "photo.jpg": randomBytes(5 * MB + 17) };
  let req: Json;
  let link: string;
  let errors: string[];
  /** What the recipient saw, in order: the two-factor page, then the files page and its downloads. */
  const seen = {
    tfaHeading: "",
    maskedNumber: "",
    tfaViolations: [] as AxeViolation[],
    requesterName: "",
    filesViolations: [] as AxeViolation[],
    downloads: [] as { name: string; suggested: string; sha: string }[],
  };

  beforeAll(async () => {
    req = await createRequest({
      type: "push",
      is_draft: true,
      message: "Here are your documents.",
      tfa_send_to: "sms",
      tfa_send_to_value: "+15555554567",
      contact: [
        {
          first_name: "Jane",
          last_name: "Doe",
          contactmethod: [{ interface_class: "email", value: "jane@example.com" }],
        },
      ],
    });
    for (const [name, bytes] of Object.entries(files)) await uploadOwnerMedia(req.id, name, bytes);
    expect((await api("PATCH", `/v1/request/${req.id}/`, { is_draft: false })).statusCode).toBe(200);
    const sent = await api("POST", `/v1/request/${req.id}/send_notification/`, "", {
      "content-type": "application/json",
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const email = await captured("jane@example.com");
    link = (email.links as string[]).find((l) => l.includes("/r/"))!;

    const opened = await newPage();
    const { page } = opened;
    errors = opened.errors;
    await page.goto(link);
    seen.tfaHeading = (await page.locator("h1").textContent()) ?? "";
    seen.maskedNumber = (await page.locator("strong").first().textContent()) ?? "";
    seen.tfaViolations = await axeViolations(page);
    await screenshot(page, "recipient-two-factor");
    await page.getByRole("button", { name: "Send code" }).click();
    await page.getByText("We sent a 6-digit code to +1******4567").waitFor();
    const sms = await captured("+15555554567");
    const code = /(\d{6})/.exec(sms.text as string)![1]!;
    await page.getByLabel("6-digit code").fill(code);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("heading", { name: "Files (2)" }).waitFor();
    seen.requesterName = (await page.locator(".fy-requester-name").last().textContent()) ?? "";
    seen.filesViolations = await axeViolations(page);
    await screenshot(page, "recipient-push");
    for (const name of Object.keys(files)) {
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name: `Download ${name}` }).click(),
      ]);
      const sha256 = sha(readFileSync((await download.path())!));
      seen.downloads.push({ name, suggested: download.suggestedFilename(), sha: sha256 });
    }
    await opened.context.close();
  }, 120_000);

  /** The account's download (ABB-0010) and files-page (ABB-0020) audit codes. */
  const fileAuditCodes = async () =>
    (
      await t.ferry.database.db
        .selectFrom("audit_entries")
        .select(["code"])
        .where("account_id", "=", owner.accountId)
        .where("code", "in", ["ABB-0010", "ABB-0020"])
        .execute()
    ).map((a) => a.code);

  it("emails a link to the request's page", () => {
    expect(link).toBe(`${base}/r/${req.identifier}/`);
  });

  it("asks for the code first, showing the masked phone number", () => {
    expect(seen.tfaHeading).toBe("Verify it's you");
    expect(seen.maskedNumber).toBe("+1******4567");
  });

  it("opens the files page, named for the account, with the code from the captured SMS", () => {
    expect(seen.requesterName).toBe("Acme Bank");
  });

  it("passes the accessibility checks on the two-factor and files pages", () => {
    expect(seen.tfaViolations).toEqual([]);
    expect(seen.filesViolations).toEqual([]);
  });

  it("delivers both files byte for byte under their names", () => {
    expect(seen.downloads).toEqual(
      Object.entries(files).map(([name, bytes]) => ({ name, suggested: name, sha: sha(bytes) })),
    );
  });

  it("records each download (ABB-0010) once its transfer has ended", async () => {
    // The media service settles after the response, so the entries may land a little later.
    await eventually(async () => (await fileAuditCodes()).filter((c) => c === "ABB-0010").length === 2);
    expect((await fileAuditCodes()).filter((c) => c === "ABB-0010").length).toBe(2);
  });

  it("records that the files page was shown (ABB-0020)", async () => {
    const shown = await t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code"])
      .where("code", "=", "ABB-0020")
      .where("related_model", "=", "request")
      .where("relation_key", "=", String(req.id))
      .execute();
    expect(shown.length).toBeGreaterThan(0);
    expect(await fileAuditCodes()).toContain("ABB-0020");
  });

  it("raises no CSP violation or script error", () => {
    expect(errors).toEqual([]);
  });
});

describe("pull: three files through a network cut, reply, submit, callback, download once", () => {
  const small = { "id-card.txt": Buffer.from("front and back\n"), "letter.txt": randomBytes(9000) };
  let req: Json;
  let errors: string[];
  /** Chunk numbers of the 50 MB file the server accepted, in order. */
  const succeeded: number[] = [];
  let sawCut = false;
  const violations: Record<"before" | "during" | "completed", AxeViolation[]> = {
    before: [],
    during: [],
    completed: [],
  };
  let complete: ReceivedWebhook;
  /** The owner's downloads of each stored file: the bytes, the state after, a second try. */
  const downloads: { name: string; sha: string; after: Json; secondStatus: number }[] = [];

  beforeAll(async () => {
    req = await createRequest({
      type: "pull",
      message: "Please upload your statements.",
      callback_url: `${receiver.url}/hook?order=9`,
    });
    for (const [name, bytes] of Object.entries(small)) writeFileSync(join(dir, name), bytes);

    const opened = await newPage();
    const { page } = opened;
    errors = opened.errors;
    let cut = false;
    await page.route("**/uploads**", async (route) => {
      if (cut && route.request().method() !== "GET") {
        sawCut = true;
        return route.abort("internetdisconnected");
      }
      if (cut) return route.abort("internetdisconnected");
      // Slow the uploads a little so the cut lands mid-file.
      await new Promise((r) => setTimeout(r, 60));
      return route.continue();
    });
    page.on("requestfinished", async (request) => {
      const info = uploadChunkOf(request);
      const response = await request.response();
      if (info && response && response.status() < 300) {
        const body = (await response.json()) as Json;
        if (body.name === "statement-50mb.bin") succeeded.push(info.chunk);
      }
    });
    await page.goto(`${base}/r/${req.identifier}/`);
    violations.before = await axeViolations(page);
    await page.setInputFiles("#file-input", [bigFile, join(dir, "id-card.txt"), join(dir, "letter.txt")]);
    await eventually(() => succeeded.length >= 3, 60_000);
    cut = true;
    await page.locator('#upload-list li[data-state="retrying"]').waitFor({ timeout: 30_000 });
    await screenshot(page, "recipient-pull-in-progress");
    violations.during = await axeViolations(page);
    cut = false;
    await page.getByText("All uploads are complete. You can now submit.").waitFor({ timeout: 120_000 });

    await page.getByLabel("Message to the requester (optional)").fill("All three files, as asked.");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: "Thank you, your files were sent" }).waitFor();
    violations.completed = await axeViolations(page);
    await screenshot(page, "recipient-completed");
    await opened.context.close();

    const hooks = await receiver.waitFor(1, 30_000);
    complete = hooks.find((h) => (h.json as Json)?.type === "request_complete")!;

    const media = (await api("GET", `/v1/media/?request=${req.id}`)).json().results as Json[];
    for (const m of media) {
      const first = await api("GET", `/v1/media/${m.id}/download`);
      expect(first.statusCode).toBe(200);
      const after = (await api("GET", `/v1/media/${m.id}/`)).json();
      const second = await api("GET", `/v1/media/${m.id}/download`);
      downloads.push({
        name: m.name,
        sha: sha(first.rawPayload),
        after,
        secondStatus: second.statusCode,
      });
    }
  }, 240_000);

  it("passes the accessibility checks before, during and after the uploads", () => {
    expect(violations).toEqual({ before: [], during: [], completed: [] });
  });

  it("sends every chunk of the 50 MB file exactly once across a network cut", () => {
    expect(sawCut).toBe(true);
    expect([...succeeded].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it("calls request_complete with the recipient's reply once Submit is pressed", () => {
    expect(complete.url).toBe("/hook?order=9");
    expect((complete.json as Json).request).toMatchObject({
      id: req.id,
      complete: true,
      receiver_message: "All three files, as asked.",
    });
  });

  it("stores the three files under their names", () => {
    expect(downloads.map((d) => d.name).sort()).toEqual(["id-card.txt", "letter.txt", "statement-50mb.bin"]);
  });

  it("gives the owner each file byte for byte", () => {
    for (const d of downloads)
      expect(d.sha).toBe(d.name === "statement-50mb.bin" ? bigSha : sha(small[d.name as keyof typeof small]));
  });

  it("counts each file's download as soon as it completed, then answers 410", () => {
    // No window where a retry sees 409: the completed transfer was counted before its last bytes
    // left. The file itself is kept for the grace period in which the owner may resume with Range.
    for (const d of downloads) {
      expect(d.after).toMatchObject({ state: "available", times_downloaded: 1 });
      expect(d.secondStatus).toBe(410);
    }
  });

  it("raises no CSP violation or script error", () => {
    expect(errors).toEqual([]);
  });

  it("pauses, resumes, and continues a 50 MB upload after a page reload from what the server holds", {
    timeout: 240_000,
  }, async () => {
    const req = await createRequest({ type: "pull" });
    const { context, page, dialogs } = await newPage();
    const before: number[] = [];
    const after: { method: string; chunk: number; heard: number }[] = [];
    let reloaded = false;
    await page.route("**/uploads**", async (route) => {
      await new Promise((r) => setTimeout(r, 60));
      return route.continue();
    });
    // A chunk is the reloaded page's when its request was sent after the reload began: one sent by
    // the old page may finish (and be stored) after that.
    // What the server tells the reloaded page it holds: its lists of uploads and its answers to
    // chunks, numbered in the order the page heard them. A chunk in flight during the reload may be
    // stored after the page's first list, so the page may hear of it only later.
    let reloadDone = false;
    const told: { at: number; chunks: Promise<number[]> }[] = [];
    const sentAfterReload = new WeakMap<object, number>(); // a request → how many answers preceded it
    page.on("request", (request) => {
      if (reloaded) sentAfterReload.set(request, told.length);
    });
    page.on("response", (response) => {
      const isList = response.request().method() === "GET" && response.url().endsWith("/uploads");
      const isChunk = uploadChunkOf(response.request()) !== undefined && response.status() < 300;
      if (!reloadDone || (!isList && !isChunk)) return;
      const chunks = response.json().then((body: Json) => {
        const upload = isList ? (body.files as Json[]).find((f) => f.name === "statement-50mb.bin") : body;
        return (upload?.received_chunks ?? []) as number[];
      });
      told.push({ at: told.length + 1, chunks });
    });
    page.on("requestfinished", async (request) => {
      const info = uploadChunkOf(request);
      if (!info || ((await request.response())?.status() ?? 500) >= 300) return;
      const heard = sentAfterReload.get(request);
      if (heard !== undefined) after.push({ ...info, heard });
      else before.push(info.chunk);
    });
    await page.goto(`${base}/r/${req.identifier}/`);
    await page.setInputFiles("#file-input", bigFile);
    await eventually(() => before.length >= 2, 60_000);
    // Pause stops the upload where it is; Resume continues from the server's state.
    await page.getByRole("button", { name: "Pause" }).click();
    await page.locator('#upload-list li[data-state="paused"]').waitFor();
    expect(await page.locator("#upload-status").textContent()).toBe("Uploads paused.");
    await page.getByRole("button", { name: "Resume" }).click();
    // While it runs, the overall line tells the speed and the time left.
    await page
      .locator("#overall-text")
      .filter({ hasText: /B\/s · about \d+ (seconds?|minutes?|hours?) left$/ })
      .waitFor();
    await eventually(() => before.length >= 4, 60_000);
    reloaded = true;
    await page.reload();
    // Leaving during an upload asked first.
    expect(dialogs).toEqual(["beforeunload"]);
    reloadDone = true;
    await page.setInputFiles("#file-input", bigFile);
    await page.getByText("All uploads are complete. You can now submit.").waitFor({ timeout: 120_000 });
    const heard = await Promise.all(told.map(async ({ at, chunks }) => ({ at, chunks: await chunks })));
    /** The chunks the server had told the reloaded page it holds in its first `n` answers. */
    const heldAfter = (n: number) => new Set(heard.filter((h) => h.at <= n).flatMap((h) => h.chunks));
    // Every chunk the old page saw stored was in the reloaded page's first list.
    expect(heard.length).toBeGreaterThan(0);
    expect(before.filter((c) => !heldAfter(1).has(c))).toEqual([]);
    // No new upload was started, and no chunk was sent again once the server had said it held it.
    expect(after.every((a) => a.method === "PUT")).toBe(true);
    expect(after.filter((a) => heldAfter(a.heard).has(a.chunk))).toEqual([]);
    const stored = new Set([...heldAfter(heard.length), ...after.map((a) => a.chunk)]);
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    await context.close();
    const media = (await api("GET", `/v1/media/?request=${req.id}`)).json().results as Json[];
    expect(media.length).toBe(1);
    expect(sha((await api("GET", `/v1/media/${media[0]!.id}/download`)).rawPayload)).toBe(bigSha);
  });
});

describe("keyboard, escaping and states", () => {
  it("completes a pull with the keyboard only", async () => {
    const req = await createRequest({ type: "pull", message: "Keyboard test" });
    const { context, page } = await newPage();
    // Listen before any key press: file chooser interception must be on when Enter opens it.
    const chooserOpened = page.waitForEvent("filechooser");
    await page.goto(`${base}/r/${req.identifier}/`);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    let reached = false;
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement?.id === "file-input");
    }
    expect(reached).toBe(true);
    writeFileSync(join(dir, "notes.txt"), "typed by keyboard\n");
    await page.keyboard.press("Enter");
    const chooser = await chooserOpened;
    await chooser.setFiles(join(dir, "notes.txt"));
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    let onMessage = false;
    for (let i = 0; i < 10 && !onMessage; i++) {
      await page.keyboard.press("Tab");
      onMessage = await page.evaluate(() => document.activeElement?.id === "receiver-message");
    }
    expect(onMessage).toBe(true);
    await page.keyboard.type("Sent with the keyboard.");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("submit-button");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Thank you, your files were sent" }).waitFor();
    await context.close();
    expect((await api("GET", `/v1/request/${req.id}/`)).json()).toMatchObject({
      complete: true,
      receiver_message: "Sent with the keyboard.",
    });
  });

  it("takes dropped files and refuses a type the request does not allow before uploading it", async () => {
    const req = await createRequest({ type: "pull", allowed_extensions: ["pdf"] });
    const { context, page } = await newPage();
    const posts: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/uploads")) posts.push(r.url());
    });
    await page.goto(`${base}/r/${req.identifier}/`);
    const drop = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(["not allowed"], "notes.txt", { type: "text/plain" }));
      dt.items.add(new File(["%PDF-1.4 tiny"], "scan.pdf", { type: "application/pdf" }));
      return dt;
    });
    await page.dispatchEvent("#dropzone", "drop", { dataTransfer: drop });
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    expect(await page.locator('#upload-list li[data-state="error"]').textContent()).toContain(
      "notes.txt is not accepted: allowed types are pdf.",
    );
    expect(await page.locator("#received-list .fy-file-name").allTextContents()).toEqual(["scan.pdf"]);
    expect(posts.length).toBe(1);
    await context.close();
  });

  it("renders HTML and script in the message, requester name and file names as text", async () => {
    const evil = `<img src=x onerror=alert(1)><script>alert(2)</script>`;
    // File names lose path separators when stored, so this one carries no "/".
    const fileEvil = `<img src=x onerror=alert(1)><b onclick=alert(3)>`;
    const requester = await api("POST", "/v1/requester/", {
      first_name: evil,
      last_name: "X",
      email: "x@example.com",
      role: evil,
    });
    const req = await createRequest({ type: "pull", message: evil, requester: { id: requester.json().id } });
    await t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${req.id}/complete/`,
      headers: owner.headers,
      payload: { receiver_message: evil, files: [{ name: `${fileEvil}.txt`, content: "x" }] },
    });
    const push = await createRequest({ type: "pull", message: evil, requester: { id: requester.json().id } });
    const { context, page, dialogs, errors } = await newPage();
    await page.goto(`${base}/r/${push.identifier}/`);
    expect(await page.locator(".fy-message").textContent()).toBe(evil);
    expect(await page.locator(".fy-requester-name").last().textContent()).toBe(`${evil} X`);
    await page.goto(`${base}/r/${req.identifier}/`);
    expect(await page.locator(".fy-file-name").first().textContent()).toBe(`${fileEvil}.txt`);
    expect(dialogs).toEqual([]);
    expect(await page.locator("img[src=x]").count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows accessible 404 and expired pages", async () => {
    const req = await createRequest({ type: "push" });
    await api("POST", `/v1/sandbox/request/${req.id}/expire/`);
    const { context, page } = await newPage();
    const expired = await page.goto(`${base}/r/${req.identifier}/`);
    expect(expired?.status()).toBe(410);
    await page.getByRole("heading", { name: "This request has expired" }).waitFor();
    await expectAccessible(page);
    await screenshot(page, "recipient-expired");
    const missing = await page.goto(`${base}/r/no-such-link-0000000000/`);
    expect(missing?.status()).toBe(404);
    await page.getByRole("heading", { name: "This link is not valid" }).waitFor();
    await expectAccessible(page);
    await screenshot(page, "recipient-404");
    await context.close();
  });
});
