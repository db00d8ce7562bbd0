/**
 * Team and settings actions over HTTP: authorization comes before any side effect (removing
 * another account's user ends none of their sessions), every team change, sign-out everywhere and
 * settings change is audited with the acting user, an invitation answers the same whether or not
 * the address is known to another account, and `ferry admin create-account` makes an account and
 * its first user or nothing.
 */
import { describe, expect, it } from "vitest";
import { callApi } from "../../../test/helpers/api.js";
import type { TestAccount } from "../../../test/helpers/app.js";
import { createDashboardUser, DashboardClient, signedInClient } from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";
import type { CommandFlags } from "../../shared/feature.js";

describe("dashboard team and settings actions", () => {
  const h = useHarness({ other: true });

  /** The account's audit entries of a model, newest first. */
  async function entries(account: TestAccount, model: string): Promise<{ code: string; value: string }[]> {
    const res = await callApi(h.t, account, "GET", "/v1/logentry/search/", undefined, {
      query: { page_size: "100", related_model: model },
    });
    expect(res.statusCode).toBe(200);
    return res.json().results;
  }

  /** Whether a client is still signed in. */
  async function signedIn(client: DashboardClient): Promise<boolean> {
    return (await client.get("/dashboard/settings")).statusCode === 200;
  }

  it("refuses to remove another account's user before touching their sessions", async () => {
    const mine = await signedInClient(h.t, await createDashboardUser(h.t, { accountId: h.owner.accountId }));
    const theirs = await createDashboardUser(h.t, { accountId: h.other.accountId });
    const theirClient = await signedInClient(h.t, theirs);
    await mine.get("/dashboard/settings/team");
    expect(
      (await mine.post(`/dashboard/settings/team/${theirs.userId}/remove`, { confirm: "remove" })).statusCode,
    ).toBe(404);
    expect(await signedIn(theirClient)).toBe(true);
    expect((await entries(h.owner, "user")).some((e) => e.value.startsWith("User removed"))).toBe(false);
  });

  it("audits invitations, removals and sign-out everywhere with the acting user", async () => {
    const me = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, me);
    await client.get("/dashboard/settings/team");
    const invited = await client.post("/dashboard/settings/team", { email: "new-colleague@example.com" });
    expect(invited.statusCode).toBe(303);
    const team = await client.get("/dashboard/settings/team");
    const id = /<tr id="user-(\d+)"><td>new-colleague@example.com</.exec(team.body)?.[1];
    expect(
      (await client.post(`/dashboard/settings/team/${id}/remove`, { confirm: "remove" })).statusCode,
    ).toBe(303);
    expect((await client.post("/dashboard/sign-out-everywhere")).statusCode).toBe(303);
    const values = (await entries(h.owner, "user")).map((e) => `${e.code} ${e.value}`);
    expect(values).toContain(`ABA-0010 User invited by user:${me.userId}`);
    expect(values).toContain(`ABA-0020 User removed by user:${me.userId}`);
    expect(
      values.some((v) => v.startsWith("ABA-0030 Signed out everywhere") && v.endsWith(`user:${me.userId}`)),
    ).toBe(true);
  });

  it("names the acting user in settings, SMTP, branding and callback changes", async () => {
    const me = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, me);
    await client.get("/dashboard/settings");
    const by = `by user:${me.userId}`;
    expect((await client.post("/dashboard/settings/profile", { name: "Acme" })).statusCode).toBe(303);
    const smtp = {
      host: "smtp.example.com",
      port: "2525",
      tls: "tls",
      username: "mailer",
      password: "s3cret-smtp-password",
      from_email: "files@example.com",
    };
    expect((await client.post("/dashboard/settings/smtp", smtp)).statusCode).toBe(303);
    expect((await client.post("/dashboard/settings/smtp/remove")).statusCode).toBe(303);
    await client.get("/dashboard/callbacks");
    expect((await client.post("/dashboard/callbacks/settings", { callback_shape: "flat" })).statusCode).toBe(
      303,
    );
    expect((await client.post("/dashboard/callbacks/secret/rotate")).statusCode).toBe(303);
    await client.get("/dashboard/branding");
    const boundary = "----ferryteam";
    const payload = [
      `--${boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n${client.csrf}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="css"\r\n\r\nbody{color:red}\r\n`,
      `--${boundary}--\r\n`,
    ].join("");
    const branding = await h.t.app.inject({
      method: "POST",
      url: "/dashboard/branding",
      headers: {
        ...client.header(),
        origin: "http://ferry.test",
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      payload,
    });
    expect(branding.statusCode).toBe(303);
    for (const model of ["account", "smtp_settings", "callback_settings", "callback_secret", "branding"]) {
      const values = (await entries(h.owner, model)).map((e) => e.value);
      expect(values.length, model).toBeGreaterThan(0);
      expect(
        values.every((v) => v.endsWith(by)),
        `${model}: ${values.join(" | ")}`,
      ).toBe(true);
    }
  });

  it("answers an invitation the same whether or not the address is another account's user", async () => {
    const mine = await signedInClient(h.t, await createDashboardUser(h.t, { accountId: h.owner.accountId }));
    const theirs = await createDashboardUser(h.t, { accountId: h.other.accountId });
    await mine.get("/dashboard/settings/team");
    const shape = async (email: string) => {
      const { post, page: res } = await mine.postAndGet("/dashboard/settings/team", { email });
      return {
        status: post.statusCode,
        // The list of users grows with each invitation: the answer around it is compared.
        body: res.body
          .replace(/<table[\s\S]*?<\/table>/g, "TABLE")
          .replaceAll(email, "EMAIL")
          .replace(/\/dashboard\/setup\/[A-Za-z0-9_-]{43}/g, "/dashboard/setup/TOKEN")
          .replace(/user-\d+/g, "user-N")
          .replace(/team\/\d+\/remove/g, "team/N/remove"),
      };
    };
    const known = await shape(theirs.email);
    const unknown = await shape("nobody-anywhere@example.com");
    expect(known).toEqual(unknown);
    expect(known.status).toBe(303);
    // The link of the known address cannot make a second sign-in: its holder is told at setup.
    const team = await mine.get("/dashboard/settings/team");
    expect(team.body).toContain(theirs.email);
    const { page: relink } = await mine.postAndGet("/dashboard/settings/team", { email: theirs.email });
    const link = /<code id="setup-link" class="fd-secret">([^<]+)<\/code>/.exec(relink.body)?.[1];
    const follower = new DashboardClient(h.t);
    const path = new URL(link!).pathname;
    expect((await follower.get(path)).statusCode).toBe(200);
    const password = "a long colleague passphrase";
    const refused = await follower.post(path, { password, password_confirm: password });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain("already signs in to another Ferry dashboard");
    // Their own sign-in is untouched.
    expect(await signedIn(await signedInClient(h.t, theirs))).toBe(true);
  });

  it("ferry admin create-account for an invited address makes the account and its first user", async () => {
    const mine = await signedInClient(h.t, await createDashboardUser(h.t, { accountId: h.owner.accountId }));
    await mine.get("/dashboard/settings/team");
    expect(
      (await mine.post("/dashboard/settings/team", { email: "invited-owner@example.com" })).statusCode,
    ).toBe(303);
    const command = h.t.ferry.commands.find((c) => c.name === "admin create-account")!;
    const printed: Record<string, unknown>[] = [];
    const out = { json: true, print: (obj: Record<string, unknown>) => printed.push(obj) };
    const flags = { json: true, positionals: [], email: "invited-owner@example.com" } as CommandFlags;
    expect(await command.run(out, flags)).toBe(0);
    const setup = new URL(String(printed[0]!.setup_url)).pathname;
    const first = new DashboardClient(h.t);
    expect((await first.get(setup)).statusCode).toBe(200);
    const password = "the new owner's passphrase";
    expect((await first.post(setup, { password, password_confirm: password })).statusCode).toBe(303);
    // An address that already signs in is refused before anything is created.
    const taken = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    await expect(command.run(out, { ...flags, email: taken.email })).rejects.toThrow(/already signs in/);
    const accounts = await h.t.ferry.database.db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", taken.email)
      .execute();
    expect(accounts).toHaveLength(0);
  });
});
