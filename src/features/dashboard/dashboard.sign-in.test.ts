/**
 * Dashboard sign-in over HTTP: setup link → password → TOTP enrolment, password then code,
 * recovery codes, replay refusal, lockout, CSRF, cookies, sign-out everywhere, and the audit
 * entries AAA-0001 / AAA-0002 of every outcome.
 */
import { describe, expect, it } from "vitest";
import { callApi } from "../../../test/helpers/api.js";
import {
  createDashboardUser,
  createDashboardUserWithClient,
  DashboardClient,
  nextTotpCode,
  signedInClient,
} from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { totpCodeAt } from "./totp.js";

describe("dashboard sign-in", () => {
  const h = useHarness({ other: true });

  async function auditCodes(): Promise<{ code: string; value: string }[]> {
    const res = await callApi(h.t, h.owner, "GET", "/v1/logentry/search/", undefined, {
      query: { page_size: "100", related_model: "user" },
    });
    expect(res.statusCode).toBe(200);
    return res.json().results;
  }

  it("sets up a user from the setup link through TOTP enrolment, with secure cookies", async () => {
    const { user, client } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    expect(user.recoveryCodes).toHaveLength(10);
    const home = await client.get("/dashboard/");
    expect(home.statusCode).toBe(303);
    expect(home.headers.location).toBe("/dashboard/applications");
    // The setup link is used up.
    const again = await new DashboardClient(h.t).get("/dashboard/setup/whatever-token-that-is-long-enough");
    expect(again.statusCode).toBe(404);
    const entries = await auditCodes();
    expect(entries.some((e) => e.code === "AAA-0001" && /two-factor set up/.test(e.value))).toBe(true);
  });

  it("signs in with password then TOTP code; the cookie is HttpOnly and SameSite", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    const first = await client.post("/dashboard/sign-in", { email: user.email, password: user.password });
    expect(first.statusCode).toBe(303);
    const cookie = String(first.headers["set-cookie"]);
    expect(cookie).toMatch(/ferry_dash=[^;]+; Path=\/dashboard; Max-Age=\d+; HttpOnly; SameSite=Lax/);
    // Half signed in: pages still send to the code step.
    const early = await client.get("/dashboard/");
    expect(early.statusCode).toBe(303);
    expect(early.headers.location).toBe("/dashboard/sign-in/code");
    await client.get("/dashboard/sign-in/code");
    const code = nextTotpCode(h.t, user);
    const second = await client.post("/dashboard/sign-in/code", { code });
    expect(second.statusCode).toBe(303);
    expect((await client.get("/dashboard/")).headers.location).toBe("/dashboard/applications");
    const entries = await auditCodes();
    expect(entries.some((e) => e.code === "AAA-0001" && /authenticator code/.test(e.value))).toBe(true);
  });

  it("refuses a replayed TOTP code (AAA-0002) and accepts the next one", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const first = await signedInClient(h.t, user);
    expect((await first.get("/dashboard/")).statusCode).toBe(303);
    // Same code again, in the same 30 seconds, from another browser.
    const replay = new DashboardClient(h.t);
    await replay.get("/dashboard/sign-in");
    await replay.post("/dashboard/sign-in", { email: user.email, password: user.password });
    await replay.get("/dashboard/sign-in/code");
    const refused = await replay.post("/dashboard/sign-in/code", {
      code: totpCodeAt(user.totpSecret, h.t.clock.now()),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain("already used");
    expect((await auditCodes()).some((e) => e.code === "AAA-0002" && /replayed/.test(e.value))).toBe(true);
    const ok = await replay.post("/dashboard/sign-in/code", { code: nextTotpCode(h.t, user) });
    expect(ok.statusCode).toBe(303);
  });

  it("signs in with a recovery code once", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const recovery = user.recoveryCodes[0]!;
    const signIn = async () => {
      const c = new DashboardClient(h.t);
      await c.get("/dashboard/sign-in");
      await c.post("/dashboard/sign-in", { email: user.email, password: user.password });
      await c.get("/dashboard/sign-in/code");
      return c.post("/dashboard/sign-in/code", { code: recovery.toUpperCase() });
    };
    expect((await signIn()).statusCode).toBe(303);
    expect((await signIn()).statusCode).toBe(400);
  });

  it("locks the user out after 5 failures, audits each, and lifts the lock after 15 minutes", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    for (let i = 0; i < 5; i++) {
      const res = await client.post("/dashboard/sign-in", {
        email: user.email,
        password: "wrong password!!",
      });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain("Wrong email or password.");
    }
    const locked = await client.post("/dashboard/sign-in", { email: user.email, password: user.password });
    expect(locked.statusCode).toBe(400);
    expect(locked.body).toContain("locked");
    const refused = (await auditCodes()).filter((e) => e.code === "AAA-0002" && /Dashboard/.test(e.value));
    expect(refused.some((e) => /locked out after/.test(e.value))).toBe(true);
    expect(refused.filter((e) => /Wrong password/.test(e.value)).length).toBeGreaterThanOrEqual(5);
    h.t.clock.advance(15 * 60_000 + 1000);
    expect(
      (await client.post("/dashboard/sign-in", { email: user.email, password: user.password })).statusCode,
    ).toBe(303);
  });

  it("answers an unknown email exactly like a wrong password", async () => {
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    const res = await client.post("/dashboard/sign-in", {
      email: "nobody@example.com",
      password: "whatever whatever",
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("Wrong email or password.");
  });

  it("refuses forms without the CSRF token or with another browser's token", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, user);
    const missing = await client.post("/dashboard/sign-out-everywhere", { csrf_token: "" });
    expect(missing.statusCode).toBe(403);
    const other = new DashboardClient(h.t);
    await other.get("/dashboard/sign-in");
    const foreign = await client.post("/dashboard/sign-out-everywhere", { csrf_token: other.csrf });
    expect(foreign.statusCode).toBe(403);
    const signIn = await other.post("/dashboard/sign-in", {
      csrf_token: "x.y",
      email: user.email,
      password: user.password,
    });
    expect(signIn.statusCode).toBe(403);
    // Still signed in.
    expect((await client.get("/dashboard/")).statusCode).toBe(303);
    expect((await client.get("/dashboard/")).headers.location).toBe("/dashboard/applications");
  });

  it("signs out, and signs out everywhere", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const a = await signedInClient(h.t, user);
    const b = await signedInClient(h.t, user);
    await a.get("/dashboard/sign-in");
    const out = await a.post("/dashboard/sign-out");
    expect(out.statusCode).toBe(303);
    expect((await a.get("/dashboard/")).headers.location).toMatch(/^\/dashboard\/sign-in/);
    expect((await b.get("/dashboard/")).headers.location).toBe("/dashboard/applications");
    const c = await signedInClient(h.t, user);
    await c.get("/dashboard/sign-in");
    expect((await c.post("/dashboard/sign-out-everywhere")).statusCode).toBe(303);
    expect((await b.get("/dashboard/")).headers.location).toMatch(/^\/dashboard\/sign-in/);
  });

  it("ends idle sessions after 30 minutes and every session after 12 hours", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, user);
    h.t.clock.advance(31 * 60_000);
    expect((await client.get("/dashboard/")).headers.location).toMatch(/^\/dashboard\/sign-in/);
    const busy = await signedInClient(h.t, user);
    for (let i = 0; i < 25; i++) {
      h.t.clock.advance(29 * 60_000);
      expect((await busy.get("/dashboard/")).headers.location, `after ${i + 1} steps`).toBe(
        i < 24 ? "/dashboard/applications" : "/dashboard/sign-in?next=%2Fdashboard%2F",
      );
    }
  });
});

describe("dashboard sign-in over https", () => {
  const h = useHarness({ env: { PUBLIC_BASE_URL: "https://ferry.test" } });

  it("names the session and pre-session cookies __Host- (Secure, Path=/, no Domain) and sends HSTS", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    const page = await client.get("/dashboard/sign-in");
    expect(String(page.headers["set-cookie"])).toMatch(
      /^__Host-ferry_dash_pre=[^;]+; Path=\/; Max-Age=1800; HttpOnly; SameSite=Strict; Secure$/,
    );
    expect(page.headers["strict-transport-security"]).toBe("max-age=31536000");
    const first = await client.post("/dashboard/sign-in", { email: user.email, password: user.password });
    const set = [first.headers["set-cookie"]].flat().map(String);
    expect(set).toContainEqual(
      expect.stringMatching(
        /^__Host-ferry_dash=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/,
      ),
    );
    expect(set.join("\n")).not.toMatch(/Domain=|(^|\n)ferry_dash=/);
    // A plain-named cookie (what another port could plant) is not read over https.
    const planted = await h.t.app.inject({
      method: "GET",
      url: "/dashboard/sign-in/code",
      headers: { cookie: `ferry_dash=${client.cookies.get("__Host-ferry_dash")}` },
    });
    expect(planted.headers.location).toBe("/dashboard/sign-in");
    expect((await client.get("/dashboard/sign-in/code")).statusCode).toBe(200);
  });
});
