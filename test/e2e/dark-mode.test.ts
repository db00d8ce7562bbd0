/**
 * Dark mode in Debian's Chromium: with `prefers-color-scheme: dark` every page (pull, push,
 * container session, home, /docs, an unknown link) turns dark and stays axe-clean, and an
 * account's stylesheet can still force the light look (screenshots under test-results/).
 */
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiCall, apiCaller, expectJson, type Json } from "../helpers/api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "../helpers/app.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { addRecipient, buildContainer, pushFile, sendContainer, sessionOf } from "../helpers/containers.js";
import { freePort } from "../helpers/process.js";

let t: TestApp;
let owner: TestAccount;
let call: ApiCall;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: "127.0.0.1" });
  owner = await createTestAccount(t);
  call = apiCaller(t, owner);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A dark-scheme page that records script errors and CSP refusals. */
async function darkPage(): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 800 }, colorScheme: "dark" });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused/.test(m.text())) errors.push(m.text());
  });
  return { page, errors };
}

/** The computed background colour of the body and the colour of the main text. */
async function colours(page: Page): Promise<{ bg: string; text: string }> {
  return page.evaluate(() => {
    const html = getComputedStyle(document.documentElement);
    return { bg: html.backgroundColor, text: html.color };
  });
}

async function createRequest(fields: Json): Promise<Json> {
  return expectJson(await call("POST", "/v1/request/", fields), 201);
}

/** Opens `url` dark, checks it is dark and axe-clean, and saves a screenshot. */
async function expectDark(url: string, heading: string | RegExp, name: string): Promise<Page> {
  const { page, errors } = await darkPage();
  await page.goto(url);
  await page.getByRole("heading", { name: heading }).first().waitFor();
  expect(await colours(page)).toEqual({ bg: "rgb(17, 20, 24)", text: "rgb(230, 233, 237)" });
  const violations = await axeViolations(page);
  expect(violations.map((v) => `${v.id}: ${v.targets.slice(0, 4).join(" | ")}`)).toEqual([]);
  await screenshot(page, name);
  expect(errors).toEqual([]);
  return page;
}

describe("dark mode", () => {
  it("turns the pull page dark, accessible", async () => {
    const req = await createRequest({ type: "pull", message: "Please send your ID." });
    const page = await expectDark(`${base}/r/${req.identifier}/`, /.+/, "dark-pull");
    await page.context().close();
  });

  it("turns the push page dark, accessible", async () => {
    const req = await createRequest({ type: "push", message: "Your documents." });
    const page = await expectDark(`${base}/r/${req.identifier}/`, /.+/, "dark-push");
    await page.context().close();
  });

  it("turns the container session page dark, accessible", async () => {
    const c = await buildContainer(call, { display_chat: true });
    const r = await addRecipient(call, c.id, { first_name: "Kim" });
    expectJson(
      await call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Your ID" }),
      201,
    );
    const push = expectJson(
      await call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Welcome pack" }),
      201,
    );
    await pushFile(call, push.id, "welcome.pdf", randomBytes(2000));
    const tokens = await sendContainer(call, c.id);
    const page = await expectDark(`${base}${sessionOf(tokens, r).base}`, "Your ID", "dark-session");
    await page.context().close();
  });

  it("turns the home page, the API reference and an unknown link dark, accessible", async () => {
    for (const [path, heading, name] of [
      ["/", "Ferry: secure file exchange", "dark-home"],
      ["/docs", "Ferry: Secure File Exchange API", "dark-docs"],
      ["/r/no-such-link-000000000000/", /.+/, "dark-not-found"],
    ] as const) {
      const page = await expectDark(`${base}${path}`, heading, name);
      await page.context().close();
    }
  });

  it("lets an account's stylesheet force the light look", async () => {
    expectJson(await call("PUT", "/v1/branding/", { css: ":root { color-scheme: light; }" }), 200);
    try {
      const req = await createRequest({ type: "pull" });
      const { page, errors } = await darkPage();
      await page.goto(`${base}/r/${req.identifier}/`);
      await page.getByRole("heading").first().waitFor();
      expect(await colours(page)).toEqual({ bg: "rgb(244, 246, 248)", text: "rgb(27, 31, 36)" });
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, "dark-forced-light");
      expect(errors).toEqual([]);
      await page.context().close();
    } finally {
      await call("DELETE", "/v1/branding/");
    }
  });
});
