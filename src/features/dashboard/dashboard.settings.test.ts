/**
 * Account settings and the team over HTTP: the name recipients see, push expiry days, custom SMTP
 * (password never shown back), inviting a colleague who signs in, removing a user.
 */
import { describe, expect, it } from "vitest";
import {
  createDashboardUser,
  DashboardClient,
  nextTotpCode,
  signedInClient,
} from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";

const XSS = `<script>alert(1)</script>"&`;

describe("dashboard settings", () => {
  const h = useHarness({ other: true });

  it("sets the name shown on recipient pages, escaped", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    await client.get("/dashboard/settings");
    const saved = await client.post("/dashboard/settings/profile", { name: `  Acme ${XSS} ` });
    expect(saved.statusCode).toBe(303);
    const page = await client.get(String(saved.headers.location));
    expect(page.body).toContain("Profile saved.");
    expect(page.body).not.toContain("<script>alert(1)");
    expect(page.body).toContain("Acme &lt;script>alert(1)&lt;/script>&quot;&amp;");
    const account = await h.call("GET", "/v1/account/");
    expect(account.json().name).toBe(`Acme ${XSS}`);
    const tooLong = await client.post("/dashboard/settings/profile", { name: "x".repeat(201) });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain("at most 200 characters");
  });

  it("sets push_expiry_days, used by new push requests", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    expect((await client.get("/dashboard/settings")).body).toContain('value="14"');
    expect((await client.post("/dashboard/settings/requests", { push_expiry_days: "0" })).statusCode).toBe(
      400,
    );
    expect((await client.post("/dashboard/settings/requests", { push_expiry_days: "30" })).statusCode).toBe(
      303,
    );
    const now = h.t.clock.now().getTime();
    const push = (await h.call("POST", "/v1/request/", { type: "push" })).json();
    expect(push.expires_at).toBe(new Date(now + 30 * 86_400_000).toISOString().replace("Z", "000Z"));
    expect((await client.get("/dashboard/settings")).body).toContain('value="30"');
  });

  it("stores custom SMTP settings and never shows the password back", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    await client.get("/dashboard/settings");
    const bad = await client.post("/dashboard/settings/smtp", { host: "", from_email: "nope" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("This field is required.");
    const form = {
      host: "smtp.example.com",
      port: "2525",
      tls: "tls",
      username: "mailer",
      password: "s3cret-smtp-password",
      from_email: "files@example.com",
    };
    expect((await client.post("/dashboard/settings/smtp", form)).statusCode).toBe(303);
    const page = await client.get("/dashboard/settings");
    expect(page.body).toContain('value="smtp.example.com"');
    expect(page.body).toContain("A password is stored (never shown)");
    expect(page.body).not.toContain("s3cret-smtp-password");
    // Saving without a password keeps the stored one.
    expect(
      (await client.post("/dashboard/settings/smtp", { ...form, password: "", port: "587" })).statusCode,
    ).toBe(303);
    const api = await h.call("GET", "/v1/settings/smtp/");
    expect(api.json()).toMatchObject({ port: 587, has_password: true, host: "smtp.example.com" });
    expect((await client.post("/dashboard/settings/smtp/remove")).statusCode).toBe(303);
    expect((await h.call("GET", "/v1/settings/smtp/")).statusCode).toBe(404);
  });

  it("invites a colleague who sets up and signs in, then removes them", async () => {
    const owner = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, owner);
    await client.get("/dashboard/settings/team");
    const { page: invited } = await client.postAndGet("/dashboard/settings/team", {
      email: "Colleague@Example.com",
    });
    expect(invited.statusCode).toBe(200);
    // Shown once: a reload of that page shows no link and invites nobody again.
    expect((await client.get("/dashboard/settings/team?invited=1")).body).not.toContain('id="setup-link"');
    const link = /<code id="setup-link" class="fd-secret">([^<]+)<\/code>/.exec(invited.body)?.[1];
    expect(link).toMatch(/^http:\/\/ferry\.test\/dashboard\/setup\/[A-Za-z0-9_-]{43}$/);
    // The colleague follows the link.
    const colleague = new DashboardClient(h.t);
    const path = new URL(link!).pathname;
    expect((await colleague.get(path)).body).toContain("colleague@example.com");
    const weak = await colleague.post(path, { password: "short", password_confirm: "short" });
    expect(weak.statusCode).toBe(400);
    const password = "a long colleague passphrase";
    expect((await colleague.post(path, { password, password_confirm: password })).statusCode).toBe(303);
    const enrol = await colleague.get("/dashboard/setup/two-factor");
    expect(enrol.body).toContain("otpauth://totp/");
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)![1]!;
    const user = { email: "colleague@example.com", password, totpSecret: secret, lastStep: 0 } as Parameters<
      typeof nextTotpCode
    >[1];
    expect((await colleague.post("/dashboard/setup/two-factor", { code: "000000" })).statusCode).toBe(400);
    const done = await colleague.post("/dashboard/setup/two-factor", { code: nextTotpCode(h.t, user) });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain("recovery codes");
    expect((await colleague.get("/dashboard/applications")).statusCode).toBe(200);
    // The link is used up.
    expect((await new DashboardClient(h.t).get(path)).statusCode).toBe(404);

    const team = await client.get("/dashboard/settings/team");
    expect(team.body).toContain("colleague@example.com");
    const id = /<tr id="user-(\d+)"><td>colleague@example.com</.exec(team.body)?.[1];
    expect(id).toBeDefined();
    const removed = await client.post(`/dashboard/settings/team/${id}/remove`, { confirm: "remove" });
    expect(removed.statusCode).toBe(303);
    expect((await colleague.get("/dashboard/applications")).statusCode).toBe(303);
  });

  it("keeps accounts apart: another account's user is 404 and not listed", async () => {
    const mine = await signedInClient(h.t, await createDashboardUser(h.t, { accountId: h.owner.accountId }));
    const theirs = await createDashboardUser(h.t, { accountId: h.other.accountId });
    await mine.get("/dashboard/settings/team");
    expect(
      (await mine.post(`/dashboard/settings/team/${theirs.userId}/remove`, { confirm: "remove" })).statusCode,
    ).toBe(404);
    const team = await mine.get("/dashboard/settings/team");
    expect(team.body).not.toContain(theirs.email);
    // B still signs in.
    expect((await (await signedInClient(h.t, theirs)).get("/dashboard/settings")).statusCode).toBe(200);
  });
});
