/**
 * The externalurl step in the recipient's session through HTTP: step cards in order with locked
 * steps and why, the step page, the act (CSRF, 409 while waiting), the signed return link (no session
 * token in it, only in the browser that left, tampering refused) completing the step, the consent
 * of nothing, and the CSP that lets the step's form lead to the owner's origin only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson } from "../../../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../../../test/helpers/app.js";
import {
  addRecipient,
  buildContainer,
  sendContainer,
  sessionOf,
} from "../../../../../test/helpers/containers.js";
import { PageBrowser } from "../../../../../test/helpers/page-browser.js";

const PATH = "/v1/module_container_externalurl/externalurl/";

describe("externalurl in the session", () => {
  let t: TestApp;
  let owner: TestAccount;
  const call = apiCaller(
    () => t,
    () => owner,
  );
  beforeAll(async () => {
    t = await createTestApp();
    owner = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  const setup = async () => {
    const c = await buildContainer(call);
    const ana = await addRecipient(call, c.id, { first_name: "Ana" });
    const first = expectJson(
      await call("POST", PATH, {
        container: c.id,
        title: "Verify at your bank",
        url: "https://bank.example/verify?x=1",
      }),
      201,
    );
    const second = expectJson(
      await call("POST", PATH, {
        container: c.id,
        title: "Fill the survey",
        url: "https://survey.example/s",
        label: "Open the survey",
        after: [first.id],
      }),
      201,
    );
    const session = sessionOf(await sendContainer(call, c.id), ana);
    return { c, first, second, session };
  };

  it("shows every step in order, the locked one with why, and runs the round trip", async () => {
    const { first, second, session } = await setup();
    const browser = new PageBrowser(t, session.base);
    const page = await browser.get();
    expect(page.statusCode).toBe(200);
    const firstAt = page.body.indexOf(`id="feature-${first.id}"`);
    const secondAt = page.body.indexOf(`id="feature-${second.id}"`);
    expect(firstAt).toBeGreaterThan(0);
    expect(secondAt).toBeGreaterThan(firstAt);
    expect(page.body).toContain(`href="${session.base}steps/${first.id}/"`);
    expect(page.body).toContain(`id="feature-${second.id}-locked"`);
    expect(page.body).toContain("Waits for: Verify at your bank");
    expect(page.body).not.toContain(`href="${session.base}steps/${second.id}/"`);

    // The locked step's page says why; its act answers 409 and changes nothing.
    const locked = await browser.get(`steps/${second.id}/`);
    expect(locked.statusCode).toBe(200);
    expect(locked.body).toContain("Waits for: Verify at your bank");
    expect((await browser.post(`steps/${second.id}/act`, {})).statusCode).toBe(409);
    expect(expectJson(await call("GET", `${PATH}${second.id}/`), 200).status).toBe("pending");

    // The open step: its page, its CSP allowing the owner's origin as a form target, the act.
    const step = await browser.get(`steps/${first.id}/`);
    expect(step.statusCode).toBe(200);
    expect(step.body).toContain("bank.example");
    expect(String(step.headers["content-security-policy"])).toContain(
      "form-action 'self' https://bank.example",
    );
    expect((await browser.post(`steps/${first.id}/act`, { csrf_token: "forged" })).statusCode).toBe(403);
    const act = await browser.post(`steps/${first.id}/act`, {});
    expect(act.statusCode).toBe(303);
    const target = new URL(String(act.headers.location));
    expect(target.origin + target.pathname).toBe("https://bank.example/verify");
    expect(target.searchParams.get("x")).toBe("1");
    const back = new URL(String(target.searchParams.get("ferry_return")));
    expect(back.pathname.startsWith("/steps/return/")).toBe(true);
    expect(back.toString()).not.toContain(session.token);
    expect(expectJson(await call("GET", `${PATH}${first.id}/`), 200)).toMatchObject({
      state: "pending",
      status: "opened",
    });

    // Another browser (no cookie) and an altered link get the one 404 page; nothing changes.
    const stranger = await t.app.inject({ method: "GET", url: back.pathname });
    expect(stranger.statusCode).toBe(404);
    const altered = back.pathname.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    expect((await t.app.inject({ method: "GET", url: altered, headers: browser.header() })).statusCode).toBe(
      404,
    );
    expect(expectJson(await call("GET", `${PATH}${first.id}/`), 200).status).toBe("opened");

    // The browser that left comes back: the step completes, the next one opens.
    const returned = await t.app.inject({ method: "GET", url: back.pathname, headers: browser.header() });
    expect(returned.statusCode).toBe(303);
    expect(String(returned.headers.location)).toBe(`${session.base}?notice=returned#feature-${first.id}`);
    expect(expectJson(await call("GET", `${PATH}${first.id}/`), 200)).toMatchObject({
      state: "complete",
      status: "returned",
    });
    const after = await browser.get("?notice=returned");
    expect(after.body).toContain("Welcome back: the step is recorded.");
    expect(after.body).not.toContain(`id="feature-${second.id}-locked"`);
    expect(after.body).toContain(`href="${session.base}steps/${second.id}/"`);
    expect(after.body).toContain("Open the survey");
    // A step no longer pending refuses acts (422).
    expect((await browser.post(`steps/${first.id}/act`, {})).statusCode).toBe(422);
  });

  it("answers 404 for a step of another kind, of another container, and for unknown ids", async () => {
    const { session, c } = await setup();
    const pull = expectJson(await call("POST", "/v1/module_container_pull/pull/", { container: c.id }), 201);
    const other = await setup();
    const browser = new PageBrowser(t, session.base);
    await browser.get();
    expect((await browser.get(`steps/${pull.id}/`)).statusCode).toBe(404);
    expect((await browser.get(`steps/${other.first.id}/`)).statusCode).toBe(404);
    expect((await browser.get("steps/99999999/")).statusCode).toBe(404);
    expect((await t.app.inject({ method: "GET", url: "/steps/return/garbage" })).statusCode).toBe(404);
  });
});
