/**
 * Dashboard test kit: users created through the real setup flow (setup link → password → TOTP
 * enrolment, codes computed from the shown secret), an HTTP client that keeps the session and
 * CSRF cookies and reads each page's CSRF token, and sign-in of a Chromium page.
 *
 *   const owner = await createDashboardUser(t, { accountId: h.owner.accountId });
 *   const client = await signedInClient(t, owner);          // HTTP (app.inject)
 *   const res = await client.get("/dashboard/applications");
 *   await client.post("/dashboard/applications", { name: "CI" });   // csrf_token added
 *   await signInPage(t, page, baseUrl, owner);              // Playwright, lands on /dashboard/
 */
import type { Page } from "playwright-core";
import { totpCodeAt } from "../../src/features/dashboard/index.js";
import { randomId } from "../../src/shared/ids.js";
import type { TestApp } from "./app.js";

/** A dashboard user with TOTP enrolled. */
export interface DashboardUser {
  userId: number;
  accountId: number;
  email: string;
  password: string;
  /** Base32 TOTP secret, as the enrolment page showed it. */
  totpSecret: string;
  /** Unused recovery codes, as shown once after enrolment. */
  recoveryCodes: string[];
  /** The last TOTP step accepted for this user (the kit moves the clock on to avoid replays). */
  lastStep: number;
}

type Inject = Awaited<ReturnType<TestApp["app"]["inject"]>>;

/** A cookie-keeping HTTP client of the dashboard through `app.inject`. */
export class DashboardClient {
  cookies = new Map<string, string>();
  csrf = "";
  /**
   * The Origin its form posts send, as a browser does (`app.inject` asks for `localhost`);
   * undefined sends none, like a client that is not a browser.
   */
  origin: string | undefined = "http://localhost";
  /** Headers sent with every call (a Host, Sec-Fetch-Site...). */
  extraHeaders: Record<string, string> = {};

  constructor(readonly t: TestApp) {
    // With DASHBOARD_BASE_URL the dashboard answers on its own host only, as a browser asks it.
    const own = t.ferry.config.dashboardBaseUrl;
    if (own) {
      this.extraHeaders = { host: new URL(own).host };
      this.origin = new URL(own).origin;
    }
  }

  private keep(res: Inject): void {
    const set = res.headers["set-cookie"];
    for (const line of (Array.isArray(set) ? set : set ? [set] : []) as string[]) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(pair!.slice(0, eq));
      else this.cookies.set(pair!.slice(0, eq), value);
    }
    const token = /name="csrf_token" value="([^"]+)"/.exec(res.body);
    if (token) this.csrf = token[1]!;
  }

  /** The Cookie header of the jar. */
  header(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {};
  }

  /** GETs a path, keeping cookies and the page's CSRF token. */
  async get(path: string): Promise<Inject> {
    const res = await this.t.app.inject({
      method: "GET",
      url: path,
      headers: { ...this.header(), ...this.extraHeaders },
    });
    this.keep(res);
    return res;
  }

  /** POSTs a form with the current CSRF token (pass csrf_token to override it). */
  async post(path: string, form: Record<string, string | string[]> = {}): Promise<Inject> {
    const body = new URLSearchParams();
    body.set("csrf_token", this.csrf);
    for (const [k, v] of Object.entries(form)) {
      if (Array.isArray(v)) {
        body.delete(k);
        for (const item of v) body.append(k, item);
      } else body.set(k, v);
    }
    const res = await this.t.app.inject({
      method: "POST",
      url: path,
      headers: {
        ...this.header(),
        ...(this.origin === undefined ? {} : { origin: this.origin }),
        ...this.extraHeaders,
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: body.toString(),
    });
    this.keep(res);
    return res;
  }

  /**
   * POSTs a form that answers with a 303 (post/redirect/get) and GETs where it leads; throws when
   * the answer is not such a redirect. Returns both answers.
   */
  async postAndGet(
    path: string,
    form: Record<string, string | string[]> = {},
  ): Promise<{ post: Inject; page: Inject }> {
    const post = await this.post(path, form);
    if (post.statusCode !== 303)
      throw new Error(`POST ${path}: expected 303, got ${post.statusCode}: ${post.body.slice(0, 400)}`);
    return { post, page: await this.get(String(post.headers.location)) };
  }
}

/** Moves the test clock on past the user's last accepted TOTP step and returns the code of now. */
export function nextTotpCode(t: TestApp, user: DashboardUser): string {
  const step = Math.floor(t.clock.now().getTime() / 30_000);
  if (step <= user.lastStep) t.clock.advance((user.lastStep - step + 1) * 30_000);
  user.lastStep = Math.floor(t.clock.now().getTime() / 30_000);
  return totpCodeAt(user.totpSecret, t.clock.now());
}

function expectStatus(res: Inject, status: number, what: string): void {
  if (res.statusCode !== status)
    throw new Error(`${what}: expected ${status}, got ${res.statusCode}: ${res.body.slice(0, 400)}`);
}

/**
 * Invites a user to an account (a new account when none is given), then goes through the setup
 * link, the password and TOTP enrolment over HTTP. Returns the user and the signed-in client.
 */
export async function createDashboardUserWithClient(
  t: TestApp,
  opts: { accountId?: number; email?: string; password?: string } = {},
): Promise<{ user: DashboardUser; client: DashboardClient }> {
  const email = opts.email ?? `user-${randomId(6).toLowerCase()}@example.com`;
  const password = opts.password ?? "correct horse battery staple";
  const accountId =
    opts.accountId ??
    (await t.ferry.auth.createAccount(`acct-${randomId(6).toLowerCase()}@example.com`, "Acme")).id;
  const { user, setupUrl } = await t.ferry.dashboard.users.invite(accountId, email, null);
  const path = new URL(setupUrl).pathname;
  const client = new DashboardClient(t);
  expectStatus(await client.get(path), 200, "setup page");
  const set = await client.post(path, { password, password_confirm: password });
  expectStatus(set, 303, "set password");
  const enrol = await client.get("/dashboard/setup/two-factor");
  expectStatus(enrol, 200, "enrolment page");
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)?.[1];
  if (!secret) throw new Error("no TOTP secret on the enrolment page");
  const created: DashboardUser = {
    userId: user.id,
    accountId,
    email,
    password,
    totpSecret: secret,
    recoveryCodes: [],
    lastStep: 0,
  };
  const done = await client.post("/dashboard/setup/two-factor", { code: nextTotpCode(t, created) });
  expectStatus(done, 200, "confirm enrolment");
  created.recoveryCodes = [
    ...done.body.matchAll(/<code>([0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4})<\/code>/g),
  ].map((m) => m[1]!);
  // The session changed at enrolment: read a page's token of the new session.
  expectStatus(await client.get("/dashboard/applications"), 200, "first page");
  return { user: created, client };
}

/** createDashboardUserWithClient without the client. */
export async function createDashboardUser(
  t: TestApp,
  opts: { accountId?: number; email?: string; password?: string } = {},
): Promise<DashboardUser> {
  return (await createDashboardUserWithClient(t, opts)).user;
}

/** Signs `user` in over HTTP (password, then a fresh TOTP code) and returns the client. */
export async function signedInClient(t: TestApp, user: DashboardUser): Promise<DashboardClient> {
  const client = new DashboardClient(t);
  await client.get("/dashboard/sign-in");
  const first = await client.post("/dashboard/sign-in", {
    email: user.email,
    password: user.password,
    next: "/dashboard/",
  });
  expectStatus(first, 303, "sign-in password");
  await client.get("/dashboard/sign-in/code");
  const second = await client.post("/dashboard/sign-in/code", {
    code: nextTotpCode(t, user),
    next: "/dashboard/",
  });
  expectStatus(second, 303, "sign-in code");
  // The session changed at sign-in: read a page's token of the new session.
  expectStatus(await client.get("/dashboard/applications"), 200, "first page");
  return client;
}

/** Signs `user` in through the pages in a Chromium page (base: the listening server's URL). */
export async function signInPage(t: TestApp, page: Page, base: string, user: DashboardUser): Promise<void> {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(/\/dashboard\/sign-in\/code/);
  await page.getByLabel("Code from your authenticator app").fill(nextTotpCode(t, user));
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/dashboard/sign-in"));
}
