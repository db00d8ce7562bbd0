import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { freePort } from "../../../test/helpers/process.js";
import { startSmtpServer, type TestSmtpServer } from "../../../test/helpers/smtp.js";
import {
  callbackEvents,
  createRequest,
  notificationRow,
  runNotificationJobs,
  sendNotification,
} from "./notifications.fixtures.js";

describe("email through a real SMTP server", () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let custom: TestSmtpServer;
  let owner: TestAccount;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    custom = await startSmtpServer({ auth: { user: "acme", pass: "s3cret-pass" } });
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    t = await createTestApp({
      FERRY_ENVIRONMENT: "live",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_TLS: "none",
      MAIL_FROM: "Ferry <files@ferry.test>",
      DKIM_DOMAIN: "ferry.test",
      DKIM_SELECTOR: "mail2026",
      DKIM_PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      SMTP_CUSTOM_ALLOW_PRIVATE: "true",
    });
    owner = await createTestAccount(t);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await custom?.close();
  });

  it("delivers a signed email with subject, HTML and text parts and the recipient link", async () => {
    const req = await createRequest(
      t,
      owner,
      [{ first_name: "Ada", methods: [["email", "ada@example.com"]] }],
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

  it("records a permanent refusal (550) as a failure without retrying", async () => {
    const req = await createRequest(t, owner, [{ methods: [["email", "gone@example.com"]] }]);
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

  it("uses the account's own SMTP server, with the password stored encrypted and never shown", async () => {
    const acme = await createTestAccount(t);
    const put = await t.app.inject({
      method: "PUT",
      url: "/v1/settings/smtp/",
      headers: acme.headers,
      payload: {
        host: "127.0.0.1",
        port: custom.port,
        tls: "none",
        username: "acme",
        password: "s3cret-pass",
        from_email: "files@acme.example",
      },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({
      host: "127.0.0.1",
      port: custom.port,
      tls: "none",
      username: "acme",
      has_password: true,
      from_email: "files@acme.example",
      created: "2026-01-15T10:00:00.000000Z",
      updated: "2026-01-15T10:00:00.000000Z",
    });
    const get = await t.app.inject({ method: "GET", url: "/v1/settings/smtp/", headers: acme.headers });
    expect(get.json()).toEqual(put.json());
    const stored = await t.container.database.db
      .selectFrom("account_smtp_settings")
      .selectAll()
      .where("account_id", "=", acme.accountId)
      .executeTakeFirstOrThrow();
    expect(stored.password_ciphertext).not.toContain("s3cret");
    expect(stored.password_kid).toBe(t.container.keyRing.activeKid);

    const req = await createRequest(t, acme, [{ methods: [["email", "client@example.com"]] }]);
    await sendNotification(t, acme, req.id);
    await runNotificationJobs(t);
    const [mail] = await custom.waitFor(1);
    expect(mail!.user).toBe("acme");
    expect(mail!.from).toBe("files@acme.example");
    expect(mail!.to).toEqual(["client@example.com"]);

    const bad = await t.app.inject({
      method: "PUT",
      url: "/v1/settings/smtp/",
      headers: acme.headers,
      payload: { host: "not a host", port: 70000, tls: "ssl", from_email: "nope" },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      host: ["Enter a valid host name or IP address."],
      port: ["Enter an integer between 1 and 65535."],
      tls: ['"tls" must be one of none, starttls, tls.'],
      from_email: ["Enter a valid email address."],
    });
    const del = await t.app.inject({ method: "DELETE", url: "/v1/settings/smtp/", headers: acme.headers });
    expect(del.statusCode).toBe(204);
    const after = await t.app.inject({ method: "GET", url: "/v1/settings/smtp/", headers: acme.headers });
    expect(after.statusCode).toBe(404);
  });
});

describe("email when the SMTP server is down", () => {
  let t: TestApp;
  let port: number;
  let owner: TestAccount;

  beforeAll(async () => {
    port = await freePort();
    t = await createTestApp({
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(port),
      SMTP_TLS: "none",
      JOB_MAX_ATTEMPTS: "3",
      JOB_BACKOFF_BASE_MS: "1000",
    });
    owner = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  it("retries and delivers once the server is back (nothing lost)", async () => {
    const req = await createRequest(t, owner, [{ methods: [["email", "later@example.com"]] }]);
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
    const req = await createRequest(t, owner, [{ methods: [["email", "never@example.com"]] }]);
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
    const job = await t.container.database.db
      .selectFrom("jobs")
      .select(["state"])
      .where("kind", "=", "notifications.deliver")
      .where("payload", "=", JSON.stringify({ notification_id: id }))
      .executeTakeFirstOrThrow();
    expect(job.state).toBe("done");
  });

  it("refuses an account's SMTP host on a private address unless the deployment allows it", async () => {
    const acme = await createTestAccount(t);
    const put = await t.app.inject({
      method: "PUT",
      url: "/v1/settings/smtp/",
      headers: acme.headers,
      payload: { host: "127.0.0.1", port: 25, tls: "none", from_email: "files@acme.example" },
    });
    expect(put.statusCode).toBe(200);
    const req = await createRequest(t, acme, [{ methods: [["email", "x@example.com"]] }]);
    const { body } = await sendNotification(t, acme, req.id);
    await runNotificationJobs(t);
    const n = await notificationRow(t, body.contact_notification_send[0].id);
    expect(n).toMatchObject({
      status: "failed",
      error: "The custom SMTP host 127.0.0.1 resolves to a private address, which is refused.",
    });
  });
});
