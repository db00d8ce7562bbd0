/**
 * Enrichment steps in Chromium: a session with an external-URL step and a second step that waits
 * for it, on a desktop and a phone screen (order, locked step with why, no horizontal scroll, axe
 * checks, no CSP refusal), the round trip through the owner's page and back through the signed
 * return link, then the dashboard's container page with the steps, the consent ledger and its CSV.
 * Screenshots under test-results/ (enrichment-steps-*.png).
 */
import { createServer, type Server } from "node:http";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENRICHMENT_KINDS } from "../../src/features/enrichments/kinds.js";
import { type ApiCall, apiCaller, expectJson } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../helpers/containers.js";
import { createDashboardUser, signedInClient, signInPage } from "../helpers/dashboard.js";
import { testKind } from "../helpers/enrichment-test-kind.js";
import { PageBrowser } from "../helpers/page-browser.js";
import { freePort } from "../helpers/process.js";

const PATH = "/v1/module_container_externalurl/externalurl/";

let t: TestApp;
let owner: TestAccount;
let call: ApiCall;
let base: string;
let browser: Browser;
let ownerSite: Server;
let ownerUrl: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base }, { enrichmentKinds: [...ENRICHMENT_KINDS, testKind] });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  call = apiCaller(t, owner);
  await t.ferry.database.db
    .updateTable("accounts")
    .set({ name: "Acme Bank" })
    .where("id", "=", owner.accountId)
    .execute();
  // The owner's own page: shows what it was given and a link back (the return link, as given).
  ownerSite = createServer((req, res) => {
    const back = new URL(req.url ?? "/", "http://localhost").searchParams.get("ferry_return") ?? "";
    const safe = back.replace(/[&<>"']/g, "");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(
      `<!doctype html><html lang="en"><title>Acme KYC</title><h1>Acme KYC</h1><a id="back" href="${safe}">Back to Ferry</a></html>`,
    );
  });
  const sitePort = await freePort();
  await new Promise<void>((resolve) => ownerSite.listen(sitePort, "127.0.0.1", resolve));
  ownerUrl = `http://localhost:${sitePort}/kyc`;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => ownerSite?.close(resolve));
  await t?.close();
});

async function newPage(options: Parameters<Browser["newContext"]>[0] = {}) {
  const context: BrowserContext = await browser.newContext(options);
  const page: Page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  return { context, page, errors };
}

/** A sent container: an external-URL step, then a survey that waits for it. */
async function stepsSession() {
  const c = await buildContainer(call);
  const ana = await addRecipient(call, c.id, { first_name: "Ana", last_name: "Silva" });
  const first = expectJson(
    await call("POST", PATH, {
      container: c.id,
      title: "Confirm your identity at Acme",
      description: "Acme's own page checks your account details.",
      url: ownerUrl,
    }),
    201,
  );
  const second = expectJson(
    await call("POST", PATH, {
      container: c.id,
      title: "Tell us how it went",
      url: `${ownerUrl}?survey=1`,
      label: "Open the survey",
      after: [first.id],
    }),
    201,
  );
  const session = sessionOf(await sendContainer(call, c.id), ana);
  return { c, ana, first, second, link: `${base}${session.base}`, session };
}

describe("enrichment steps in Chromium", () => {
  it("shows steps in order with the locked one, on a desktop and a phone", async () => {
    const { link, first, second } = await stepsSession();
    for (const [name, options] of [
      ["desktop", { viewport: { width: 1280, height: 900 } }],
      ["phone", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
    ] as const) {
      const { context, page, errors } = await newPage(options);
      await page.goto(link);
      await page.getByRole("heading", { name: "Confirm your identity at Acme" }).waitFor();
      const ids = await page.locator("section.fy-step").evaluateAll((els) => els.map((e) => e.id));
      expect(ids).toEqual([`feature-${first.id}`, `feature-${second.id}`]);
      await expect(page.locator(`#feature-${second.id}-locked`).innerText()).resolves.toContain(
        "Waits for: Confirm your identity at Acme",
      );
      expect(await page.locator(`#feature-${second.id} a.fy-button`).count()).toBe(0);
      // Against the layout viewport set (with isMobile, window.innerWidth grows with the page).
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        options.viewport.width,
      );
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, `enrichment-steps-${name}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it("goes to the owner's page and back, completing the step and opening the next", async () => {
    const { link, first, second, session } = await stepsSession();
    const { context, page, errors } = await newPage({
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await page.goto(link);
    await page.getByRole("link", { name: /Continue to localhost/ }).click();
    await page.getByRole("heading", { name: "Confirm your identity at Acme" }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "enrichment-steps-step-phone");
    await page.getByRole("button", { name: /Continue to localhost/ }).click();
    await page.getByRole("heading", { name: "Acme KYC" }).waitFor();
    const back = await page.locator("#back").getAttribute("href");
    expect(back).toMatch(new RegExp(`^${base}/steps/return/`));
    expect(back).not.toContain(session.token);
    expect(expectJson(await call("GET", `${PATH}${first.id}/`), 200).status).toBe("opened");
    await page.locator("#back").click();
    await page.getByText("Welcome back: the step is recorded.").waitFor();
    expect(new URL(page.url()).pathname).toBe(session.base);
    expect(expectJson(await call("GET", `${PATH}${first.id}/`), 200)).toMatchObject({
      state: "complete",
      status: "returned",
    });
    expect(await page.locator(`#feature-${second.id}-locked`).count()).toBe(0);
    await page.getByRole("link", { name: "Open the survey" }).waitFor();
    await screenshot(page, "enrichment-steps-returned-phone");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows the steps, the consent ledger and its CSV on the dashboard's container page", async () => {
    const { c, first } = await stepsSession();
    const step = expectJson(
      await call("POST", "/v1/module_container_testkind/testkind/", { container: c.id }),
      201,
    );
    const tokens = await t.ferry.database.db
      .selectFrom("container_recipient_items")
      .select("session_token")
      .where("container_id", "=", c.id)
      .execute();
    const recipient = new PageBrowser(t, `/s/${tokens[0]!.session_token}/`);
    await recipient.get(`steps/${step.id}/`);
    expect((await recipient.post(`steps/${step.id}/act`, { accept: "1" })).statusCode).toBe(303);
    await call("POST", `/v1/sandbox/externalurl/${first.id}/return/`);

    const user = await createDashboardUser(t, { accountId: owner.accountId });
    const client = await signedInClient(t, user);
    const pageRes = await client.get(`/dashboard/containers/${c.id}`);
    expect(pageRes.statusCode).toBe(200);
    expect(pageRes.body).toContain('id="steps"');
    expect(pageRes.body).toContain(`data-step="${first.id}"`);
    expect(pageRes.body).toMatch(/returned/);
    expect(pageRes.body).toContain('id="consents"');
    expect(pageRes.body).toContain("test-consent v2026-01");
    const csv = await client.get(`/dashboard/containers/${c.id}/consents.csv`);
    expect(csv.statusCode).toBe(200);
    expect(String(csv.headers["content-type"])).toContain("text/csv");
    const lines = csv.body.trim().split("\r\n");
    expect(lines[0]).toBe(
      "id,recipient,feature,disclosure_id,disclosure_version,text_sha256,accepted_at,ip,user_agent,auth_method",
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,${step.id},test-consent,2026-01,`);

    const { context, page } = await newPage({ viewport: { width: 1280, height: 900 } });
    await signInPage(t, page, base, user);
    await page.goto(`${base}/dashboard/containers/${c.id}`);
    await page.getByRole("heading", { name: "Steps" }).waitFor();
    await screenshot(page, "enrichment-steps-dashboard");
    await context.close();
  });
});
