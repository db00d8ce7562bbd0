import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { buildRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  auditEntries,
  callbackEvents,
  notifiableRequest,
  notificationRow,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";

const SENT_AT = "2026-01-15T10:00:00.000Z";

describe("send_notification with the capture transports (sandbox)", () => {
  const h = useHarness({ other: true });

  /** The account's sandbox outbox (GET /v1/sandbox/messages/ with `query`). */
  const outbox = async (query = "") => expectJson(await h.call("GET", `/v1/sandbox/messages/${query}`), 200);

  describe("a request whose contact has an email and an SMS method, notified", () => {
    let req: Json;
    let sent: { status: number; body: Json };
    let email: Json;
    let sms: Json;

    beforeAll(async () => {
      req = await notifiableRequest(h.t, h.owner, [
        ["email", "jane@example.com"],
        ["sms", "+14155550123"],
      ]);
      [email, sms] = req.contact[0].contactmethod;
      sent = await sendNotification(h.t, h.owner, req.id);
      await runNotificationJobs(h.t);
    });

    it("queues one notification per contact method and answers the spec's object", () => {
      expect(sent.status).toBe(200);
      expect(sent.body).toEqual({
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
    });

    it("audits the send (ABC-0010) with the queued and failed counts", async () => {
      expect(await auditEntries(h.t, h.owner.accountId, "ABC-0010")).toEqual([
        {
          code: "ABC-0010",
          related_model: "request",
          relation_key: String(req.id),
          value: "queued=2 failed=0",
          api_key_id: String(h.owner.applicationId),
        },
      ]);
    });

    it("puts one message per method in the account's sandbox outbox", async () => {
      expect((await outbox()).count).toBe(2);
    });

    it("filters the outbox by a number whose + was not encoded, or was", async () => {
      for (const query of ["?to=+14155550123", "?to=%2B14155550123"]) {
        const found = (await outbox(query)).results;
        expect(found.map((m: Json) => [m.channel, m.to])).toEqual([["sms", "+14155550123"]]);
      }
    });

    it("captures the SMS: the short message and the recipient link", async () => {
      const url = `http://ferry.test/r/${req.identifier}/`;
      const smsMsg = (await outbox()).results.find((m: Json) => m.channel === "sms");
      expect(smsMsg).toEqual({
        id: expect.any(Number),
        channel: "sms",
        to: "+14155550123",
        from: "",
        subject: "",
        text: `[SANDBOX] Test Owner is requesting files from you: ${url}`,
        html: null,
        links: [url],
        notification: sent.body.contact_notification_send[1].id,
        created: "2026-01-15T10:00:00.000000Z",
      });
    });

    it("captures the email: subject, text and HTML with the message, link, sandbox notice and open pixel", async () => {
      const url = `http://ferry.test/r/${req.identifier}/`;
      const mail = (await outbox()).results.find((m: Json) => m.channel === "email");
      expect(mail).toMatchObject({
        channel: "email",
        to: "jane@example.com",
        from: "Ferry <no-reply@ferry.test>",
        subject: "[SANDBOX] Test Owner has requested files from you",
        links: [url],
        notification: sent.body.contact_notification_send[0].id,
      });
      expect(mail.text).toContain("Please upload your passport.");
      expect(mail.text).toContain(url);
      expect(mail.text).toMatch(/^\[SANDBOX\]/);
      expect(mail.html).toContain(`<a href="${url}"`);
      expect(mail.html).toContain("SANDBOX: this message comes from a test deployment.");
      expect(mail.html).toMatch(/<img src="http:\/\/ferry\.test\/t\/o\/[A-Za-z0-9_-]{32}\.gif"/);
    });

    it("gives the open pixel a token that never reveals the request identifier", async () => {
      const mail = (await outbox()).results.find((m: Json) => m.channel === "email");
      expect(mail.html.match(/\/t\/o\/([^."]+)\.gif/)[1]).not.toContain(req.identifier);
    });

    it("marks the delivered notification sent, after one attempt", async () => {
      const n = await notificationRow(h.t, sent.body.contact_notification_send[0].id);
      expect(n).toMatchObject({ status: "sent", was_sent: 1, error: null, attempts: 1 });
    });

    it("records a contact_notification_send callback event per method, with the notification and request", async () => {
      const events = await callbackEvents(h.t, req.id);
      expect(events).toHaveLength(2);
      const emailEvent = events.find((e) => e.body.notification.contact_method_interface_class === "email")!;
      expect(emailEvent).toEqual({
        account_id: h.owner.accountId,
        request_id: req.id,
        type: "contact_notification_send",
        body: {
          type: "contact_notification_send",
          message: "",
          status: true,
          notification: {
            id: sent.body.contact_notification_send[0].id,
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
  });

  it("records the email open once (ABD-0010) and always serves the pixel", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["email", "open@example.com"]]);
    await sendNotification(t, owner, req.id);
    await runNotificationJobs(t);
    const html: string = (await outbox("?to=open@example.com")).results[0].html;
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
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["email", "again@example.com"]]);
    const first = await sendNotification(t, owner, req.id);
    const second = await sendNotification(t, owner, req.id, "GET");
    expect(second.status).toBe(200);
    expect(second.body.contact_notification_send[0].id).toBeGreaterThan(
      first.body.contact_notification_send[0].id,
    );
    await runNotificationJobs(t);
    expect((await outbox("?to=again@example.com")).count).toBe(2);
  });

  it("delivers a request without a callback URL and records its outcome, with no callback event", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["email", "no-callback@example.com"]], {
      callback_url: null,
    });
    expect(req.callback_url).toBeNull();
    const sent = await sendNotification(t, owner, req.id);
    await runNotificationJobs(t);
    expect((await outbox("?to=no-callback@example.com")).count).toBe(1);
    const n = await notificationRow(t, sent.body.contact_notification_send[0].id);
    expect(n).toMatchObject({ status: "sent", was_sent: 1, error: null, attempts: 1 });
    expect(await callbackEvents(t, req.id)).toEqual([]);
  });

  it("lists an invalid stored phone number under failed, with a failed callback event", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, {
      first_name: "Sam",
      last_name: "Lee",
      methods: [
        ["sms", "+14155550199"],
        ["email", "sam@example.com"],
      ],
    });
    const smsMethod = req.contact[0].contactmethod[0];
    // Stored before validation existed (or edited in the database): not E.164.
    await t.ferry.database.db
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
    const { t, owner, other } = h;
    const draft = await buildRequest(t, owner, { is_draft: true });
    expect(await sendNotification(t, owner, draft.id)).toEqual({
      status: 422,
      body: {
        code: "UNPROCESSABLE_ENTITY",
        detail: "The request is a draft: send it (PATCH is_draft false) before notifying its contacts.",
      },
    });
    const done = await buildRequest(t, owner);
    await t.ferry.database.db
      .updateTable("requests")
      .set({ complete: 1 })
      .where("id", "=", done.id)
      .execute();
    expect((await sendNotification(t, owner, done.id)).status).toBe(422);
    const expired = await buildRequest(t, owner, { type: "push" });
    await t.ferry.database.db
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
    const res = await h.call("GET", "/v1/sandbox/messages/", undefined, h.other);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      links: { previous: null, next: null },
      total_pages: 1,
      count: 0,
      page_size: 10,
      results: [],
    });
  });
});

describe("the sandbox outbox in a live deployment", () => {
  const h = useHarness({ env: { FERRY_ENVIRONMENT: "live" } });

  it("answers 404", async () => {
    const res = await h.call("GET", "/v1/sandbox/messages/");
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Sandbox outbox not found." });
  });
});
