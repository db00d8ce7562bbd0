/**
 * Container callbacks delivered to a real local receiver, signed per Standard Webhooks and verified
 * with the `standardwebhooks` package: container, contact_notification_send, session_opened,
 * message_reply and feature.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { eventually } from "../../../test/helpers/process.js";
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  verifyWebhook,
  type WebhookReceiver,
} from "../../../test/helpers/webhook-receiver.js";
import { buildWorker } from "../../app/build-worker.js";
import type { Worker } from "../../jobs/worker.js";

// biome-ignore lint/suspicious/noExplicitAny: assertions check the shape of callback JSON.
type Json = Record<string, any>;

describe("container callbacks", () => {
  let t: TestApp;
  let owner: TestAccount;
  let receiver: WebhookReceiver;
  let worker: Worker;
  let secret: string;
  let containerId: number;
  let identifier: string;
  let recipientId: number;
  let featureId: number;
  let events: Json[];
  let received: ReceivedWebhook[];

  const call = async (method: string, url: string, payload?: object) => {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: owner.headers,
      ...(payload ? { payload } : {}),
    });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.body === "" ? undefined : (res.json() as Json);
  };

  beforeAll(async () => {
    t = await createTestApp({ FERRY_ALLOW_PRIVATE_CALLBACKS: "true", JOB_POLL_INTERVAL_MS: "20" });
    owner = await createTestAccount(t);
    receiver = await startWebhookReceiver();
    worker = await buildWorker(t.ferry);
    await worker.start();
    secret = (await call("GET", "/v1/callback_secret/"))!.secret;

    const container = (await call("POST", "/v1/module_container/container/", {
      page_type: "p2",
      display_chat: true,
      callback_url: `${receiver.url}/hooks/ferry?&order_id=9`,
    }))!;
    containerId = container.id;
    identifier = container.identifier;
    recipientId = (await call("POST", `/v1/module_container/container/${containerId}/recipient/`, {
      first_name: "Jane",
      last_name: "Doe",
    }))!.id;
    await call("POST", `/v1/module_container/recipient/${recipientId}/recipient_item/`, {
      interface_class: "email",
      value: "jane@example.com",
    });
    await call("POST", `/v1/module_container/recipient/${recipientId}/recipient_item/`, {
      interface_class: "link",
      value: 42,
    });
    const broken = (await call("POST", `/v1/module_container/recipient/${recipientId}/recipient_item/`, {
      interface_class: "email",
      value: "jane.old@example.com",
    }))!;
    // An address stored before today's checks: delivery must fail with its callback, not silently.
    await t.ferry.database.db
      .updateTable("container_recipient_items")
      .set({ value: "not-an-address" })
      .where("id", "=", broken.id)
      .execute();
    featureId = (await call("POST", "/v1/module_container_pull/pull/", {
      container: containerId,
      title: "Passport",
    }))!.id;
    await call("POST", `/v1/module_container/container/${containerId}/send_notification/`);
    await call("POST", `/v1/sandbox/container/${containerId}/open/`, {});
    await call("POST", `/v1/sandbox/container/${containerId}/open/`, {});
    await call("POST", `/v1/sandbox/container/${containerId}/reply/`, {
      recipient: recipientId,
      body: "Hi there",
    });
    await call("POST", `/v1/sandbox/feature/${featureId}/complete/`, {
      files: [{ name: "passport.txt", content: "P<" }],
      receiver_message: "Done",
    });
    // container (sent), 3 × contact_notification_send, session_opened, message_reply, feature, container (complete)
    received = await receiver.waitFor(8);
    events = received.map((r) => verifyWebhook(r, secret, t.clock.now()) as Json);
  });
  afterAll(async () => {
    await worker?.stop(1000);
    await receiver?.close();
    await t?.close();
  });

  const ofType = (type: string) => events.filter((e) => e.type === type);

  it("signs every delivery so the standardwebhooks package verifies it, with the query string kept", () => {
    expect(events).toHaveLength(8);
    for (const r of received) expect(r.url).toBe("/hooks/ferry?&order_id=9");
  });

  it("gives every event a unique 32-hex callback_identifier", () => {
    const ids = events.map((e) => e.callback_identifier);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sends `container` when the container is sent and when it completes", () => {
    expect(ofType("container").map((e) => e.container)).toEqual([
      { id: containerId, identifier, state: "sent" },
      { id: containerId, identifier, state: "complete" },
    ]);
  });

  it("sends `contact_notification_send` per item, with status and the container", () => {
    const byValue = new Map(
      ofType("contact_notification_send").map((e) => [e.notification.contact_method_value, e]),
    );
    expect(byValue.get("jane@example.com")).toMatchObject({
      status: true,
      container: { id: containerId, identifier },
      recipient: recipientId,
      notification: { was_sent: true, contact_first_name: "Jane", contact_method_interface_class: "email" },
    });
    expect(byValue.get("42")).toMatchObject({
      status: true,
      container: { id: containerId, identifier },
      notification: { was_sent: true, contact_method_interface_class: "link" },
    });
    expect(byValue.get("not-an-address")).toMatchObject({
      status: false,
      message: "Not a valid email address.",
    });
  });

  it("sends `session_opened` once, on the first open", () => {
    expect(ofType("session_opened")).toEqual([
      expect.objectContaining({ container: { id: containerId, identifier }, recipient: recipientId }),
    ]);
  });

  it("sends `message_reply` with the reply, integer recipient and the container", () => {
    expect(ofType("message_reply")[0]).toMatchObject({
      message_reply: { recipient: recipientId, body: "Hi there", container: containerId },
      container: { id: containerId, identifier },
    });
  });

  it("sends `feature` with its state, attribute and pull details", () => {
    expect(ofType("feature")[0]!.feature).toMatchObject({
      id: featureId,
      container: containerId,
      feature_attr: "pull",
      title: "Passport",
      state: "complete",
      pull: { id: featureId, container: containerId, receiver_message: "Done", recipient_permissions: [] },
    });
  });

  it("lists the deliveries under GET /v1/callback/?request=<container id>", async () => {
    // The receiver has every request; the worker records each answer just after it.
    const delivered = async () => {
      const list = (await call("GET", `/v1/callback/?request=${containerId}&page_size=20`))!;
      return list.count === 8 && list.results.every((d: Json) => d.status === "delivered");
    };
    await eventually(delivered);
    expect(await delivered()).toBe(true);
  });
});
