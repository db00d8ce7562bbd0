/**
 * Forged form posts in Debian's Chromium (ADR 0068): a page on another port of the same host
 * auto-submits forms to the dashboard and to a recipient page, with the victim's real token and
 * the victim's cookies, which the browser sends (another port is the same site). Ferry refuses
 * them by their Origin; the same forms posted from Ferry's own pages go through.
 */
import { createServer, type Server } from "node:http";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { createDashboardUser, type DashboardUser, signInPage } from "../helpers/dashboard.js";
import { freePort } from "../helpers/process.js";

let t: TestApp;
let owner: TestAccount;
let user: DashboardUser;
let browser: Browser;
let page: Page;
let base: string;
let attacker: Server;
let attackerBase: string;
/** The attack page's form: action and fields, set by each test before it navigates. */
let attack: { action: string; fields: Record<string, string> } = { action: "", fields: {} };

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  user = await createDashboardUser(t, { accountId: owner.accountId });
  // The attacker's page: another port of the same host, a form that submits itself.
  attacker = createServer((_req, res) => {
    const inputs = Object.entries(attack.fields)
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join("");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(
      `<!doctype html><title>Win a prize</title><form id="f" method="post" action="${escapeHtml(attack.action)}">${inputs}</form><script>document.getElementById("f").submit()</script>`,
    );
  });
  const attackerPort = await freePort();
  await new Promise<void>((resolve) => attacker.listen(attackerPort, "127.0.0.1", resolve));
  attackerBase = `http://127.0.0.1:${attackerPort}`;
  browser = await launchBrowser();
  page = await (await browser.newContext()).newPage();
  await signInPage(t, page, base, user);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await t?.close();
});

/** Opens the attacker's page, which posts its form; returns the status and text of where it lands. */
async function runAttack(
  action: string,
  fields: Record<string, string>,
): Promise<{ status: number; text: string }> {
  attack = { action, fields };
  const landed = page.waitForResponse((r) => r.url() === action && r.request().method() === "POST");
  await page.goto(`${attackerBase}/prize`);
  const response = await landed;
  await page.waitForLoadState();
  return { status: response.status(), text: await response.text() };
}

describe("forms posted from another port of the host", () => {
  it("refuses a dashboard form with the victim's own token: SMTP settings and recipient host stay", async () => {
    await page.goto(`${base}/dashboard/settings`);
    const token = await page
      .locator('form[action="/dashboard/settings/smtp"] input[name="csrf_token"]')
      .inputValue();
    const smtp = await runAttack(`${base}/dashboard/settings/smtp`, {
      csrf_token: token,
      host: "smtp.attacker.example",
      port: "25",
      tls: "none",
      username: "",
      password: "",
      from_email: "boss@attacker.example",
    });
    expect(smtp.status).toBe(403);
    expect(smtp.text).toContain("Form refused");
    const branding = await runAttack(`${base}/dashboard/branding`, {
      csrf_token: token,
      css: "",
      recipient_host: "files.attacker.example",
    });
    expect(branding.status).toBe(403);

    await page.goto(`${base}/dashboard/settings`);
    expect(await page.locator("#smtp-host").inputValue()).toBe("");
    await page.goto(`${base}/dashboard/branding`);
    expect(await page.content()).not.toContain("files.attacker.example");

    // The same form from the dashboard's own page is taken.
    await page.goto(`${base}/dashboard/settings`);
    await page.locator("#smtp-host").fill("smtp.owner.example");
    await page.locator("#smtp-from").fill("files@owner.example");
    await page.locator('form[action="/dashboard/settings/smtp"] button[type="submit"]').click();
    await page.waitForURL(/\/dashboard\/settings/);
    await page.goto(`${base}/dashboard/settings`);
    expect(await page.locator("#smtp-host").inputValue()).toBe("smtp.owner.example");
  });

  it("refuses a recipient page's form posted from there, before the request changes", async () => {
    const call = apiCaller(t, owner);
    const req = expectJson(await call("POST", "/v1/request/", { type: "pull" }), 201);
    await page.goto(`${base}/r/${req.identifier}/`);
    const token = await page.locator('form[action$="submit"] input[name="csrf_token"]').first().inputValue();
    const submit = await runAttack(`${base}/r/${req.identifier}/submit`, {
      csrf_token: token,
      confirm_empty: "1",
    });
    expect(submit.status).toBe(403);
    expect(JSON.parse(submit.text)).toMatchObject({ code: "NOT_AUTHORIZED" });
    expect(expectJson(await call("GET", `/v1/request/${req.id}/`), 200).complete).toBe(false);
  });
});
