/**
 * The owner's dashboard pages in Debian's Chromium: the sandbox outbox, the audit log, requests
 * and containers with their deliveries, templates and branding. Every page is axe-clean, free of
 * CSP refusals and script errors, and saved as a screenshot under test-results/.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorker } from "../../src/app/build-worker.js";
import type { Worker } from "../../src/jobs/worker.js";
import { apiCaller, expectJson } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { addRecipient, buildContainer } from "../helpers/containers.js";
import { createDashboardUser, type DashboardUser, signInPage } from "../helpers/dashboard.js";
import { buildRequest, completeRequest, inlineContact } from "../helpers/factories.js";
import { eventually, freePort } from "../helpers/process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

let t: TestApp;
let owner: TestAccount;
let user: DashboardUser;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let base: string;
let worker: Worker;
let receiver: WebhookReceiver;
const problems: string[] = [];

const XSS = `<img src=x onerror="alert(1)">`;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({
    PUBLIC_BASE_URL: base,
    FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
    CALLBACK_RETRY_SCHEDULE_SECONDS: "1",
    JOB_POLL_INTERVAL_MS: "20",
  });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  receiver = await startWebhookReceiver();
  worker = await buildWorker(t.ferry);
  await worker.start();
  user = await createDashboardUser(t, { accountId: owner.accountId });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) problems.push(m.text());
  });
  await signInPage(t, page, base, user);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop(1000);
  await receiver?.close();
  await t?.close();
});

/** Checks the current page: axe-clean, no script errors or CSP refusals; saves a screenshot. */
async function checkPage(name: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  expect(problems, name).toEqual([]);
  await screenshot(page, `dashboard-${name}`);
}

describe("outbox", () => {
  it("reads a captured email as the recipient sees it, and an SMS with its links", async () => {
    const outbox = t.ferry.notifications.outbox;
    await outbox.capture({
      accountId: owner.accountId,
      channel: "sms",
      to: "+14155550100",
      from: "Ferry",
      subject: "",
      text: "Acme asks for your documents: https://ferry.test/r/sms1/",
      html: null,
      links: ["https://ferry.test/r/sms1/"],
      notificationId: null,
    });
    const emailId = await outbox.capture({
      accountId: owner.accountId,
      channel: "email",
      to: "jane@example.com",
      from: "ferry@example.com",
      subject: `Documents for ${XSS}`,
      text: "Please upload: https://ferry.test/r/mail1/",
      html: `<html><body style="font-family:sans-serif"><h1 id="greeting" style="color:rgb(10, 120, 40)">Hello Jane</h1><p><a href="https://ferry.test/r/mail1/">Upload your documents</a></p><script>document.getElementById("greeting").textContent="scripted"</script></body></html>`,
      links: ["https://ferry.test/r/mail1/"],
      notificationId: null,
    });
    await page.goto(`${base}/dashboard/outbox`);
    await checkPage("outbox");
    await page.getByRole("link", { name: `Documents for ${XSS}` }).click();
    await page.waitForURL(`${base}/dashboard/outbox/${emailId}`);
    await expect.poll(() => page.locator("#message-subject").textContent()).toBe(`Documents for ${XSS}`);
    const frame = page.frameLocator("iframe.fd-email-frame");
    // The email's own styles apply; its script does not run.
    await expect.poll(() => frame.locator("#greeting").textContent()).toBe("Hello Jane");
    expect(await frame.locator("#greeting").evaluate((el) => getComputedStyle(el).color)).toBe(
      "rgb(10, 120, 40)",
    );
    expect(await page.getByRole("link", { name: "https://ferry.test/r/mail1/" }).count()).toBe(1);
    await checkPage("outbox-email");

    await page.goto(`${base}/dashboard/outbox?channel=sms`);
    await page.getByRole("link", { name: /Acme asks for your documents/ }).click();
    await expect
      .poll(() => page.locator("#message-text").textContent())
      .toContain("https://ferry.test/r/sms1/");
    await checkPage("outbox-sms");
  });
});

describe("audit log", () => {
  it("searches the log with the form and shows the chain verification", async () => {
    await page.goto(`${base}/dashboard/audit`);
    await checkPage("audit");
    await page.getByLabel("Code", { exact: true }).fill("AAA-0001");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/code=AAA-0001/);
    const codes = await page.locator("tbody td:nth-child(2)").allTextContents();
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes)).toEqual(new Set(["AAA-0001"]));
    await checkPage("audit-search");
    await page.getByRole("link", { name: "Audit", exact: true }).click();
    await page.getByRole("link", { name: "Verify the hash chain" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("The chain verifies");
    await checkPage("audit-verify");
  });
});

describe("requests and containers", () => {
  it("shows a failed callback, redelivers it with the button and shows every attempt", async () => {
    const call = apiCaller(t, owner);
    receiver.answerNext(500, 500);
    const created = await buildRequest(t, owner, {
      message: `Passport please ${XSS}`,
      callback_url: `${receiver.url}/hook`,
      contact: [
        inlineContact([["email", "zed@example.com"]], { first_name: `Zed ${XSS}`, last_name: "Quill" }),
      ],
    });
    await buildRequest(t, owner, { type: "push", message: "Your contract", is_draft: true, contact: [] });
    await completeRequest(t, owner, created.id, "Here you go");
    await receiver.waitFor(1);
    await eventually(async () => {
      const page = await t.ferry.callbacks.listDeliveries(owner.accountId, { request: String(created.id) });
      return page.results[0]?.tries === 1 && page.results[0].next_attempt_at !== null;
    });
    t.clock.advance(2000);
    await receiver.waitFor(2);

    await page.goto(`${base}/dashboard/requests`);
    await checkPage("requests");
    await page.getByLabel("Contact (name, email or phone)").fill("quill");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/contact=quill/);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await checkPage("requests-filtered");
    await page.locator(`a[href="/dashboard/requests/${created.id}"]`).click();
    await page.waitForURL(`${base}/dashboard/requests/${created.id}`);
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator("#callbacks-heading + p + article h3").textContent();
      })
      .toContain("Failed");
    expect(await page.locator(".fd-contact-name").first().textContent()).toBe(`Zed ${XSS} Quill`);
    await checkPage("request-failed-callback");

    await page.getByRole("button", { name: /^Redeliver/ }).click();
    await page.waitForURL(/notice=redelivered-/);
    await receiver.waitFor(3);
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator("article .fd-badge").first().textContent();
      })
      .toBe("Delivered");
    const attempts = await page.locator(".fd-attempts li").allTextContents();
    expect(attempts).toHaveLength(3);
    expect(attempts[2]).toContain("redelivery · success · HTTP 200");
    await checkPage("request-redelivered");

    const container = await buildContainer(call, { page_type: "p2" });
    const recipient = await addRecipient(call, container.id, { first_name: "Ann", last_name: "Berg" });
    expectJson(
      await call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
        interface_class: "email",
        value: "ann.berg@example.com",
      }),
      201,
    );
    await page.goto(`${base}/dashboard/containers`);
    await checkPage("containers");
    await page.locator(`a[href="/dashboard/containers/${container.id}"]`).click();
    await page.waitForURL(`${base}/dashboard/containers/${container.id}`);
    await checkPage("container");
  });

  it("reveals the callback secret and saves the payload shape", async () => {
    await page.goto(`${base}/dashboard/callbacks`);
    await checkPage("callbacks");
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await expect.poll(() => page.locator("#callback-secret").textContent()).toMatch(/^whsec_/);
    await checkPage("callbacks-revealed");
    await page.goto(`${base}/dashboard/callbacks`);
    await page.getByLabel(/^Flat/).check();
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForURL(/notice=saved/);
    expect(await page.getByLabel(/^Flat/).isChecked()).toBe(true);
  });
});

describe("email templates", () => {
  it("edits a template with a syntax error, sees it at its line, then fixes it", async () => {
    const broken = `<html><body style="font-family:sans-serif">
<p id="hello" style="color:rgb(20, 60, 160)">Hello {{ contact.first_name }}</p>
{% if request.message %}
<p>{{ request.message }}</p>
</body></html>`;
    await page.goto(`${base}/dashboard/templates`);
    await checkPage("templates-empty");
    await page.getByRole("link", { name: "New template" }).click();
    await page.waitForURL(`${base}/dashboard/templates/new`);
    await page.getByLabel("Slug").fill("welcome");
    await page.getByLabel("Subject").fill(`Files for {{ contact.first_name }} ${XSS}`);
    await page.getByLabel("HTML (Liquid)").fill(broken);
    // The live preview follows the typing: the error and its line appear in the frame.
    const frame = page.frameLocator("iframe.fd-preview-frame");
    await expect.poll(() => frame.locator("body").textContent()).toContain("line 3");
    expect(await frame.locator("mark").textContent()).toContain("{% if request.message %}");
    await checkPage("template-live-error");

    await page.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain("Template syntax error on line 3");
    expect(await page.locator(".fd-source-bad mark").textContent()).toContain("{% if request.message %}");
    await checkPage("template-save-error");

    await page.getByLabel("HTML (Liquid)").fill(broken.replace("</body>", "{% endif %}\n</body>"));
    await page.getByRole("button", { name: "Preview" }).click();
    await expect.poll(() => frame.locator("#hello").textContent()).toBe("Hello Jane");
    expect(await frame.locator("#hello").evaluate((el) => getComputedStyle(el).color)).toBe(
      "rgb(20, 60, 160)",
    );
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForURL(`${base}/dashboard/templates/edit/welcome?notice=saved`);
    await expect.poll(() => frame.locator("#hello").textContent()).toBe("Hello Jane");
    expect(await frame.locator("body").textContent()).toContain(`Files for Jane ${XSS}`);
    await checkPage("template-edit");
    await page.goto(`${base}/dashboard/templates`);
    expect(await page.getByRole("link", { name: "welcome" }).count()).toBe(1);
    await checkPage("templates");
  });
});

describe("branding", () => {
  it("saves a stylesheet and logo and shows a recipient page as it will look", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    );
    await page.goto(`${base}/dashboard/branding`);
    await checkPage("branding-empty");
    await page.getByLabel(/^Stylesheet/).fill(`h1 { color: rgb(150, 20, 20); } /* ${XSS} */`);
    await page.getByLabel(/^Logo/).setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: png });
    await page.getByLabel("Recipient host name").fill("files.example.com");
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForURL(`${base}/dashboard/branding?notice=saved`);
    const frame = page.frameLocator("iframe.fd-preview-frame");
    await expect
      .poll(() => frame.locator("h1").evaluate((el) => getComputedStyle(el).color))
      .toBe("rgb(150, 20, 20)");
    await expect
      .poll(() => frame.locator("img.fy-logo").evaluate((el) => (el as HTMLImageElement).naturalWidth))
      .toBe(1);
    expect(await page.getByLabel(/^Stylesheet/).inputValue()).toContain(XSS);
    await checkPage("branding");

    await page.getByLabel("Recipient host name").fill("not a host");
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Enter a valid host name");
    await checkPage("branding-error");
  });
});

describe("on a phone", () => {
  /** The narrowest phone the dashboard supports: the layout viewport the test sets. */
  const NARROW = 360;

  it("fits every page to a 360 px screen without sideways scrolling", async () => {
    const phone = await browser.newContext({
      viewport: { width: NARROW, height: 780 },
      isMobile: true,
      hasTouch: true,
    });
    const small = await phone.newPage();
    // Rows on every list, long values included, whatever ran before.
    const request = await buildRequest(t, owner, {
      message: "A long message that wraps on a phone ".repeat(4),
      contact: [inlineContact([["email", "a.very.long.address.for.a.narrow.screen@example.com"]])],
    });
    const container = await buildContainer(apiCaller(t, owner), { page_type: "p2" });
    const emailId = await t.ferry.notifications.outbox.capture({
      accountId: owner.accountId,
      channel: "email",
      to: "a.very.long.address.for.a.narrow.screen@example.com",
      from: "ferry@example.com",
      subject: "Documents for the signing of the purchase agreement of the property",
      text: "Please upload: https://ferry.test/r/mail-phone/",
      html: "<p>Please upload your documents.</p>",
      links: ["https://ferry.test/r/mail-phone/"],
      notificationId: null,
    });
    try {
      await signInPage(t, small, base, user);
      const pages: [string, string][] = [
        ["/dashboard/applications", "applications"],
        ["/dashboard/requests", "requests"],
        [`/dashboard/requests/${request.id}`, "request"],
        ["/dashboard/containers", "containers"],
        [`/dashboard/containers/${container.id}`, "container"],
        ["/dashboard/templates", "templates"],
        ["/dashboard/templates/edit/welcome", "template"],
        ["/dashboard/branding", "branding"],
        ["/dashboard/callbacks", "callbacks"],
        ["/dashboard/settings", "settings"],
        ["/dashboard/settings/team", "team"],
        ["/dashboard/audit", "audit"],
        ["/dashboard/outbox", "outbox"],
        [`/dashboard/outbox/${emailId}`, "outbox-message"],
      ];
      const wide: string[] = [];
      for (const [path, name] of pages) {
        await small.goto(`${base}${path}`);
        // The document's width against the layout viewport set above: with isMobile,
        // window.innerWidth grows with a too-wide page, so it cannot be the yardstick.
        const width = await small.evaluate(() => document.documentElement.scrollWidth);
        if (width > NARROW) wide.push(`${path}: ${width} px`);
        await screenshot(small, `dashboard-phone-${name}`);
      }
      expect(wide).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});
