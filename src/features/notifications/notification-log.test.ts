import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  notifiableRequest,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";
import { startSmtpServer, type TestSmtpServer } from "../../../test/helpers/smtp.js";

describe("GET /v1/notification/: what was sent to whom, and how it went", () => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp?.close();
  });
  const h = useHarness({
    env: () => ({
      FERRY_ENVIRONMENT: "live",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_TLS: "none",
      MAIL_FROM: "Ferry <files@ferry.test>",
    }),
  });

  describe("after a delivered and a refused email", () => {
    let delivered: { requestId: number; notificationId: number };
    let refused: { requestId: number; notificationId: number };

    beforeAll(async () => {
      const { t, owner } = h;
      const ok = await notifiableRequest(t, owner, [["email", "ada@example.com"]]);
      const okSend = await sendNotification(t, owner, ok.id as number);
      await runNotificationJobs(t);
      await smtp.waitFor(1);
      delivered = { requestId: ok.id as number, notificationId: okSend.body.contact_notification_send[0].id };

      const bad = await notifiableRequest(t, owner, [["email", "gone@example.com"]]);
      const badSend = await sendNotification(t, owner, bad.id as number);
      smtp.setMode("permanent-failure");
      try {
        await runNotificationJobs(t);
      } finally {
        smtp.setMode("accept");
      }
      refused = { requestId: bad.id as number, notificationId: badSend.body.contact_notification_send[0].id };
    });

    it("answers a delivered email with its channel, destination, state and times", async () => {
      const res = await h.call("GET", `/v1/notification/${delivered.notificationId}/`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        id: delivered.notificationId,
        request: delivered.requestId,
        container: null,
        channel: "email",
        destination: "ada@example.com",
        contact_first_name: "Jane",
        contact_last_name: "Doe",
        state: "sent",
        error: null,
        attempts: 1,
        queued_at: expect.stringMatching(/^2026-01-15T10:00:00/),
        sent_at: expect.stringMatching(/^2026-01-15T10:00:00/),
        opened_at: null,
        created: expect.any(String),
        updated: expect.any(String),
      });
    });

    it("records the first open of the email", async () => {
      const [mail] = smtp.messages.filter((m) => m.to.includes("ada@example.com"));
      const pixel = /\/t\/o\/[A-Za-z0-9_-]{32}\.gif/.exec(String(mail!.parsed.html))![0];
      expect((await h.t.app.inject({ method: "GET", url: pixel })).statusCode).toBe(200);
      const res = await h.call("GET", `/v1/notification/${delivered.notificationId}/`);
      expect(res.json().opened_at).toMatch(/^2026-01-15T10:00:00/);
    });

    it("answers a refused email as failed, with the server's reason", async () => {
      const res = await h.call("GET", `/v1/notification/${refused.notificationId}/`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        request: refused.requestId,
        destination: "gone@example.com",
        state: "failed",
        error: expect.stringMatching(/^SMTP server answered 550/),
        sent_at: null,
        opened_at: null,
      });
    });

    it("lists newest first and filters by request and state", async () => {
      const all = await h.call("GET", "/v1/notification/");
      expect(all.statusCode).toBe(200);
      expect(all.json()).toMatchObject({ count: 2, page_size: 10, total_pages: 1 });
      expect(all.json().results.map((n: { id: number }) => n.id)).toEqual([
        refused.notificationId,
        delivered.notificationId,
      ]);
      const failed = await h.call("GET", "/v1/notification/", undefined, { query: { state: "failed" } });
      expect(failed.json().results.map((n: { id: number }) => n.id)).toEqual([refused.notificationId]);
      const ofRequest = await h.call("GET", "/v1/notification/", undefined, {
        query: { request: String(delivered.requestId) },
      });
      expect(ofRequest.json().results.map((n: { id: number }) => n.id)).toEqual([delivered.notificationId]);
      const ofContainer = await h.call("GET", "/v1/notification/", undefined, {
        query: { container: String(delivered.requestId) },
      });
      expect(ofContainer.json().results).toEqual([]);
    });

    it("answers 400 for a bad filter and 404 for another account's notification", async () => {
      const state = await h.call("GET", "/v1/notification/", undefined, { query: { state: "opened" } });
      expect(state.statusCode).toBe(400);
      expect(state.json()).toEqual({ state: [expect.stringContaining("queued, sent, failed")] });
      const request = await h.call("GET", "/v1/notification/", undefined, { query: { request: "abc" } });
      expect(request.statusCode).toBe(400);
      expect(request.json()).toEqual({ request: ["A valid integer is required."] });
      const stranger = await createTestAccount(h.t);
      const foreign = await h.call("GET", `/v1/notification/${delivered.notificationId}/`, undefined, {
        as: stranger,
      });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Notification not found." });
      expect((await h.call("GET", "/v1/notification/", undefined, { as: stranger })).json().count).toBe(0);
    });
  });
});
