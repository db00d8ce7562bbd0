/**
 * Dashboard lockout under concurrent attempts: forty attempts at once (39 wrong, the right one in
 * the middle) at the password, TOTP and recovery code steps check at most five, the right one does
 * not sign in once the limit is reached, and the user ends locked. The password step answers an
 * unknown email, a wrong password and a locked user with the same page.
 */
import { describe, expect, it } from "vitest";
import { callApi } from "../../../test/helpers/api.js";
import {
  createDashboardUser,
  DashboardClient,
  type DashboardUser,
  nextTotpCode,
} from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { totpCodeAt } from "./totp.js";
import { LOCKOUT_THRESHOLD, PASSWORD_REFUSED } from "./users.service.js";

describe("dashboard lockout under concurrent attempts", () => {
  const h = useHarness();

  /** The user's AAA-0002 values, newest first. */
  async function refusals(user: DashboardUser): Promise<string[]> {
    const res = await callApi(h.t, h.owner, "GET", "/v1/logentry/search/", undefined, {
      query: { page_size: "100", related_model: "user", relation_key: String(user.userId) },
    });
    expect(res.statusCode).toBe(200);
    return (res.json().results as { code: string; value: string }[])
      .filter((e) => e.code === "AAA-0002")
      .map((e) => e.value);
  }

  /** Forty form posts at once: 20 wrong, the right one, 19 wrong (started in that order). */
  function burst(client: DashboardClient, path: string, field: string, wrong: string[], right: string) {
    const values = [...wrong.slice(0, 20), right, ...wrong.slice(20, 39)];
    return Promise.all(values.map((value) => client.post(path, { [field]: value, next: "/dashboard/" })));
  }

  /** True when the user is locked: the right password is refused. */
  async function locked(user: DashboardUser): Promise<boolean> {
    const c = new DashboardClient(h.t);
    await c.get("/dashboard/sign-in");
    const res = await c.post("/dashboard/sign-in", { email: user.email, password: user.password });
    return res.statusCode === 400;
  }

  it("checks at most five of forty concurrent passwords and locks the user", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    const wrong = Array.from({ length: 39 }, (_, i) => `wrong password number ${i}`);
    const passwords = [...wrong.slice(0, 20), user.password, ...wrong.slice(20)];
    const answers = await Promise.all(
      passwords.map((password) => client.post("/dashboard/sign-in", { email: user.email, password })),
    );
    expect(answers[20]!.statusCode).toBe(400);
    expect(answers.filter((a) => a.statusCode === 303)).toHaveLength(0);
    const values = await refusals(user);
    expect(values.filter((v) => /Wrong password/.test(v)).length).toBeLessThanOrEqual(LOCKOUT_THRESHOLD);
    expect(values.filter((v) => /locked out after/.test(v)).length).toBeGreaterThanOrEqual(
      40 - LOCKOUT_THRESHOLD,
    );
    expect(await locked(user)).toBe(true);
  });

  it("checks at most five of forty concurrent TOTP codes and the right one does not sign in", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    expect(
      (await client.post("/dashboard/sign-in", { email: user.email, password: user.password })).statusCode,
    ).toBe(303);
    await client.get("/dashboard/sign-in/code");
    const right = nextTotpCode(h.t, user);
    const now = h.t.clock.now().getTime();
    const near = new Set([-30_000, 0, 30_000].map((d) => totpCodeAt(user.totpSecret, new Date(now + d))));
    const wrong: string[] = [];
    for (let n = 100_000; wrong.length < 39; n += 7919) if (!near.has(String(n))) wrong.push(String(n));
    const answers = await burst(client, "/dashboard/sign-in/code", "code", wrong, right);
    expect(answers.filter((a) => a.statusCode === 303)).toHaveLength(0);
    expect(answers[20]!.body).toContain("locked");
    const checked = answers.filter((a) => a.body.includes("That code is not right.")).length;
    expect(checked).toBeLessThanOrEqual(LOCKOUT_THRESHOLD);
    const values = await refusals(user);
    expect(values.filter((v) => /Wrong two-factor code/.test(v)).length).toBeLessThanOrEqual(
      LOCKOUT_THRESHOLD,
    );
    expect(await locked(user)).toBe(true);
  });

  it("checks at most five of forty concurrent recovery codes and the right one does not sign in", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    await client.post("/dashboard/sign-in", { email: user.email, password: user.password });
    await client.get("/dashboard/sign-in/code");
    const wrong = Array.from({ length: 39 }, (_, i) => `abcd-ef01-2345-${String(6789 + i).padStart(4, "0")}`);
    const answers = await burst(client, "/dashboard/sign-in/code", "code", wrong, user.recoveryCodes[0]!);
    expect(answers.filter((a) => a.statusCode === 303)).toHaveLength(0);
    const checked = answers.filter((a) => a.body.includes("That code is not right.")).length;
    expect(checked).toBeLessThanOrEqual(LOCKOUT_THRESHOLD);
    expect(await locked(user)).toBe(true);
    // The recovery code was never checked, so it still works once the lock ends.
    h.t.clock.advance(15 * 60_000 + 1000);
    const again = new DashboardClient(h.t);
    await again.get("/dashboard/sign-in");
    await again.post("/dashboard/sign-in", { email: user.email, password: user.password });
    await again.get("/dashboard/sign-in/code");
    expect((await again.post("/dashboard/sign-in/code", { code: user.recoveryCodes[0]! })).statusCode).toBe(
      303,
    );
  });

  it("keeps the lock that wrong passwords set while the right one was being checked", async () => {
    // The right password first, eight wrong ones at once: its success takes back only its own
    // count, and only if nothing was counted meanwhile, so the lock the others set stays.
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const a = new DashboardClient(h.t);
    await a.get("/dashboard/sign-in");
    const wrong = Array.from({ length: 8 }, (_, i) => `another wrong one ${i}`);
    await Promise.all([
      a.post("/dashboard/sign-in", { email: user.email, password: user.password }),
      ...wrong.map((password) => a.post("/dashboard/sign-in", { email: user.email, password })),
    ]);
    expect(await locked(user)).toBe(true);
  });

  it("answers an unknown email, a wrong password and a locked user with the same page", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = new DashboardClient(h.t);
    await client.get("/dashboard/sign-in");
    const shape = async (email: string, password: string) => {
      const res = await client.post("/dashboard/sign-in", { email, password });
      return {
        status: res.statusCode,
        cookies: res.headers["set-cookie"] ?? null,
        body: res.body
          .replaceAll(email, "EMAIL")
          .replace(/name="csrf_token" value="[^"]+"/g, 'name="csrf_token" value="TOKEN"'),
      };
    };
    const unknown = await shape("nobody-here@example.com", "whatever whatever");
    const wrongOnce = await shape(user.email, "wrong password 0");
    expect(wrongOnce).toEqual(unknown);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toContain(PASSWORD_REFUSED);
    for (let i = 1; i < LOCKOUT_THRESHOLD; i++) await shape(user.email, `wrong password ${i}`);
    const lockedAnswer = await shape(user.email, user.password);
    expect(lockedAnswer).toEqual(unknown);
    const values = await refusals(user);
    expect(values.some((v) => /Refused: locked out/.test(v))).toBe(true);
  });
});
