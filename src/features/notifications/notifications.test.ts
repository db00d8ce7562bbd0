import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import {
  auditEntries,
  callbackEvents,
  createRequest,
  notificationRow,
  runNotificationJobs,
  sendNotification,
} from "./notifications.fixtures.js";

const SENT_AT = "2026-01-15T10:00:00.000Z";

describe("send_notification with the capture transports (sandbox)", () => {
  let t: TestApp;
  let owner: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createTestAccount(t);
    other = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  it("queues one notification per contact method and answers the spec's object", async () => {
    const req = await createRequest(t, owner, [
      {
        first_name: "Jane",
        last_name: "Doe",
        methods: [
          ["email", "jane@example.com"],
          ["sms", "+14155550123"],
        ],
      },
    ]);
    const [email, sms] = req.contact[0].contactmethod;
    const { status, body } = await sendNotification(t, owner, req.id);
    expect(status).toBe(200);
    expect(body).toEqual({
      contact_notification_send: [
        {
          id: expect.any(Number),
          sent_at: SENT_AT,
          contactmethod: { id: email.id, interface_class: "email", value: "jane@example.com" },
        },
        {
          id: expect.any(Number),
          sent_at: SENT_AT,
          contactmethod: { id: sms.id, interface_class: "sms", value: "+14155550123" },
        },
      ],
      contact_notification_failed: [],
    });
    const abc = await auditEntries(t, owner.accountId, "ABC-0010");
    expect(abc).toEqual([
      {
        code: "ABC-0010",
        related_model: "request",
        relation_key: String(req.id),
        value: "queued=2 failed=0",
        api_key_id: String(owner.applicationId),
      },
    ]);

    await runNotificationJobs(t);

    const outbox = await t.app.inject({
      method: "GET",
      url: "/v1/sandbox/messages/",
      headers: owner.headers,
    });
    expect(outbox.statusCode).toBe(200);
    const list = outbox.json();
    expect(list.count).toBe(2);
    const url = `http://ferry.test/r/${req.identifier}/`;
    const smsMsg = list.results.find((m: { channel: string }) => m.channel === "sms");
    const mail = list.results.find((m: { channel: string }) => m.channel === "email");
    expect(smsMsg).toEqual({
      id: expect.any(Number),
      channel: "sms",
      to: "+14155550123",
      from: "",
      subject: "",
      text: `[SANDBOX] Test Owner is requesting files from you: ${url}`,
      html: null,
      links: [url],
      notification: body.contact_notification_send[1].id,
      created: "2026-01-15T10:00:00.000000Z",
    });
    expect(mail).toMatchObject({
      channel: "email",
      to: "jane@example.com",
      from: "Ferry <no-reply@ferry.test>",
      subject: "[SANDBOX] Test Owner has requested files from you",
      links: [url],
      notification: body.contact_notification_send[0].id,
    });
    expect(mail.text).toContain("Please upload your passport.");
    expect(mail.text).toContain(url);
    expect(mail.text).toMatch(/^\[SANDBOX\]/);
    expect(mail.html).toContain(`<a href="${url}"`);
    expect(mail.html).toContain("SANDBOX: this message comes from a test deployment.");
    expect(mail.html).toMatch(/<img src="http:\/\/ferry\.test\/t\/o\/[A-Za-z0-9_-]{32}\.gif"/);
    // The pixel's token never reveals the request identifier.
    expect(mail.html.match(/\/t\/o\/([^."]+)\.gif/)[1]).not.toContain(req.identifier);

    const n = await notificationRow(t, body.contact_notification_send[0].id);
    expect(n).toMatchObject({ status: "sent", was_sent: 1, error: null, attempts: 1 });

    const events = await callbackEvents(t, req.id);
    expect(events).toHaveLength(2);
    const emailEvent = events.find((e) => e.body.notification.contact_method_interface_class === "email")!;
    expect(emailEvent).toEqual({
      account_id: owner.accountId,
      request_id: req.id,
      type: "contact_notification_send",
      body: {
        type: "contact_notification_send",
        message: "",
        status: true,
        notification: {
          id: body.contact_notification_send[0].id,
          was_sent: true,
          removed: false,
          contact_first_name: "Jane",
          contact_last_name: "Doe",
          contact_method_value: "jane@example.com",
          contact_method_interface_class: "email",
          created: "2026-01-15T10:00:00.000000Z",
          updated: "2026-01-15T10:00:00.000000Z",
        },
        request: expect.objectContaining({ id: req.id, identifier: req.identifier, type: "pull" }),
      },
    });
  });

  it("records the email open once (ABD-0010) and always serves the pixel", async () => {
    const req = await createRequest(t, owner, [{ methods: [["email", "open@example.com"]] }]);
    await sendNotification(t, owner, req.id);
    await runNotificationJobs(t);
    const outbox = await t.app.inject({
      method: "GET",
      url: "/v1/sandbox/messages/?to=open@example.com",
      headers: owner.headers,
    });
    const html: string = outbox.json().results[0].html;
    const pixel = new URL(html.match(/<img src="([^"]+)"/)![1]!).pathname;
    const before = (await auditEntries(t, owner.accountId, "ABD-0010")).length;
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: "GET", url: pixel });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("image/gif");
      expect(res.headers["cache-control"]).toContain("no-store");
    }
    const opened = await auditEntries(t, owner.accountId, "ABD-0010");
    expect(opened.length - before).toBe(1);
    expect(opened.at(-1)).toMatchObject({ related_model: "request", relation_key: String(req.id) });
    const unknown = await t.app.inject({ method: "GET", url: "/t/o/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.gif" });
    expect(unknown.statusCode).toBe(200);
    expect((await auditEntries(t, owner.accountId, "ABD-0010")).length).toBe(opened.length);
  });

  it("sends again on a second call (a reminder) as new notifications", async () => {
    const req = await createRequest(t, owner, [{ methods: [["email", "again@example.com"]] }]);
    const first = await sendNotification(t, owner, req.id);
    const second = await sendNotification(t, owner, req.id, "GET");
    expect(second.status).toBe(200);
    expect(second.body.contact_notification_send[0].id).toBeGreaterThan(
      first.body.contact_notification_send[0].id,
    );
    await runNotificationJobs(t);
    const outbox = await t.app.inject({
      method: "GET",
      url: "/v1/sandbox/messages/?to=again@example.com",
      headers: owner.headers,
    });
    expect(outbox.json().count).toBe(2);
  });

  it("lists an invalid stored phone number under failed, with a failed callback event", async () => {
    const req = await createRequest(t, owner, [
      {
        first_name: "Sam",
        last_name: "Lee",
        methods: [
          ["sms", "+14155550199"],
          ["email", "sam@example.com"],
        ],
      },
    ]);
    const smsMethod = req.contact[0].contactmethod[0];
    // Stored before validation existed (or edited in the database): not E.164.
    await t.container.database.db
      .updateTable("contact_methods")
      .set({ value: "0044 not a number" })
      .where("id", "=", smsMethod.id)
      .execute();
    const { status, body } = await sendNotification(t, owner, req.id);
    expect(status).toBe(200);
    expect(body.contact_notification_failed).toEqual([
      { contactmethod: { id: smsMethod.id, interface_class: "sms", value: "0044 not a number" } },
    ]);
    expect(body.contact_notification_send).toHaveLength(1);
    const events = await callbackEvents(t, req.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.body).toMatchObject({
      type: "contact_notification_send",
      status: false,
      message: "Not a valid phone number in E.164 format.",
      notification: { was_sent: false, contact_method_value: "0044 not a number", contact_first_name: "Sam" },
    });
  });

  it("refuses drafts, complete and expired requests with 422, and other accounts' with 404", async () => {
    const draft = await createRequest(t, owner, [{ methods: [["email", "d@example.com"]] }], {
      is_draft: true,
    });
    expect(await sendNotification(t, owner, draft.id)).toEqual({
      status: 422,
      body: {
        code: "UNPROCESSABLE_ENTITY",
        detail: "The request is a draft: send it (PATCH is_draft false) before notifying its contacts.",
      },
    });
    const done = await createRequest(t, owner, [{ methods: [["email", "c@example.com"]] }]);
    await t.container.database.db
      .updateTable("requests")
      .set({ complete: 1 })
      .where("id", "=", done.id)
      .execute();
    expect((await sendNotification(t, owner, done.id)).status).toBe(422);
    const expired = await createRequest(t, owner, [{ methods: [["email", "e@example.com"]] }], {
      type: "push",
    });
    await t.container.database.db
      .updateTable("requests")
      .set({ expires_at: "2026-01-15T09:59:59.000000Z" })
      .where("id", "=", expired.id)
      .execute();
    expect(await sendNotification(t, owner, expired.id)).toEqual({
      status: 422,
      body: {
        code: "UNPROCESSABLE_ENTITY",
        detail: "The request has expired: its contacts cannot be notified.",
      },
    });
    expect((await sendNotification(t, other, done.id)).status).toBe(404);
    expect((await sendNotification(t, owner, 99_999_999)).status).toBe(404);
    expect((await sendNotification(t, owner, "abc" as unknown as number)).status).toBe(404);
  });

  it("keeps each account's outbox apart", async () => {
    const res = await t.app.inject({ method: "GET", url: "/v1/sandbox/messages/", headers: other.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      links: { previous: null, next: null },
      total_pages: 1,
      count: 0,
      results: [],
    });
  });
});

describe("the sandbox outbox in a live deployment", () => {
  let t: TestApp;
  afterAll(async () => t?.close());

  it("answers 404", async () => {
    t = await createTestApp({ FERRY_ENVIRONMENT: "live" });
    const owner = await createTestAccount(t);
    const res = await t.app.inject({ method: "GET", url: "/v1/sandbox/messages/", headers: owner.headers });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Sandbox outbox not found." });
  });
});
