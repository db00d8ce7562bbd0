import { beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../../test/helpers/api.js";
import { createTestAccount, renewToken } from "../../../test/helpers/app.js";
import { buildRequest, completeRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { eventually } from "../../../test/helpers/process.js";
import { isSignedWith, type ReceivedWebhook, verifyWebhook } from "../../../test/helpers/webhook-receiver.js";
import { defineJob } from "../../jobs/job.js";

interface AttemptJson {
  number: number;
  trigger: string;
  outcome: string;
  status_code: number | null;
  response_excerpt: string | null;
  attempted_at: string;
}
interface DeliveryJson {
  id: number;
  status: string;
  tries: number;
  next_attempt_at: string;
  payload: { request: Record<string, unknown> };
  attempts: AttemptJson[];
}

describe("callbacks: signed deliveries with retries", () => {
  const h = useHarness({
    env: {
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      CALLBACK_RETRY_SCHEDULE_SECONDS: "1,2,4",
      CALLBACK_TIMEOUT_MS: "400",
      JOB_POLL_INTERVAL_MS: "20",
    },
    worker: true,
    receiver: true,
  });

  const get = async (url: string): Promise<Json> => (await h.call("GET", url)).json();

  /** Creates a sent pull request with a callback URL and completes it as its recipient would. */
  const completedPull = async (callbackPath = "/hook", message = "Here you go") => {
    const created = await buildRequest(h.t, h.owner, {
      message: "Please send your ID",
      callback_url: `${h.receiver.url}${callbackPath}`,
    });
    await completeRequest(h.t, h.owner, created.id, message);
    return created.id as number;
  };

  const deliveryOf = async (requestId: number) => {
    const list = await h.call("GET", `/v1/callback/?request=${requestId}`);
    expect(list.statusCode).toBe(200);
    const [item] = list.json().results;
    return get(`/v1/callback/${item.id}/`);
  };

  const until = async (requestId: number, check: (d: DeliveryJson) => boolean): Promise<DeliveryJson> => {
    let last: DeliveryJson | undefined;
    await eventually(async () => {
      const current = (await deliveryOf(requestId)) as DeliveryJson;
      last = current;
      return check(current);
    });
    return last as DeliveryJson;
  };

  describe("a request_complete delivered at the first attempt", () => {
    let secret: Json;
    let requestId: number;
    let got: ReceivedWebhook;

    beforeAll(async () => {
      secret = await get("/v1/callback_secret/");
      const before = h.receiver.received.length;
      requestId = await completedPull("/hooks/ferry?&order_id=9");
      [got] = (await h.receiver.waitFor(before + 1)).slice(before) as [ReceivedWebhook];
    });

    it("uses the account's callback secret, in the Standard Webhooks format", () => {
      expect(secret).toEqual({
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        created: expect.any(String),
        previous: [],
      });
    });

    it("is a JSON POST to the callback URL, keeping its query string", () => {
      expect(got.method).toBe("POST");
      expect(got.url).toBe("/hooks/ferry?&order_id=9");
      expect(got.headers["content-type"]).toBe("application/json");
    });

    it("carries the Standard Webhooks headers and a signature the secret verifies", () => {
      expect(got.headers["webhook-id"]).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
      expect(got.headers["webhook-timestamp"]).toBe(String(Math.floor(h.t.clock.now().getTime() / 1000)));
      expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(() => verifyWebhook(got, secret.secret, h.t.clock.now())).not.toThrow();
    });

    it("sends the request as the API shows it, with the recipient's message", async () => {
      const body = verifyWebhook(got, secret.secret, h.t.clock.now()) as { request: Record<string, unknown> };
      const { callback_status, callback_tries, updated, ...stable } = await get(`/v1/request/${requestId}/`);
      expect(body).toEqual({ type: "request_complete", request: expect.objectContaining(stable) });
      expect(body.request).toMatchObject({
        id: requestId,
        complete: true,
        is_expired: false,
        receiver_message: "Here you go",
      });
    });

    it("records the delivery with its one successful attempt", async () => {
      const delivery = await until(requestId, (d) => d.status === "delivered");
      expect(delivery).toEqual({
        id: expect.any(Number),
        request: requestId,
        type: "request_complete",
        url: `${h.receiver.url}/hooks/ferry?&order_id=9`,
        webhook_id: got.headers["webhook-id"],
        status: "delivered",
        tries: 1,
        next_attempt_at: null,
        last_attempt_at: h.t.ferry.clock.now().toISOString().replace("Z", "000Z"),
        last_status_code: 200,
        last_error: null,
        delivered_at: expect.any(String),
        created: expect.any(String),
        updated: expect.any(String),
        payload: got.json,
        attempts: [
          {
            id: expect.any(Number),
            number: 1,
            trigger: "automatic",
            attempted_at: expect.any(String),
            duration_ms: expect.any(Number),
            status_code: 200,
            outcome: "success",
            error: null,
            response_excerpt: "ok",
          },
        ],
      });
    });

    it("shows the delivery's status and tries on the request", async () => {
      await until(requestId, (d) => d.status === "delivered");
      expect(await get(`/v1/request/${requestId}/`)).toMatchObject({
        callback_status: "delivered",
        callback_tries: 1,
      });
    });
  });

  it("retries a 500 with growing delays, then delivers once with the same webhook-id", async () => {
    const { t, receiver } = h;
    receiver.answerNext(500, 503, 200);
    const before = receiver.received.length;
    const requestId = await completedPull();
    let d = await until(requestId, (x) => x.tries === 1);
    expect(d).toMatchObject({
      status: "pending",
      last_status_code: 500,
      last_error: "receiver answered HTTP 500",
    });
    t.clock.set(d.next_attempt_at);
    d = await until(requestId, (x) => x.tries === 2);
    expect(d).toMatchObject({ status: "pending", last_status_code: 503 });
    t.clock.set(d.next_attempt_at);
    d = await until(requestId, (x) => x.status === "delivered");

    const got = receiver.received.slice(before);
    expect(got.map((r) => r.answer)).toEqual([500, 503, 200]);
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(
      d.attempts.map((a: AttemptJson) => [a.number, a.outcome, a.status_code, a.response_excerpt]),
    ).toEqual([
      [1, "http_error", 500, "answer 500"],
      [2, "http_error", 503, "answer 503"],
      [3, "success", 200, "ok"],
    ]);
    const [t1 = 0, t2 = 0, t3 = 0] = d.attempts.map((a: AttemptJson) => Date.parse(a.attempted_at));
    const gap1 = t2 - t1;
    const gap2 = t3 - t2;
    expect(gap1).toBeGreaterThanOrEqual(1000);
    expect(gap1).toBeLessThanOrEqual(1100);
    expect(gap2).toBeGreaterThanOrEqual(2000);
    expect(gap2).toBeLessThanOrEqual(2200);
    expect(await get(`/v1/request/${requestId}/`)).toMatchObject({
      callback_status: "delivered",
      callback_tries: 3,
    });
    expect(await queuedDeliveries()).toBe(0);
  });

  it("times out a receiver that never answers, retries, and gives up after the schedule", async () => {
    const { t, receiver } = h;
    receiver.defaultAnswer = "hang";
    try {
      const before = receiver.received.length;
      const requestId = await completedPull();
      for (let n = 1; n <= 3; n++) {
        const d = await until(requestId, (x) => x.tries === n);
        expect(d).toMatchObject({
          status: "pending",
          last_status_code: null,
          last_error: "no response within 400 ms",
        });
        t.clock.set(d.next_attempt_at);
      }
      const d = await until(requestId, (x) => x.status === "failed");
      expect(d.tries).toBe(4);
      expect(d.next_attempt_at).toBeNull();
      expect(d.attempts.map((a: AttemptJson) => a.outcome)).toEqual([
        "timeout",
        "timeout",
        "timeout",
        "timeout",
      ]);
      expect(receiver.received.length - before).toBe(4);
      expect(await queuedDeliveries()).toBe(0);
      expect(await get(`/v1/request/${requestId}/`)).toMatchObject({
        callback_status: "failed",
        callback_tries: 4,
      });
    } finally {
      receiver.defaultAnswer = 200;
      receiver.releaseHeld();
    }
  });

  it("stops at a 410 answer, and redelivers on demand with the same webhook-id", async () => {
    const { receiver } = h;
    receiver.answerNext(410);
    const before = receiver.received.length;
    const requestId = await completedPull();
    const stopped = await until(requestId, (x) => x.status === "stopped");
    expect(stopped).toMatchObject({ tries: 1, next_attempt_at: null, last_status_code: 410 });
    expect(await queuedDeliveries()).toBe(0);

    const again = await h.call("POST", `/v1/callback/${stopped.id}/redeliver/`);
    expect(again.statusCode).toBe(202);
    expect(again.json()).toMatchObject({ id: stopped.id, status: "pending", tries: 1 });
    const done = await until(requestId, (x) => x.status === "delivered");
    expect(done.attempts.map((a: AttemptJson) => [a.trigger, a.outcome])).toEqual([
      ["automatic", "gone"],
      ["redelivery", "success"],
    ]);
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(2);
    expect(got[1]?.headers["webhook-id"]).toBe(got[0]?.headers["webhook-id"]);
  });

  it("sends the flat shape when the account chooses it", async () => {
    const { receiver } = h;
    expect(await get("/v1/callback_settings/")).toEqual({
      callback_shape: "nested",
      secure_callbacks: false,
    });
    const set = await h.call("PATCH", "/v1/callback_settings/", { callback_shape: "flat" });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ callback_shape: "flat", secure_callbacks: false });
    try {
      const before = receiver.received.length;
      const requestId = await completedPull("/flat?x=1", "flat reply");
      const [got] = (await receiver.waitFor(before + 1)).slice(before);
      const d = await until(requestId, (x) => x.status === "delivered");
      const nested = d.payload;
      const expected: Record<string, unknown> = { type: "request_complete" };
      for (const [k, v] of Object.entries(nested.request)) {
        if (v === null || ["string", "number", "boolean"].includes(typeof v)) expected[`request_${k}`] = v;
      }
      expect(got?.json).toEqual(expected);
      expect(got?.json).toMatchObject({
        type: "request_complete",
        request_id: requestId,
        request_complete: true,
        request_is_expired: false,
        request_receiver_message: "flat reply",
      });
      expect(got?.json).not.toHaveProperty("request");
    } finally {
      await h.call("PATCH", "/v1/callback_settings/", { callback_shape: "nested" });
    }
  });

  it("turns a callbacks.event outbox job into a delivery of exactly the given body", async () => {
    const { t, owner, receiver } = h;
    const created = await buildRequest(t, owner, { callback_url: `${receiver.url}/notify` });
    const request = await get(`/v1/request/${created.id}/`);
    const body = {
      type: "contact_notification_send",
      message: "",
      status: true,
      notification: {
        id: 5,
        was_sent: true,
        removed: false,
        contact_first_name: "Jane",
        contact_last_name: "Doe",
        contact_method_value: "jane@example.com",
        contact_method_interface_class: "email",
        created: "2026-01-15T10:00:00.000000Z",
        updated: "2026-01-15T10:00:00.000000Z",
      },
      request,
    };
    const before = receiver.received.length;
    const { db } = t.ferry.database;
    await db.transaction().execute((trx) =>
      t.ferry.jobs.enqueue(trx, defineJob<object>("callbacks.event"), {
        account_id: owner.accountId,
        request_id: created.id,
        type: "contact_notification_send",
        body,
      }),
    );
    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got?.url).toBe("/notify");
    expect(got?.json).toEqual(body);
    // The attempt is recorded just after the receiver answered.
    await until(created.id, (x) => x.status === "delivered");
    const list = await get(
      `/v1/callback/?request=${created.id}&type=contact_notification_send&status=delivered`,
    );
    expect(list).toMatchObject({ count: 1, total_pages: 1, links: { previous: null, next: null } });
  });

  it("records nothing for a request without a callback_url", async () => {
    const created = await buildRequest(h.t, h.owner);
    await completeRequest(h.t, h.owner, created.id);
    expect(await get(`/v1/callback/?request=${created.id}`)).toEqual({
      links: { previous: null, next: null },
      total_pages: 1,
      count: 0,
      page_size: 10,
      results: [],
    });
  });

  it("refuses plain http for an account with secure callbacks, recording the refusal", async () => {
    const { receiver } = h;
    await h.call("PATCH", "/v1/callback_settings/", { secure_callbacks: true });
    try {
      const before = receiver.received.length;
      const requestId = await completedPull();
      const d = await until(requestId, (x) => x.status === "failed");
      expect(d.tries).toBe(1);
      expect(d.attempts[0]).toMatchObject({
        outcome: "blocked",
        status_code: null,
        error: expect.stringMatching(/https/i),
      });
      expect(receiver.received.length).toBe(before);
    } finally {
      await h.call("PATCH", "/v1/callback_settings/", { secure_callbacks: false });
    }
  });

  it("filters, validates and scopes the delivery list", async () => {
    const { t, call } = h;
    const all = await call("GET", "/v1/callback/?page_size=2");
    expect(all.statusCode).toBe(200);
    expect(all.json().results).toHaveLength(2);
    expect(all.json().links.next).toBe("http://ferry.test/v1/callback/?page=2&page_size=2");
    expect((await get("/v1/callback/?status=stopped")).count).toBe(0);
    expect((await get("/v1/callback/?status=failed&type=request_complete")).count).toBe(2);
    const bad = await call("GET", "/v1/callback/?status=lost&request=abc");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      status: ["Select a valid choice. lost is not one of pending, delivered, failed, stopped."],
      request: ["A valid integer is required."],
    });

    const stranger = await createTestAccount(t);
    const mine = all.json().results[0].id;
    expect((await call("GET", `/v1/callback/${mine}/`, undefined, stranger)).statusCode).toBe(404);
    expect((await call("POST", `/v1/callback/${mine}/redeliver/`, undefined, stranger)).statusCode).toBe(404);
    expect((await call("GET", "/v1/callback/", undefined, stranger)).json().count).toBe(0);
    expect((await call("GET", "/v1/callback/nope/")).statusCode).toBe(404);
    const scoped = await createTestAccount(t, { scopes: ["requests"] });
    expect((await call("GET", "/v1/callback_secret/", undefined, scoped)).statusCode).toBe(403);
  });

  // Last: it moves the clock a day on.
  it("signs with both secrets during a rotation's overlap, then with the new one only", async () => {
    const { t, receiver } = h;
    const old = (await get("/v1/callback_secret/")).secret as string;
    const rotated = await h.call("POST", "/v1/callback_secret/rotate/");
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().secret as string;
    expect(fresh).not.toBe(old);
    expect(rotated.json().previous).toEqual([
      { created: expect.any(String), expires_at: expect.any(String) },
    ]);
    expect(Date.parse(rotated.json().previous[0].expires_at) - t.clock.now().getTime()).toBe(
      24 * 3600 * 1000,
    );

    let before = receiver.received.length;
    await completedPull();
    let [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got?.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(isSignedWith(got!, old, t.clock.now())).toBe(true);
    expect(isSignedWith(got!, fresh, t.clock.now())).toBe(true);

    t.clock.advance(24 * 3600 * 1000 + 1000);
    await renewToken(t, h.owner);
    expect(await get("/v1/callback_secret/")).toEqual({
      secret: fresh,
      created: rotated.json().created,
      previous: [],
    });
    before = receiver.received.length;
    await completedPull();
    [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got?.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(isSignedWith(got!, fresh, t.clock.now())).toBe(true);
    expect(isSignedWith(got!, old, t.clock.now())).toBe(false);
  });

  async function queuedDeliveries(): Promise<number> {
    const row = await h.t.ferry.database.db
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("kind", "=", "callbacks.deliver")
      .where("state", "in", ["queued", "running"])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
});
