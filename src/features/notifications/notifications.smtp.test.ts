import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../../test/helpers/api.js";
import { createTestAccount, type TestAccount } from "../../../test/helpers/app.js";
import { buildMedia, buildSmtpSettings, sendDraft } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  callbackEvents,
  notifiableRequest,
  notificationRow,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";
import { freePort } from "../../../test/helpers/process.js";
import { startSmtpServer, type TestSmtpServer } from "../../../test/helpers/smtp.js";

describe("email through a real SMTP server", () => {
  let smtp: TestSmtpServer;
  let custom: TestSmtpServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    custom = await startSmtpServer({ auth: { user: "acme", pass: "s3cret-pass" } });
  });
  afterAll(async () => {
    await smtp?.close();
    await custom?.close();
  });
  const h = useHarness({
    env: () => ({
      FERRY_ENVIRONMENT: "live",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_TLS: "none",
      MAIL_FROM: "Ferry <files@ferry.test>",
      DKIM_DOMAIN: "ferry.test",
      DKIM_SELECTOR: "mail2026",
      DKIM_PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
        .privateKey.export({ type: "pkcs8", format: "pem" })
        .toString(),
      SMTP_CUSTOM_ALLOW_PRIVATE: "true",
    }),
  });

  it("delivers a signed email with subject, HTML and text parts and the recipient link", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(
      t,
      owner,
      { first_name: "Ada", methods: [["email", "ada@example.com"]] },
      {
        type: "push",
        long_message_subject: "Your documents <ready>",
        long_message: "Hello Ada,\n\nHere are the <b>papers</b>.",
      },
    );
    expect((await sendNotification(t, owner, req.id)).status).toBe(200);
    await runNotificationJobs(t);
    const [mail] = await smtp.waitFor(1);
    const url = `http://ferry.test/r/${req.identifier}/`;
    expect(mail!.to).toEqual(["ada@example.com"]);
    expect(mail!.from).toBe("files@ferry.test");
    const parsed = mail!.parsed;
    expect(parsed.subject).toBe("Your documents <ready>");
    expect(parsed.from?.text).toBe('"Ferry" <files@ferry.test>');
    expect(parsed.headers.get("auto-submitted")).toBe("auto-generated");
    expect(String(parsed.html)).toContain(`<a href="${url}"`);
    expect(String(parsed.html)).toContain("Here are the &lt;b&gt;papers&lt;/b&gt;.");
    expect(String(parsed.html)).toMatch(/\/t\/o\/[A-Za-z0-9_-]{32}\.gif/);
    expect(String(parsed.html)).not.toContain("SANDBOX");
    expect(parsed.text).toContain("Hello Ada,\n\nHere are the <b>papers</b>.");
    expect(parsed.text).toContain(`View and download the files (${url})`);
    const dkim = /^DKIM-Signature:(.*(?:\r?\n[ \t].*)*)/im.exec(mail!.raw)?.[1] ?? "";
    expect(dkim).toMatch(/\bd=ferry\.test;/);
    expect(dkim).toMatch(/\bs=mail2026;/);
    expect(dkim).toMatch(/\bb=[A-Za-z0-9+/=\s]{40,}/);
  });

  it("lists a push request's files, their total size and the expiry in the default email", async () => {
    const { t, owner } = h;
    const draft = await notifiableRequest(t, owner, [["email", "files@example.com"]], {
      type: "push",
      is_draft: true,
      message: "Your papers.",
    });
    await buildMedia(t, owner, {
      request: draft.id,
      name: "lease <signed>.pdf",
      data: Buffer.alloc(31_600, 1),
    });
    await buildMedia(t, owner, { request: draft.id, name: "annex.txt", data: "annex" });
    const req = await sendDraft(t, owner, draft.id);
    const before = smtp.messages.length;
    expect((await sendNotification(t, owner, req.id)).status).toBe(200);
    await runNotificationJobs(t);
    const mail = (await smtp.waitFor(before + 1)).find((m) => m.to.includes("files@example.com"))!;
    const html = String(mail.parsed.html);
    expect(html).toContain("<li>lease &lt;signed&gt;.pdf <span");
    expect(html).toContain("(31.6 KB)</span></li>");
    expect(html).toContain("<li>annex.txt <span");
    expect(html).toMatch(/2 files · 31\.6 KB · available until \d{1,2} \w+ \d{4} at \d\d:\d\d UTC/);
    expect(mail.parsed.text).toContain("2 files · 31.6 KB · available until");
  });

  it("records a permanent refusal (550) as a failure without retrying", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["email", "gone@example.com"]]);
    const { body } = await sendNotification(t, owner, req.id);
    smtp.setMode("permanent-failure");
    try {
      await runNotificationJobs(t);
    } finally {
      smtp.setMode("accept");
    }
    const n = await notificationRow(t, body.contact_notification_send[0].id);
    expect(n).toMatchObject({ status: "failed", was_sent: 0, attempts: 1 });
    expect(n.error).toMatch(/^SMTP server answered 550/);
    const [event] = await callbackEvents(t, req.id);
    expect(event!.body).toMatchObject({ status: false, message: n.error, notification: { was_sent: false } });
  });

  describe("an account with its own SMTP server", () => {
    let acme: TestAccount;
    let stored: Json;

    beforeAll(async () => {
      acme = await createTestAccount(h.t);
      stored = await buildSmtpSettings(h.t, acme, {
        port: custom.port,
        username: "acme",
        password: "s3cret-pass",
      });
    });

    it("stores the settings and answers them without the password", () => {
      expect(stored).toEqual({
        host: "127.0.0.1",
        port: custom.port,
        tls: "none",
        username: "acme",
        has_password: true,
        from_email: "files@acme.example",
        created: "2026-01-15T10:00:00.000000Z",
        updated: "2026-01-15T10:00:00.000000Z",
      });
    });

    it("reads the same settings back", async () => {
      expect((await h.call("GET", "/v1/settings/smtp/", undefined, acme)).json()).toEqual(stored);
    });

    it("stores the password encrypted with the active key", async () => {
      const row = await h.t.ferry.database.db
        .selectFrom("account_smtp_settings")
        .selectAll()
        .where("account_id", "=", acme.accountId)
        .executeTakeFirstOrThrow();
      expect(row.password_ciphertext).not.toContain("s3cret");
      expect(row.password_kid).toBe(h.t.ferry.keyRing.activeKid);
    });

    it("sends the account's email through its server, logged in as its user, from its address", async () => {
      const req = await notifiableRequest(h.t, acme, [["email", "client@example.com"]]);
      await sendNotification(h.t, acme, req.id);
      await runNotificationJobs(h.t);
      const [mail] = await custom.waitFor(1);
      expect(mail!.user).toBe("acme");
      expect(mail!.from).toBe("files@acme.example");
      expect(mail!.to).toEqual(["client@example.com"]);
    });

    it("refuses invalid settings with 400 naming each field", async () => {
      const bad = await h.call(
        "PUT",
        "/v1/settings/smtp/",
        { host: "not a host", port: 70000, tls: "ssl", from_email: "nope" },
        acme,
      );
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({
        host: ["Enter a valid host name or IP address."],
        port: ["Enter an integer between 1 and 65535."],
        tls: ['"tls" must be one of none, starttls, tls.'],
        from_email: ["Enter a valid email address."],
      });
    });

    it("deletes the settings (204), after which reading them is 404", async () => {
      expect((await h.call("DELETE", "/v1/settings/smtp/", undefined, acme)).statusCode).toBe(204);
      expect((await h.call("GET", "/v1/settings/smtp/", undefined, acme)).statusCode).toBe(404);
    });
  });
});

describe("email when the SMTP server is down", () => {
  let port: number;

  beforeAll(async () => {
    port = await freePort();
  });
  const h = useHarness({
    env: () => ({
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(port),
      SMTP_TLS: "none",
      JOB_MAX_ATTEMPTS: "3",
      JOB_BACKOFF_BASE_MS: "1000",
    }),
  });

  it("retries and delivers once the server is back (nothing lost)", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["email", "later@example.com"]]);
    const { body } = await sendNotification(t, owner, req.id);
    const id = body.contact_notification_send[0].id;
    await runNotificationJobs(t);
    const first = await notificationRow(t, id);
    expect(first).toMatchObject({ status: "queued", attempts: 1 });
    expect(first.error).toMatch(/^SMTP delivery failed: ECONNECTION|^SMTP delivery failed: ESOCKET/);
    expect(await callbackEvents(t, req.id)).toEqual([]);

    const smtp = await startSmtpServer({ port });
    try {
      t.clock.advance(60_000);
      await runNotificationJobs(t);
      const [mail] = await smtp.waitFor(1);
      expect(mail!.to).toEqual(["later@example.com"]);
      expect(await notificationRow(t, id)).toMatchObject({
        status: "sent",
        was_sent: 1,
        attempts: 2,
        error: null,
      });
      const events = await callbackEvents(t, req.id);
      expect(events.map((e) => e.body.status)).toEqual([true]);
    } finally {
      await smtp.close();
    }
  });

  it("records the failure after the last attempt", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["email", "never@example.com"]]);
    const { body } = await sendNotification(t, owner, req.id);
    const id = body.contact_notification_send[0].id;
    for (let i = 0; i < 3; i++) {
      await runNotificationJobs(t);
      t.clock.advance(60_000);
    }
    const n = await notificationRow(t, id);
    expect(n).toMatchObject({ status: "failed", was_sent: 0, attempts: 3 });
    expect(n.error).toMatch(/^Gave up after 3 attempts: SMTP delivery failed/);
    const events = await callbackEvents(t, req.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.body).toMatchObject({ status: false, message: n.error });
    const job = await t.ferry.database.db
      .selectFrom("jobs")
      .select(["state"])
      .where("kind", "=", "notifications.deliver")
      .where("payload", "=", JSON.stringify({ notification_id: id }))
      .executeTakeFirstOrThrow();
    expect(job.state).toBe("done");
  });

  it("refuses an account's SMTP host on a private address unless the deployment allows it", async () => {
    const { t } = h;
    const acme = await createTestAccount(t);
    await buildSmtpSettings(t, acme);
    const req = await notifiableRequest(t, acme, [["email", "x@example.com"]]);
    const { body } = await sendNotification(t, acme, req.id);
    await runNotificationJobs(t);
    const n = await notificationRow(t, body.contact_notification_send[0].id);
    expect(n).toMatchObject({
      status: "failed",
      error: "The custom SMTP host 127.0.0.1 resolves to a private address, which is refused.",
    });
  });
});
