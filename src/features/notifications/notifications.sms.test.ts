import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  callbackEvents,
  notifiableRequest,
  notificationRow,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";
import {
  INVALID_NUMBER_ANSWER,
  SERVER_ERROR_ANSWER,
  startSmsProvider,
  type TestSmsProvider,
} from "../../../test/helpers/sms-provider.js";

describe("SMS through a Twilio-compatible provider", () => {
  let provider: TestSmsProvider;

  beforeAll(async () => {
    provider = await startSmsProvider();
  });
  afterAll(async () => provider?.close());
  const h = useHarness({
    env: () => ({
      FERRY_ENVIRONMENT: "live",
      SMS_PROVIDER: "twilio",
      TWILIO_BASE_URL: provider.baseUrl,
      TWILIO_ACCOUNT_SID: "AC0123456789abcdef0123456789abcdef",
      TWILIO_AUTH_TOKEN: "tok-secret",
      SMS_FROM: "+15005550006",
      JOB_BACKOFF_BASE_MS: "1000",
    }),
  });

  it("posts the form fields with Basic auth and records the message sid", async () => {
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["sms", "+44 7700 900123"]], {
      short_message: "Your files from Acme are ready:",
      type: "push",
    });
    const { body } = await sendNotification(t, owner, req.id);
    await runNotificationJobs(t);
    expect(provider.received).toEqual([
      {
        path: "/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages.json",
        authorization: `Basic ${Buffer.from("AC0123456789abcdef0123456789abcdef:tok-secret").toString("base64")}`,
        contentType: "application/x-www-form-urlencoded",
        form: {
          To: "+447700900123",
          From: "+15005550006",
          Body: `Your files from Acme are ready: http://ferry.test/r/${req.identifier}/`,
        },
      },
    ]);
    const n = await notificationRow(t, body.contact_notification_send[0].id);
    expect(n).toMatchObject({
      status: "sent",
      was_sent: 1,
      provider_message_id: `SM${"1".padStart(32, "0")}`,
    });
  });

  it("maps a 400 invalid number to a failure without retry", async () => {
    provider.received.length = 0;
    provider.answerNext(INVALID_NUMBER_ANSWER);
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["sms", "+15005550001"]]);
    const { body } = await sendNotification(t, owner, req.id);
    await runNotificationJobs(t);
    expect(provider.received).toHaveLength(1);
    const n = await notificationRow(t, body.contact_notification_send[0].id);
    expect(n).toMatchObject({
      status: "failed",
      attempts: 1,
      error: "SMS provider answered 400 (code 21211): The 'To' number is not a valid phone number.",
    });
    const [event] = await callbackEvents(t, req.id);
    expect(event!.body).toMatchObject({ status: false, message: n.error, notification: { was_sent: false } });
  });

  it("retries a 500 and then sends", async () => {
    provider.received.length = 0;
    provider.answerNext(SERVER_ERROR_ANSWER);
    const { t, owner } = h;
    const req = await notifiableRequest(t, owner, [["sms", "+15005550002"]]);
    const { body } = await sendNotification(t, owner, req.id);
    const id = body.contact_notification_send[0].id;
    await runNotificationJobs(t);
    expect(await notificationRow(t, id)).toMatchObject({
      status: "queued",
      attempts: 1,
      error: "SMS provider answered 500 (code 20500): Internal Server Error",
    });
    t.clock.advance(60_000);
    await runNotificationJobs(t);
    expect(provider.received).toHaveLength(2);
    expect(await notificationRow(t, id)).toMatchObject({ status: "sent", attempts: 2, error: null });
    expect((await callbackEvents(t, req.id)).map((e) => e.body.status)).toEqual([true]);
  });

  it("sends direct messages (two-factor codes) through the outbox, with the text sealed in the job", async () => {
    const { t, owner } = h;
    provider.received.length = 0;
    await t.ferry.database.db.transaction().execute(async (trx) => {
      await t.ferry.notifications.direct.queue(trx, owner.accountId, {
        channel: "sms",
        to: "+15005550003",
        text: "Your code is 123456",
      });
    });
    const job = await t.ferry.database.db
      .selectFrom("jobs")
      .select("payload")
      .where("kind", "=", "notifications.direct")
      .executeTakeFirstOrThrow();
    expect(job.payload).not.toContain("123456");
    await runNotificationJobs(t);
    expect(provider.received.map((r) => r.form)).toEqual([
      { To: "+15005550003", From: "+15005550006", Body: "Your code is 123456" },
    ]);
  });
});
