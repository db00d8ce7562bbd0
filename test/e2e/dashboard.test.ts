/**
 * The owner's dashboard in Debian's Chromium: first sign-in from the setup link through TOTP
 * enrolment (codes computed from the secret the page shows), an application created and its key
 * used with the API, key creation by keyboard only, a colleague invited who signs in, sign-in
 * with password and code; every page axe-clean without CSP errors, light, dark and on a phone
 * (screenshots under test-results/dashboard-*.png).
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { createDashboardUser, type DashboardUser, nextTotpCode, signInPage } from "../helpers/dashboard.js";
import { freePort } from "../helpers/process.js";

let t: TestApp;
let owner: TestAccount;
let browser: Browser;
let base: string;
const errors: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function newPage(
  options: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1200, height: options.height ?? 850 },
    colorScheme: options.colorScheme ?? "light",
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = await context.newPage();
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  return { context, page };
}

/** Checks the page is axe-clean and saves its screenshot. */
async function check(page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations.map((v) => `${name} ${v.id}: ${v.help} ${v.targets.slice(0, 3).join(" | ")}`)).toEqual(
    [],
  );
  await screenshot(page, `dashboard-${name}`);
}

/** Presses Tab until the focused element matches `test` (at most `max` presses). */
async function tabTo(page: Page, test: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, test)) return;
  }
  throw new Error(`focus never reached ${test}`);
}

describe("dashboard in Chromium", () => {
  let first: DashboardUser;

  it("takes a new owner from the setup link through TOTP enrolment to the dashboard", async () => {
    const { setupUrl } = await t.ferry.dashboard.users.invite(owner.accountId, owner.email, null);
    const { context, page } = await newPage();
    await page.goto(setupUrl);
    await page.getByRole("heading", { name: "Welcome to Ferry" }).waitFor();
    expect(await page.locator(".fd-env").textContent()).toContain("Sandbox");
    await check(page, "setup-password");
    const password = "a long owner passphrase";
    await page.getByLabel("New password").fill(password);
    await page.getByLabel("Repeat the password").fill(password);
    await page.getByRole("button", { name: "Set password" }).click();
    await page.getByRole("heading", { name: "Set up two-factor authentication" }).waitFor();
    expect(
      await page.locator("img.fd-qr").evaluate((img: HTMLImageElement) => img.naturalWidth),
    ).toBeGreaterThan(0);
    expect(await page.locator(".fd-break").textContent()).toMatch(/^otpauth:\/\/totp\/Ferry%20sandbox:/);
    await check(page, "setup-two-factor");
    const secret = (await page.locator("#totp-secret").textContent())!;
    first = {
      userId: 0,
      accountId: owner.accountId,
      email: owner.email,
      password,
      totpSecret: secret,
      recoveryCodes: [],
      lastStep: 0,
    };
    await page.getByLabel("6-digit code").fill(nextTotpCode(t, first));
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("heading", { name: "Save your recovery codes" }).waitFor();
    expect(await page.locator("#recovery-codes li").count()).toBe(10);
    await check(page, "recovery-codes");
    await page.getByRole("link", { name: "Continue to the dashboard" }).click();
    await page.getByRole("heading", { name: "Applications", level: 1 }).waitFor();
    expect(page.url()).toBe(`${base}/dashboard/applications`);
    await context.close();
  });

  it("signs in with password and code, creates an application and uses its key", async () => {
    const { context, page } = await newPage();
    await page.goto(`${base}/dashboard/settings`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await check(page, "sign-in");
    await page.getByLabel("Email").fill(first.email);
    await page.getByLabel("Password").fill(first.password);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Two-factor code" }).waitFor();
    await check(page, "sign-in-code");
    await page.getByLabel("Code from your authenticator app").fill(nextTotpCode(t, first));
    await page.getByRole("button", { name: "Sign in" }).click();
    // Back where sign-in was asked for.
    await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    await check(page, "settings");

    await page.getByRole("link", { name: "Applications" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Website");
    await page.getByLabel("Only the areas below").check();
    await page.getByLabel("requests", { exact: true }).selectOption("write");
    await page.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("heading", { name: 'API key of "Website"' }).waitFor();
    const key = (await page.locator("#new-key").textContent())!.trim();
    expect(key).toMatch(/^fry_sbx_/);
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await check(page, "applications-new-key");
    // A reload neither shows the key again nor creates a second application (post/redirect/get).
    await page.reload();
    await page.getByText("The new key was shown once and is not shown again.").waitFor();
    expect(await page.locator("#new-key").count()).toBe(0);
    expect(await page.locator("tbody tr", { hasText: "Website" }).count()).toBe(1);

    const token = await fetch(`${base}/v1/auth/get_token/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_key: key, email: owner.email }),
    });
    expect(token.status).toBe(200);
    const list = await fetch(`${base}/v1/request/`, {
      headers: { authorization: `JWT ${((await token.json()) as { token: string }).token}` },
    });
    expect(list.status).toBe(200);

    // Revoking asks for the name typed back first.
    await page
      .getByRole("row", { name: /Website/ })
      .locator("summary")
      .click();
    await page.getByLabel("Type Website to confirm").fill("Websit");
    await page.getByRole("button", { name: "Revoke Website" }).click();
    await page.getByText("exactly to revoke it. Nothing was revoked.").waitFor();
    await check(page, "applications-revoke-confirm");
    await page.getByLabel("Type Website to confirm").fill("Website");
    await page.getByRole("button", { name: "Revoke Website" }).click();
    await page.getByText('Revoked "Website"').waitFor();
    await check(page, "applications");
    await context.close();
  });

  it("creates a key with the keyboard only", async () => {
    const { context, page } = await newPage();
    await signInPage(t, page, base, first);
    await page.goto(`${base}/dashboard/applications`);
    await tabTo(page, "#app-name");
    await page.keyboard.type("Keyboard app");
    await tabTo(page, "button[type=submit].fd-button", 40);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain("Create application");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: 'API key of "Keyboard app"' }).waitFor();
    await tabTo(page, "button[data-copy]", 20);
    await page.keyboard.press("Enter");
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(/^fry_sbx_/);
    // The skip link leads to the content.
    await page.goto(`${base}/dashboard/applications`);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await context.close();
  });

  it("invites a colleague who sets up two-factor and signs in", async () => {
    const { context, page } = await newPage();
    await signInPage(t, page, base, first);
    await page.goto(`${base}/dashboard/settings/team`);
    await page.getByLabel("Email").fill("colleague@example.com");
    await page.getByRole("button", { name: "Create setup link" }).click();
    const link = (await page.locator("#setup-link").textContent())!.trim();
    await check(page, "team");
    const colleague = await newPage({ width: 390, height: 844 });
    await colleague.page.goto(link);
    const password = "the colleague's passphrase";
    await colleague.page.getByLabel("New password").fill(password);
    await colleague.page.getByLabel("Repeat the password").fill(password);
    await colleague.page.getByRole("button", { name: "Set password" }).click();
    const secret = (await colleague.page.locator("#totp-secret").textContent())!;
    await screenshot(colleague.page, "dashboard-phone-setup-two-factor");
    const user: DashboardUser = {
      userId: 0,
      accountId: owner.accountId,
      email: "colleague@example.com",
      password,
      totpSecret: secret,
      recoveryCodes: [],
      lastStep: 0,
    };
    await colleague.page.getByLabel("6-digit code").fill(nextTotpCode(t, user));
    await colleague.page.getByRole("button", { name: "Confirm" }).click();
    await colleague.page.getByRole("link", { name: "Continue to the dashboard" }).click();
    await colleague.page.getByRole("heading", { name: "Applications", level: 1 }).waitFor();
    await check(colleague.page, "phone-applications");
    await colleague.page.context().close();
    // Signs in again later, on a phone, in dark mode.
    const again = await newPage({ width: 390, height: 844, colorScheme: "dark" });
    await signInPage(t, again.page, base, user);
    await again.page.goto(`${base}/dashboard/settings/team`);
    await check(again.page, "phone-dark-team");
    await again.context.close();
    await page.reload();
    expect(await page.locator("tr", { hasText: "colleague@example.com" }).textContent()).toContain("Active");
    await context.close();
  });

  it("shows a 404 page for another account's objects, axe-clean", async () => {
    const other = await createTestAccount(t);
    const theirs = await createDashboardUser(t, { accountId: other.accountId });
    const { context, page } = await newPage();
    await signInPage(t, page, base, theirs);
    await page.goto(`${base}/dashboard/applications`);
    const rows = await page
      .locator("tbody tr[id^=application-]")
      .evaluateAll((trs) => trs.map((tr) => tr.id));
    expect(rows).toEqual([`application-${other.applicationId}`]);
    // Their revoke form pointed at this account's application: a 404 page, and nothing revoked.
    await page
      .locator(`#application-${other.applicationId} form`)
      .evaluate(
        (form: HTMLFormElement, id) => form.setAttribute("action", `/dashboard/applications/${id}/revoke`),
        owner.applicationId,
      );
    await page.locator(`#application-${other.applicationId} summary`).click();
    await page.getByLabel("Type Test app to confirm").fill("Test app");
    await page.getByRole("button", { name: "Revoke Test app" }).click();
    await page.getByRole("heading", { name: "Not found" }).waitFor();
    await check(page, "not-found");
    const account = await fetch(`${base}/v1/account/`, { headers: owner.headers });
    expect(account.status).toBe(200);
    await context.close();
    expect(errors).toEqual([]);
  });

  it("shows its error pages axe-clean: wrong password, used link, expired form", async () => {
    const { context, page } = await newPage();
    await page.goto(`${base}/dashboard/setup/${"x".repeat(43)}`);
    await page.getByRole("heading", { name: "Setup link not valid" }).waitFor();
    await check(page, "setup-link-invalid");
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel("Email").fill(first.email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("alert").getByText("Wrong email or password.").waitFor();
    await check(page, "sign-in-error");
    // The form's CSRF secret is gone (cookies cleared): the post is refused.
    await context.clearCookies();
    await page.getByLabel("Password").fill(first.password);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Form expired" }).waitFor();
    await check(page, "form-expired");
    await context.close();
  });
});
