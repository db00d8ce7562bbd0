/**
 * The request and container pages over HTTP: filters and search, detail pages with contacts,
 * files, notifications and deliveries, a failed then redelivered callback (real HTTP receiver),
 * the callback secret and payload shape, 404 for another account's ids, CSRF refusals, and
 * owner-supplied text rendered as text.
 */
import { describe, expect, it } from "vitest";
import { apiCaller, expectJson } from "../../../../test/helpers/api.js";
import { createTestAccount } from "../../../../test/helpers/app.js";
import { addRecipient, buildContainer } from "../../../../test/helpers/containers.js";
import { createDashboardUserWithClient, type DashboardClient } from "../../../../test/helpers/dashboard.js";
import { buildRequest, completeRequest, inlineContact } from "../../../../test/helpers/factories.js";
import { useHarness } from "../../../../test/helpers/harness.js";
import { bytesOf, multipart } from "../../../../test/helpers/media.js";
import { eventually } from "../../../../test/helpers/process.js";

const XSS = `<img src=x onerror="alert(1)">`;

/** GETs `path` until its page contains `text` (the worker delivers in the background). */
async function pageWhen(c: DashboardClient, path: string, text: string) {
  let last = await c.get(path);
  await eventually(async () => {
    last = await c.get(path);
    return last.body.includes(text);
  });
  return last;
}

describe("dashboard requests and containers", () => {
  const h = useHarness({
    other: true,
    worker: true,
    receiver: true,
    env: {
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      CALLBACK_RETRY_SCHEDULE_SECONDS: "1",
      JOB_POLL_INTERVAL_MS: "20",
    },
  });

  let client: DashboardClient | undefined;
  async function owner(): Promise<DashboardClient> {
    client ??= (await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId })).client;
    return client;
  }

  it("filters requests by type, state, contact, date and search, showing text as text", async () => {
    const c = await owner();
    const pull = await buildRequest(h.t, h.owner, {
      message: `Passport please ${XSS}`,
      contact: [
        inlineContact([["email", "zed@example.com"]], { first_name: `Zed ${XSS}`, last_name: "Quill" }),
      ],
    });
    const push = await buildRequest(h.t, h.owner, {
      type: "push",
      message: "Your contract",
      is_draft: true,
      contact: [],
    });
    const list = await c.get("/dashboard/requests");
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`href="/dashboard/requests/${pull.id}"`);
    expect(list.body).toContain(`href="/dashboard/requests/${push.id}"`);
    expect(list.body).not.toContain(XSS);
    expect(list.body).toContain("&lt;img src=x");

    const has = async (query: string, ids: { in?: number[]; out?: number[] }) => {
      const res = await c.get(`/dashboard/requests?${query}`);
      expect(res.statusCode, query).toBe(200);
      for (const id of ids.in ?? []) expect(res.body, query).toContain(`href="/dashboard/requests/${id}"`);
      for (const id of ids.out ?? [])
        expect(res.body, query).not.toContain(`href="/dashboard/requests/${id}"`);
    };
    await has("type=push", { in: [push.id], out: [pull.id] });
    await has("state=draft", { in: [push.id], out: [pull.id] });
    await has("state=sent", { in: [pull.id], out: [push.id] });
    await has("contact=quill", { in: [pull.id], out: [push.id] });
    await has("contact=ZED%40example", { in: [pull.id], out: [push.id] });
    await has("contact=nobody", { out: [pull.id, push.id] });
    await has("q=passport", { in: [pull.id], out: [push.id] });
    await has("q=100%25", { out: [pull.id, push.id] });
    await has(`q=${pull.identifier}`, { in: [pull.id], out: [push.id] });
    await has("since=2026-01-15&until=2026-01-15", { in: [pull.id, push.id] });
    await has("since=2026-01-16", { out: [pull.id, push.id] });
    const bad = await c.get("/dashboard/requests?since=15.01.2026");
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("Created from: enter a date as YYYY-MM-DD.");

    const detail = await c.get(`/dashboard/requests/${pull.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain(pull.identifier);
    expect(detail.body).toContain("zed@example.com");
    expect(detail.body).not.toContain(XSS);
    expect(detail.body).toContain(`Zed &lt;img src=x onerror=&quot;alert(1)&quot;>`);
  });

  it("tells a new account how requests and containers come, rather than that none match", async () => {
    const fresh = await createTestAccount(h.t);
    const { client } = await createDashboardUserWithClient(h.t, { accountId: fresh.accountId });
    const requests = await client.get("/dashboard/requests");
    expect(requests.body).toContain("No requests yet.");
    expect(requests.body).toContain("<code>POST /v1/request/</code>");
    expect(requests.body).not.toContain("match");
    const containers = await client.get("/dashboard/containers");
    expect(containers.body).toContain("No containers yet.");
    expect((await client.get("/dashboard/containers?type=p2")).body).toContain(
      "No containers match these filters.",
    );
  });

  it("writes a file's size as the recipient pages do: powers of 1000, one decimal", async () => {
    const c = await owner();
    const push = await buildRequest(h.t, h.owner, { type: "push", is_draft: true, contact: [] });
    const body = multipart({ request: push.id, name: "scan.pdf" }, { data: bytesOf(180_600) });
    const uploaded = await h.t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...h.owner.headers, ...body.headers },
      payload: body.payload,
    });
    expect(uploaded.statusCode).toBe(201);
    const page = await c.get(`/dashboard/requests/${push.id}`);
    expect(page.body).toContain("180.6 KB");
    expect(page.body).not.toContain("176");
  });

  it("shows a failed callback and its redelivery, with every attempt", async () => {
    const c = await owner();
    const { receiver } = h;
    receiver.answerNext(500, 500);
    const created = await buildRequest(h.t, h.owner, { callback_url: `${receiver.url}/hook` });
    const before = receiver.received.length;
    await completeRequest(h.t, h.owner, created.id, "Here you go");
    await receiver.waitFor(before + 1);
    // Once the first attempt is recorded, its retry is due one second later by the test clock.
    await eventually(async () => {
      const page = await h.t.ferry.callbacks.listDeliveries(h.owner.accountId, {
        request: String(created.id),
      });
      return page.results[0]?.tries === 1 && page.results[0].next_attempt_at !== null;
    });
    // Between attempts the page says it is retrying after a failure, not a bare "Pending".
    const retrying = await c.get(`/dashboard/requests/${created.id}`);
    expect(retrying.body).toContain("Retrying · 1 failed attempt");
    expect(retrying.body).not.toContain(">Pending</span>");
    h.t.clock.advance(2000);
    await receiver.waitFor(before + 2);
    const failed = await pageWhen(c, `/dashboard/requests/${created.id}`, ">Failed</span>");
    expect(failed.body).toContain("2 attempts");
    expect(failed.body).toContain("HTTP 500");
    const deliveryId = Number(/action="\/dashboard\/deliveries\/(\d+)\/redeliver"/.exec(failed.body)?.[1]);

    const redo = await c.post(`/dashboard/deliveries/${deliveryId}/redeliver`, { back: "requests" });
    expect(redo.statusCode).toBe(303);
    expect(redo.headers.location).toBe(
      `/dashboard/requests/${created.id}?notice=redelivered-${deliveryId}#delivery-${deliveryId}`,
    );
    await receiver.waitFor(before + 3);
    const delivered = await pageWhen(
      c,
      `/dashboard/requests/${created.id}?notice=redelivered-${deliveryId}`,
      ">Delivered</span>",
    );
    expect(delivered.body).toContain("3 attempts");
    expect(delivered.body).toContain("redelivery · success · HTTP 200");
    expect(delivered.body).toContain(`Delivery ${deliveryId} is sent again`);
  });

  it("reveals and rotates the callback secret and saves the payload shape", async () => {
    const c = await owner();
    const page = await c.get("/dashboard/callbacks");
    expect(page.statusCode).toBe(200);
    const { secret } = expectJson(await h.call("GET", "/v1/callback_secret/"), 200) as { secret: string };
    expect(page.body).not.toContain(secret);
    const shown = await c.post("/dashboard/callbacks/secret/reveal");
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain(secret);
    const rotated = await c.post("/dashboard/callbacks/secret/rotate");
    expect(rotated.statusCode).toBe(303);
    const { secret: fresh } = expectJson(await h.call("GET", "/v1/callback_secret/"), 200) as {
      secret: string;
    };
    expect(fresh).not.toBe(secret);
    const saved = await c.post("/dashboard/callbacks/settings", { callback_shape: "flat" });
    expect(saved.statusCode).toBe(303);
    expect(expectJson(await h.call("GET", "/v1/callback_settings/"), 200)).toEqual({
      callback_shape: "flat",
      secure_callbacks: false,
    });
    await c.post("/dashboard/callbacks/settings", { callback_shape: "nested" });
  });

  it("lists containers with filters and shows one with its recipients", async () => {
    const c = await owner();
    const container = await buildContainer(h.call, { page_type: "p2" });
    const recipient = await addRecipient(h.call, container.id, {
      first_name: `Ann ${XSS}`,
      last_name: "Berg",
    });
    expectJson(
      await h.call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
        interface_class: "email",
        value: "ann.berg@example.com",
      }),
      201,
    );
    const list = await c.get("/dashboard/containers?contact=berg");
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`href="/dashboard/containers/${container.id}"`);
    const none = await c.get("/dashboard/containers?type=pushpull");
    expect(none.body).not.toContain(`href="/dashboard/containers/${container.id}"`);
    const detail = await c.get(`/dashboard/containers/${container.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain("ann.berg@example.com");
    expect(detail.body).not.toContain(XSS);
    // A container id is not a request, and the other way round.
    expect((await c.get(`/dashboard/requests/${container.id}`)).statusCode).toBe(404);
  });

  it("answers 404 for another account's ids and refuses posts without the CSRF token", async () => {
    const c = await owner();
    const theirs = await buildRequest(h.t, h.other, { message: "Other account's request" });
    const theirContainer = await buildContainer(apiCaller(h.t, h.other));
    for (const path of [
      `/dashboard/requests/${theirs.id}`,
      `/dashboard/containers/${theirContainer.id}`,
      "/dashboard/requests/abc",
      "/dashboard/media/999999/download",
    ]) {
      const res = await c.get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.body).not.toContain("Other account");
    }
    const list = await c.get(`/dashboard/requests?q=${encodeURIComponent("Other account")}`);
    expect(list.body).toContain("No requests match these filters.");
    const theirDelivery = await h.t.ferry.database.db
      .selectFrom("callback_deliveries")
      .select("id")
      .where("account_id", "=", h.owner.accountId)
      .executeTakeFirstOrThrow();
    const otherClient = (await createDashboardUserWithClient(h.t, { accountId: h.other.accountId })).client;
    expect((await otherClient.post(`/dashboard/deliveries/${theirDelivery.id}/redeliver`)).statusCode).toBe(
      404,
    );

    for (const path of [
      `/dashboard/deliveries/${theirDelivery.id}/redeliver`,
      "/dashboard/callbacks/secret/reveal",
      "/dashboard/callbacks/secret/rotate",
      "/dashboard/callbacks/settings",
    ]) {
      const res = await c.post(path, { csrf_token: "nope" });
      expect(res.statusCode, path).toBe(403);
      expect(res.body).not.toContain("whsec_");
    }
  });
});
