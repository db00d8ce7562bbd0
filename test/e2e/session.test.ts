/**
 * A container session in Debian's Chromium: a P2 container with chat, a pull and a push for two
 * recipients with different permissions, the auth code by SMS from the sandbox outbox, an upload
 * through a network cut, a reply, Submit, the callbacks at a real receiver, and the owner's download
 * of the pulled file; the same at a phone viewport, with the keyboard only, axe-clean in every state;
 * the chat going on after the features complete, closed by the sender, and refusing too many
 * replies in a row (screenshots under test-results/).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromBuffer } from "yauzl";
import { buildWorker } from "../../src/app/build-worker.js";
import type { Worker } from "../../src/jobs/worker.js";
import { type ApiCall, apiCaller, expectJson, type Json } from "../helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  renewToken,
  type TestAccount,
  type TestApp,
} from "../helpers/app.js";
import { type AxeViolation, axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { addRecipient, buildContainer, pushFile, sendContainer, sessionOf } from "../helpers/containers.js";
import { eventually, freePort } from "../helpers/process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const CHUNK = 256 * 1024;
const EVIL = `<img src=x onerror=alert(1)><script>alert(2)</script>`;
let t: TestApp;
let owner: TestAccount;
let call: ApiCall;
let worker: Worker;
let browser: Browser;
let receiver: WebhookReceiver;
let base: string;
let dir: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({
    PUBLIC_BASE_URL: base,
    FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
    JOB_POLL_INTERVAL_MS: "50",
    MAX_CHUNK_BYTES: String(CHUNK),
    // Low enough for the too-many-replies case; every other case sends one reply per link.
    SESSION_CHAT_REPLIES_PER_LINK: "3",
  });
  await t.app.listen({ port, host: "127.0.0.1" });
  worker = await buildWorker(t.ferry);
  await worker.start();
  owner = await createTestAccount(t);
  call = apiCaller(t, owner);
  await t.ferry.database.db
    .updateTable("accounts")
    .set({ name: "Acme Bank" })
    .where("id", "=", owner.accountId)
    .execute();
  receiver = await startWebhookReceiver();
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "ferry-session-"));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await receiver?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** The newest captured message to `to` after message id `after`, once the worker delivered it. */
async function captured(to: string, after = 0): Promise<Json> {
  let found: Json | undefined;
  await eventually(async () => {
    const res = await call("GET", `/v1/sandbox/messages/?to=${encodeURIComponent(to)}`);
    found = (res.json().results as Json[]).find((m) => m.id > after);
    return !!found;
  });
  return found!;
}

async function newPage(options: Parameters<Browser["newContext"]>[0] = {}) {
  const context: BrowserContext = await browser.newContext({ acceptDownloads: true, ...options });
  const page: Page = await context.newPage();
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return { context, page, dialogs, errors };
}

/** Passes the code step: sends a code to `phone`, reads it from the outbox, enters it. */
async function passCode(page: Page, phone: string): Promise<void> {
  const before =
    ((await call("GET", `/v1/sandbox/messages/?to=${encodeURIComponent(phone)}`)).json().results as Json[])[0]
      ?.id ?? 0;
  await page.getByRole("button", { name: "Send code" }).click();
  await page.getByText("We sent a 6-digit code").waitFor();
  const sms = await captured(phone, before);
  await page.getByLabel("6-digit code").fill(/(\d{6})/.exec(sms.text as string)![1]!);
  await page.getByRole("button", { name: "Verify" }).click();
}

function unzip(zip: Buffer): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err);
      const out = new Map<string, string>();
      file.on("entry", (entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const pieces: Buffer[] = [];
          stream.on("data", (p: Buffer) => pieces.push(p));
          stream.on("end", () => {
            out.set(entry.fileName, sha(Buffer.concat(pieces)));
            file.readEntry();
          });
        });
      });
      file.on("end", () => resolve(out));
      file.readEntry();
    });
  });
}

describe("a P2 session: code by SMS, chat, push, pull through a network cut, submit", () => {
  const ANA_PHONE = "+15555557001";
  const pushed = { "contract.pdf": randomBytes(120_000), "annex.pdf": randomBytes(40_000) };
  const upload = randomBytes(CHUNK * 5 + 1234);
  let c: Json;
  let pull: Json;
  let push: Json;
  let ana: { id: number; itemId: number };
  let ben: { id: number; itemId: number };
  let anaLink: string;
  let benLink: string;
  const violations: Record<string, AxeViolation[]> = {};
  const seen = {
    anaFeatures: [] as string[],
    benFeatures: [] as string[],
    chatAfterOwnerMessage: [] as string[],
    download: "",
    zip: new Map<string, string>(),
    sawCut: false,
    notice: "",
    dialogs: [] as string[],
    errors: [] as string[],
  };
  let pulledSha = "";
  let hooks: Json[] = [];

  beforeAll(async () => {
    c = await buildContainer(call, { display_chat: true, callback_url: `${receiver.url}/hooks?container=1` });
    ana = await addRecipient(call, c.id, { first_name: "Ana", last_name: "Silva" });
    ben = await addRecipient(call, c.id, { first_name: "Ben", last_name: EVIL });
    // Ana gets an SMS, Ben an email; both need the code sent to Ana's phone (the container's one destination).
    const anaItem = expectJson(
      await call("POST", `/v1/module_container/recipient/${ana.id}/recipient_item/`, {
        interface_class: "sms",
        value: ANA_PHONE,
      }),
      201,
    );
    const benItem = expectJson(
      await call("POST", `/v1/module_container/recipient/${ben.id}/recipient_item/`, {
        interface_class: "email",
        value: "ben@example.com",
      }),
      201,
    );
    expectJson(
      await call("POST", `/v1/module_container/container/${c.id}/email/`, {
        subject: "Your lease documents",
        body: `Hello,\nplease sign and send back the lease. ${EVIL}`,
      }),
      201,
    );
    expectJson(
      await call("POST", `/v1/module_container/container/${c.id}/auth_code/`, {
        send_as: "sms",
        to: ANA_PHONE,
      }),
      201,
    );
    pull = expectJson(
      await call("POST", "/v1/module_container_pull/pull/", {
        container: c.id,
        title: "Signed lease",
        description: `Every page, signed. ${EVIL}`,
        allowed_file_extensions: ["pdf", "bin"],
        recipient_permissions: [ana.id],
      }),
      201,
    );
    push = expectJson(
      await call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Lease to sign" }),
      201,
    );
    for (const [name, bytes] of Object.entries(pushed)) await pushFile(call, push.id, name, bytes);
    expectJson(
      await call("POST", "/v1/module_container/message/", { container: c.id, body: `Welcome ${EVIL}` }),
      201,
    );
    await sendContainer(call, c.id);
    anaLink = ((await captured(ANA_PHONE)).links as string[]).find((l) => l.includes("/s/"))!;
    benLink = ((await captured("ben@example.com")).links as string[]).find((l) => l.includes("/s/"))!;
    expect(anaItem.id).not.toBe(benItem.id);

    const { context, page, dialogs, errors } = await newPage();
    await page.goto(anaLink);
    await page.getByRole("heading", { name: "Verify it's you" }).waitFor();
    violations.code = await axeViolations(page);
    await screenshot(page, "session-code");
    await passCode(page, ANA_PHONE);
    await page.getByRole("heading", { name: "Your lease documents" }).waitFor();
    violations.session = await axeViolations(page);
    await screenshot(page, "session-open");
    seen.anaFeatures = await page.locator(".fy-feature h2").allTextContents();

    // Chat: a reply from the page, then an owner message that appears without a reload.
    await page.getByLabel("Your reply").fill("I will sign tonight.");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".fy-chat-reply").getByText("I will sign tonight.").waitFor();
    expectJson(
      await call("POST", "/v1/module_container/message/", { container: c.id, body: "Thanks, Ana!" }),
      201,
    );
    await page.locator(".fy-chat-message").getByText("Thanks, Ana!").waitFor({ timeout: 20_000 });
    seen.chatAfterOwnerMessage = await page.locator("#chat-log .fy-message").allTextContents();

    // Push: one file, then all of them as a zip.
    const [one] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download contract.pdf" }).click(),
    ]);
    seen.download = sha(readFileSync((await one.path())!));
    const [all] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: /Download all 2 files/ }).click(),
    ]);
    seen.zip = await unzip(readFileSync((await all.path())!));

    // Pull: an upload through a network cut.
    const file = join(dir, "lease-signed.bin");
    writeFileSync(file, upload);
    let cut = false;
    let sent = 0;
    await page.route("**/uploads**", async (route) => {
      if (cut) {
        if (route.request().method() !== "GET") seen.sawCut = true;
        return route.abort("internetdisconnected");
      }
      await new Promise((r) => setTimeout(r, 60));
      if (route.request().method() !== "GET") sent += 1;
      return route.continue();
    });
    await page.setInputFiles(`#file-input-${pull.id}`, file);
    await eventually(() => sent >= 2, 30_000);
    cut = true;
    await page
      .locator(`#feature-${pull.id} [data-role=upload-list] li[data-state="retrying"]`)
      .waitFor({ timeout: 30_000 });
    violations.uploading = await axeViolations(page);
    await screenshot(page, "session-upload-cut");
    cut = false;
    await page.getByText("All uploads are complete. You can now submit.").waitFor({ timeout: 60_000 });
    await page.getByLabel("Message to the sender (optional)").fill("Signed, every page.");
    await page.getByRole("button", { name: "Submit", exact: true }).click();
    await page.locator("#session-notice").waitFor();
    seen.notice = (await page.locator("#session-notice").textContent()) ?? "";
    violations.submitted = await axeViolations(page);
    await screenshot(page, "session-submitted");
    seen.dialogs = dialogs;
    seen.errors = errors;
    await context.close();

    // Ben: the same code step, and only the push.
    const other = await newPage();
    await other.page.goto(benLink);
    await passCode(other.page, ANA_PHONE);
    await other.page.getByRole("heading", { name: "Your lease documents" }).waitFor();
    seen.benFeatures = await other.page.locator(".fy-feature h2").allTextContents();
    violations.ben = await axeViolations(other.page);
    await screenshot(other.page, "session-second-recipient");
    await other.context.close();

    const media = expectJson(
      await call("GET", `/v1/module_container_pull/pull/${pull.id}/pull_file/`),
      200,
    ) as unknown as Json[];
    pulledSha = sha((await call("GET", `/v1/media/${media[0]!.id}/download`)).rawPayload);
    await eventually(async () => {
      hooks = receiver.received.map((r) => r.json as Json);
      const types = hooks.map((h) => h.type);
      return (
        types.includes("message_reply") &&
        types.filter((x) => x === "session_opened").length === 2 &&
        types.filter((x) => x === "feature").length >= 2
      );
    }, 30_000);
  }, 240_000);

  it("asks for the code and opens the session with the code from the captured SMS", () => {
    expect(seen.anaFeatures.length).toBe(2);
  });

  it("shows each recipient only the features they may see", () => {
    expect(seen.anaFeatures).toEqual(["Signed lease", "Lease to sign"]);
    expect(seen.benFeatures).toEqual(["Lease to sign"]);
  });

  it("shows the reply and the owner's new message in the chat, as text", () => {
    expect(seen.chatAfterOwnerMessage).toEqual([`Welcome ${EVIL}`, "I will sign tonight.", "Thanks, Ana!"]);
    expect(seen.dialogs).toEqual([]);
  });

  it("delivers the pushed files one by one and as one zip, byte for byte", () => {
    expect(seen.download).toBe(sha(pushed["contract.pdf"]));
    expect(Object.fromEntries(seen.zip)).toEqual({
      "contract.pdf": sha(pushed["contract.pdf"]),
      "annex.pdf": sha(pushed["annex.pdf"]),
    });
  });

  it("finishes the upload after the network cut and submits it", () => {
    expect(seen.sawCut).toBe(true);
    expect(seen.notice).toBe("Thank you, your files were sent.");
    expect(pulledSha).toBe(sha(upload));
  });

  it("sends session_opened, message_reply and feature callbacks to the receiver", () => {
    const opened = hooks.filter((h) => h.type === "session_opened").map((h) => h.recipient);
    expect(opened.sort()).toEqual([ana.id, ben.id].sort());
    expect(hooks.find((h) => h.type === "message_reply")).toMatchObject({
      message_reply: { recipient: ana.id, body: "I will sign tonight." },
    });
    const features = hooks.filter((h) => h.type === "feature").map((h) => [h.feature.id, h.feature.state]);
    expect(features).toContainEqual([pull.id, "complete"]);
    expect(features).toContainEqual([push.id, "complete"]);
  });

  it("passes the accessibility checks in every state", () => {
    expect(violations).toEqual({ code: [], session: [], uploading: [], submitted: [], ben: [] });
  });

  it("raises no CSP violation or script error", () => {
    expect(seen.errors).toEqual([]);
  });
});

describe("phone, keyboard and end states", () => {
  /** A sent P2 container with chat and one open pull, for one recipient with a link item. */
  async function simpleSession() {
    const c = await buildContainer(call, { display_chat: true });
    const r = await addRecipient(call, c.id, { first_name: "Kim" });
    const pull = expectJson(
      await call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Your ID" }),
      201,
    );
    const push = expectJson(
      await call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Welcome pack" }),
      201,
    );
    await pushFile(call, push.id, "welcome.pdf", randomBytes(2000));
    const tokens = await sendContainer(call, c.id);
    return { c, pull, link: `${base}${sessionOf(tokens, r).base}` };
  }

  it("fits a phone screen and passes the accessibility checks there", async () => {
    const { link } = await simpleSession();
    const { context, page, errors } = await newPage({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    await page.goto(link);
    await page.getByRole("heading", { name: "Your ID" }).waitFor();
    // Against the layout viewport set above (with isMobile, window.innerWidth grows with the page).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "session-phone");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("lets a recipient reply, upload and submit with the keyboard only", async () => {
    const { c, pull, link } = await simpleSession();
    const { context, page } = await newPage();
    const chooserOpened = page.waitForEvent("filechooser");
    await page.goto(link);
    const focusOn = async (id: string) => {
      for (let i = 0; i < 40; i++) {
        if (await page.evaluate((want) => document.activeElement?.id === want, id)) return true;
        await page.keyboard.press("Tab");
      }
      return false;
    };
    expect(await focusOn("chat-body")).toBe(true);
    await page.keyboard.type("Typed reply");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.locator(".fy-chat-reply").getByText("Typed reply").waitFor();
    expect(await focusOn(`file-input-${pull.id}`)).toBe(true);
    writeFileSync(join(dir, "id.pdf"), "%PDF-1.4 keyboard");
    await page.keyboard.press("Enter");
    await (await chooserOpened).setFiles(join(dir, "id.pdf"));
    await page.getByText("All uploads are complete. You can now submit.").waitFor();
    expect(await focusOn(`receiver-message-${pull.id}`)).toBe(true);
    await page.keyboard.type("By keyboard.");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.locator("#session-notice").waitFor();
    await context.close();
    const feature = expectJson(await call("GET", `/v1/module_container_pull/pull/${pull.id}/`), 200);
    expect(feature).toMatchObject({ state: "complete", receiver_message: "By keyboard." });
    const replies = expectJson(
      await call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}`),
      200,
    );
    expect(replies.results.map((r: Json) => r.body)).toEqual(["Typed reply"]);
  });

  it("shows accessible expired and not-found pages", async () => {
    const { link } = await simpleSession();
    t.clock.advance(73 * 3600_000);
    await t.ferry.containers.lifecycle.expireDueFeatures();
    const { context, page } = await newPage();
    const expired = await page.goto(link);
    expect(expired?.status()).toBe(410);
    await page.getByRole("heading", { name: "This session has expired" }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "session-expired");
    const missing = await page.goto(`${base}/s/no-such-session-000000000000/`);
    expect(missing?.status()).toBe(404);
    await page.getByRole("heading", { name: "This link is not valid" }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
  });
});

describe("the chat after completion, closed by the sender, and too many replies", () => {
  const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
  // The end states above moved the clock on past the token's life.
  beforeAll(() => renewToken(t, owner));

  /** A sent P2 container with chat and one pull for Kim (a link item). */
  async function chatSession() {
    const c = await buildContainer(call, { display_chat: true });
    const r = await addRecipient(call, c.id, { first_name: "Kim" });
    const pull = expectJson(
      await call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Your ID" }),
      201,
    );
    expectJson(
      await call("POST", "/v1/module_container/message/", { container: c.id, body: "Hello Kim" }),
      201,
    );
    const tokens = await sendContainer(call, c.id);
    return { c, pull, link: `${base}${sessionOf(tokens, r).base}` };
  }

  it("keeps the conversation after the features complete, then shows it read-only once the sender closes it", async () => {
    const { c, pull, link } = await chatSession();
    const { context, page, errors } = await newPage();
    await page.goto(link);
    await page.getByRole("heading", { name: "Your ID" }).waitFor();
    expectJson(await call("POST", `/v1/sandbox/feature/${pull.id}/complete/`, {}), 200);
    expect(expectJson(await call("GET", `/v1/module_container/container/${c.id}/`), 200).state).toBe(
      "complete",
    );
    // Complete, and the conversation goes on both ways.
    expectJson(
      await call("POST", "/v1/module_container/message/", { container: c.id, body: "Got it, thanks!" }),
      201,
    );
    await page.locator(".fy-chat-message").getByText("Got it, thanks!").waitFor({ timeout: 20_000 });
    await page.getByLabel("Your reply").fill("You are welcome.");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".fy-chat-reply").getByText("You are welcome.").waitFor();

    // The sender closes the chat: the open page hides the reply box and says why, keeping the transcript.
    expectJson(await call("POST", `/v1/module_container/container/${c.id}/close_chat/`), 200);
    await page
      .getByText("The sender closed this conversation. You can still read it here.")
      .waitFor({ timeout: 20_000 });
    expect(await page.locator("#chat-form").isHidden()).toBe(true);
    expect(await page.locator("#chat-log .fy-message").allTextContents()).toEqual([
      "Hello Kim",
      "Got it, thanks!",
      "You are welcome.",
    ]);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "session-chat-closed");
    expect(errors).toEqual([]);
    await context.close();

    // A later visit shows it closed from the start, on a phone too.
    const phone = await newPage(PHONE);
    await phone.page.goto(link);
    await phone.page.getByText("The sender closed this conversation. You can still read it here.").waitFor();
    expect(await phone.page.getByLabel("Your reply").count()).toBe(0);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      PHONE.viewport.width,
    );
    expect(await axeViolations(phone.page)).toEqual([]);
    await screenshot(phone.page, "session-chat-closed-phone");
    expect(phone.errors).toEqual([]);
    await phone.context.close();
  });

  it("tells the recipient to wait after too many replies, keeping the typed reply", async () => {
    for (const [options, name] of [
      [{}, "session-chat-too-fast"],
      [PHONE, "session-chat-too-fast-phone"],
    ] as const) {
      const { c, link } = await chatSession();
      const { context, page, errors } = await newPage(options);
      await page.goto(link);
      for (let i = 1; i <= 3; i++) {
        await page.getByLabel("Your reply").fill(`Reply ${i}`);
        await page.getByRole("button", { name: "Send" }).click();
        await page.locator(".fy-chat-reply").getByText(`Reply ${i}`, { exact: true }).waitFor();
      }
      await page.getByLabel("Your reply").fill("One more thing");
      await page.getByRole("button", { name: "Send" }).click();
      await page
        .getByText(/^You are sending replies too quickly\. Wait \d+ seconds?, then send it again\.$/)
        .waitFor();
      expect(await page.getByLabel("Your reply").inputValue()).toBe("One more thing");
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, name);
      expect(errors).toEqual([]);
      await context.close();
      const replies = expectJson(
        await call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}`),
        200,
      );
      expect(replies.results.map((r: Json) => r.body)).toEqual(["Reply 1", "Reply 2", "Reply 3"]);
    }
  });
});
