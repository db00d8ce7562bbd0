/**
 * The dashboard's defences against forged form posts and planted cookies (ADR 0068), through HTTP:
 * tokens bound to the session, the pre-session nonce of sign-in, the Origin / Sec-Fetch-Site
 * check, duplicated cookie names, session rotation at each sign-in step.
 */
import { describe, expect, it } from "vitest";
import {
  DashboardClient as Client,
  createDashboardUser,
  createDashboardUserWithClient,
  type DashboardClient,
  type DashboardUser,
  nextTotpCode,
  signedInClient,
} from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";

const SMTP = {
  host: "smtp.victim.example",
  port: "587",
  tls: "tls",
  username: "mailer",
  password: "victim-smtp-password",
  from_email: "files@victim.example",
};
const ATTACKER_SMTP = { ...SMTP, host: "smtp.attacker.example", password: "x" };

describe("dashboard CSRF and session cookies", () => {
  const h = useHarness({ other: true });

  /** A victim in `owner`'s account with SMTP and recipient host set, signed in. */
  async function victim(): Promise<{ user: DashboardUser; client: DashboardClient }> {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, user);
    await client.get("/dashboard/settings");
    expect((await client.post("/dashboard/settings/smtp", SMTP)).statusCode).toBe(303);
    await client.get("/dashboard/branding");
    expect(
      (await client.post("/dashboard/branding", { css: "", recipient_host: "files.victim.example" }))
        .statusCode,
    ).toBe(303);
    await client.get("/dashboard/settings");
    return { user, client };
  }

  /** The victim's SMTP host and recipient host as the dashboard shows them. */
  async function victimSettings(client: DashboardClient): Promise<{ smtp: boolean; host: boolean }> {
    const settings = await client.get("/dashboard/settings");
    const branding = await client.get("/dashboard/branding");
    await client.get("/dashboard/settings");
    return {
      smtp: settings.body.includes('value="smtp.victim.example"'),
      host: branding.body.includes('value="files.victim.example"'),
    };
  }

  it("refuses a token of session A in session B, even with A's other cookies planted", async () => {
    const { client: b } = await victim();
    const { client: a } = await createDashboardUserWithClient(h.t, { accountId: h.other.accountId });
    await a.get("/dashboard/settings");
    // The attacker copies every cookie but the session into the victim's jar and hands over a token.
    const tossed = new Client(h.t);
    tossed.cookies = new Map([...a.cookies].filter(([name]) => !/^(__Host-)?ferry_dash$/.test(name)));
    for (const [name, value] of b.cookies)
      if (/^(__Host-)?ferry_dash$/.test(name)) tossed.cookies.set(name, value);
    tossed.csrf = a.csrf;
    const smtp = await tossed.post("/dashboard/settings/smtp", ATTACKER_SMTP);
    expect(smtp.statusCode).toBe(403);
    expect(smtp.body).toContain("did not come from this dashboard");
    tossed.csrf = a.csrf;
    expect(
      (await tossed.post("/dashboard/branding", { css: "", recipient_host: "evil.example" })).statusCode,
    ).toBe(403);
    expect(await victimSettings(b)).toEqual({ smtp: true, host: true });
    // The victim's own token still works in the victim's session.
    expect((await b.post("/dashboard/settings/profile", { name: "Victim" })).statusCode).toBe(303);
  });

  it("refuses a Cookie header that names a dashboard cookie twice (400) and changes nothing", async () => {
    const { client } = await victim();
    const { client: attacker } = await createDashboardUserWithClient(h.t, { accountId: h.other.accountId });
    const session = (c: DashboardClient) => c.cookies.get("ferry_dash") ?? "";
    // A cookie planted with a narrower path is sent first: the first-wins reading used it.
    const res = await h.t.app.inject({
      method: "POST",
      url: "/dashboard/settings/smtp",
      headers: {
        cookie: `ferry_dash=${session(attacker)}; ferry_dash=${session(client)}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: new URLSearchParams({ csrf_token: attacker.csrf, ...ATTACKER_SMTP }).toString(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("holds the cookie ferry_dash more than once");
    expect(res.body).toContain("Clear this site&#39;s cookies");
    const page = await h.t.app.inject({
      method: "GET",
      url: "/dashboard/settings",
      headers: { cookie: `ferry_dash=${session(client)}; ferry_dash=${session(attacker)}` },
    });
    expect(page.statusCode).toBe(400);
    // The API answers a duplicated Ferry cookie in the spec's error shape.
    const api = await h.t.app.inject({
      method: "GET",
      url: "/v1/account/",
      headers: { ...h.owner.headers, cookie: "ferry_lang=en; ferry_lang=de" },
    });
    expect(api.statusCode).toBe(400);
    expect(api.json()).toEqual({ code: "INVALID_REQUEST", detail: expect.stringContaining("ferry_lang") });
    expect(await victimSettings(client)).toEqual({ smtp: true, host: true });
  });

  it("refuses a form post from another origin (403) and leaves SMTP and recipient host unchanged", async () => {
    const { client } = await victim();
    const attempts: Record<string, string>[] = [
      { origin: "http://localhost:8081" },
      { origin: "http://attacker.example" },
      { origin: "null" },
      { origin: "null", "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of attempts) {
      client.origin = undefined;
      client.extraHeaders = headers;
      const csrf = client.csrf;
      const smtp = await client.post("/dashboard/settings/smtp", ATTACKER_SMTP);
      expect(smtp.statusCode, JSON.stringify(headers)).toBe(403);
      expect(smtp.body).toContain("not from this page");
      client.csrf = csrf;
      const branding = await client.post("/dashboard/branding", { css: "", recipient_host: "evil.example" });
      expect(branding.statusCode, JSON.stringify(headers)).toBe(403);
      client.csrf = csrf;
      // Signing out is a form post too.
      expect((await client.post("/dashboard/sign-out")).statusCode).toBe(403);
      client.csrf = csrf;
    }
    client.extraHeaders = {};
    client.origin = "http://localhost";
    expect(await victimSettings(client)).toEqual({ smtp: true, host: true });
    // This origin, Sec-Fetch-Site same-origin, and a client that is not a browser pass on the token.
    expect((await client.post("/dashboard/settings/profile", { name: "Same origin" })).statusCode).toBe(303);
    await client.get("/dashboard/settings");
    client.origin = undefined;
    client.extraHeaders = { "sec-fetch-site": "same-origin" };
    expect((await client.post("/dashboard/settings/profile", { name: "Fetch metadata" })).statusCode).toBe(
      303,
    );
    await client.get("/dashboard/settings");
    // What a browser sends from a page whose Referrer-Policy is no-referrer: Fetch Metadata decides.
    client.extraHeaders = { origin: "null", "sec-fetch-site": "same-origin" };
    expect((await client.post("/dashboard/settings/profile", { name: "Fetch metadata" })).statusCode).toBe(
      303,
    );
    await client.get("/dashboard/settings");
    client.extraHeaders = {};
    expect((await client.post("/dashboard/settings/profile", { name: "No browser" })).statusCode).toBe(303);
  });

  it("refuses sign-in without the pre-session nonce the sign-in form is bound to", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const form = { email: user.email, password: user.password, next: "/dashboard/" };
    // No token at all.
    const bare = new Client(h.t);
    const none = await bare.post("/dashboard/sign-in", form);
    expect(none.statusCode).toBe(403);
    expect(none.headers["set-cookie"] ?? "").not.toMatch(/ferry_dash=/);
    // A token without its nonce cookie (the attacker's own sign-in page's token).
    const attacker = new Client(h.t);
    await attacker.get("/dashboard/sign-in");
    expect(attacker.cookies.get("ferry_dash_pre")).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const victimBrowser = new Client(h.t);
    victimBrowser.csrf = attacker.csrf;
    expect((await victimBrowser.post("/dashboard/sign-in", form)).statusCode).toBe(403);
    // A token of another browser's nonce.
    await victimBrowser.get("/dashboard/sign-in");
    victimBrowser.csrf = attacker.csrf;
    expect((await victimBrowser.post("/dashboard/sign-in", form)).statusCode).toBe(403);
    // A signed-in session's page token is not a sign-in token.
    const signedIn = await signedInClient(h.t, user);
    signedIn.cookies.delete("ferry_dash");
    expect((await signedIn.post("/dashboard/sign-in", form)).statusCode).toBe(403);
    // The form's own token with its nonce signs in.
    await victimBrowser.get("/dashboard/sign-in");
    expect((await victimBrowser.post("/dashboard/sign-in", form)).statusCode).toBe(303);
    // The setup (account creation) form is bound to its nonce too.
    const { setupUrl } = await h.t.ferry.dashboard.users.invite(h.owner.accountId, "new@example.com", null);
    const setup = new Client(h.t);
    const path = new URL(setupUrl).pathname;
    await setup.get(path);
    setup.cookies.delete("ferry_dash_pre");
    const pw = "correct horse battery staple";
    expect((await setup.post(path, { password: pw, password_confirm: pw })).statusCode).toBe(403);
    await setup.get(path);
    expect((await setup.post(path, { password: pw, password_confirm: pw })).statusCode).toBe(303);
  });

  it("changes the session id at sign-in and at two-factor completion; old ids are dead", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new Client(h.t);
    await client.get("/dashboard/sign-in");
    const before = client.cookies.get("ferry_dash");
    await client.post("/dashboard/sign-in", { email: user.email, password: user.password });
    const afterPassword = client.cookies.get("ferry_dash");
    expect(afterPassword).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(afterPassword).not.toBe(before);
    // The pre-session nonce ends with the session's start.
    expect(client.cookies.has("ferry_dash_pre")).toBe(false);
    await client.get("/dashboard/sign-in/code");
    const codeToken = client.csrf;
    expect((await client.post("/dashboard/sign-in/code", { code: nextTotpCode(h.t, user) })).statusCode).toBe(
      303,
    );
    const afterCode = client.cookies.get("ferry_dash");
    expect(afterCode).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(afterCode).not.toBe(afterPassword);
    const stale = await h.t.app.inject({
      method: "GET",
      url: "/dashboard/sign-in/code",
      headers: { cookie: `ferry_dash=${afterPassword}` },
    });
    expect(stale.headers.location).toBe("/dashboard/sign-in");
    // The half-done session's token is not a token of the new one.
    client.csrf = codeToken;
    expect((await client.post("/dashboard/settings/profile", { name: "Stale" })).statusCode).toBe(403);
    expect((await client.get("/dashboard/applications")).statusCode).toBe(200);
  });

  it("a planted session cookie does not survive sign-in nor sign the victim into another account", async () => {
    const attackerUser = await createDashboardUser(h.t, { accountId: h.other.accountId });
    const attacker = await signedInClient(h.t, attackerUser);
    const planted = attacker.cookies.get("ferry_dash")!;
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    // The attacker's session cookie sits in the victim's jar; the victim signs in.
    const signIn = new Client(h.t);
    await signIn.get("/dashboard/sign-in");
    signIn.cookies.set("ferry_dash", planted);
    await signIn.post("/dashboard/sign-in", { email: user.email, password: user.password });
    await signIn.get("/dashboard/sign-in/code");
    expect((await signIn.post("/dashboard/sign-in/code", { code: nextTotpCode(h.t, user) })).statusCode).toBe(
      303,
    );
    expect(signIn.cookies.get("ferry_dash")).not.toBe(planted);
    const settings = await signIn.get("/dashboard/settings/team");
    expect(settings.body).toContain(user.email);
    expect(settings.body).not.toContain(attackerUser.email);
    // The planted session ended at the victim's sign-in: it signs nobody in any more.
    expect((await attacker.get("/dashboard/applications")).headers.location).toMatch(/^\/dashboard\/sign-in/);
  });
});
