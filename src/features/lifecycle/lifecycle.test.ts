import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { eventually } from "../../../test/helpers/process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../../test/helpers/webhook-receiver.js";
import { buildWorker } from "../../app/build-worker.js";
import type { Worker } from "../../jobs/worker.js";
import { AppError } from "../../shared/errors.js";
import { multipart } from "../media/media.testkit.js";

describe("request lifecycle: push expiry and pull completion", () => {
  let t: TestApp;
  let owner: TestAccount;
  let worker: Worker;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      JOB_POLL_INTERVAL_MS: "20",
      LIFECYCLE_SWEEP_INTERVAL_SECONDS: "1",
    });
    owner = await createTestAccount(t);
    receiver = await startWebhookReceiver();
    worker = buildWorker(t.container);
    await worker.start();
  });
  afterAll(async () => {
    await worker?.stop(1000);
    await receiver?.close();
    await t?.close();
  });

  const createRequest = async (body: object) => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: owner.headers,
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };
  const getRequest = async (id: number) =>
    (await t.app.inject({ method: "GET", url: `/v1/request/${id}/`, headers: owner.headers })).json();

  /** Uploads a whole file to a draft request through POST /v1/media/; returns the media id. */
  const uploadMedia = async (requestId: number, name: string, data: Buffer) => {
    const body = multipart(
      { request: requestId, name, content_type: "text/plain" },
      { data, filename: name, type: "text/plain" },
    );
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...body.headers },
      payload: body.payload,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };
  const download = (id: number) =>
    t.app.inject({ method: "GET", url: `/v1/media/${id}/download`, headers: owner.headers });

  it("expires a push request at expires_at: flags set, files destroyed, one request_complete", async () => {
    const pushId = await createRequest({
      type: "push",
      is_draft: true,
      callback_url: `${receiver.url}/expired?ref=push`,
    });
    const files = [
      await uploadMedia(pushId, "a.txt", Buffer.from("first file\n")),
      await uploadMedia(pushId, "b.txt", Buffer.from("second file\n")),
    ];
    const sent = await t.app.inject({
      method: "PATCH",
      url: `/v1/request/${pushId}/`,
      headers: owner.headers,
      payload: { is_draft: false, expires_at: new Date(t.clock.now().getTime() + 3600_000).toISOString() },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const laterId = await createRequest({
      type: "push",
      is_draft: false,
      expires_at: new Date(t.clock.now().getTime() + 2 * 3600_000).toISOString(),
    });
    expect((await download(files[0]!)).statusCode).toBe(200);
    const { db } = t.container.database;
    const blobKeys = (
      await db.selectFrom("media_parts").select("blob_key").where("media_id", "in", files).execute()
    ).map((p) => p.blob_key);
    expect(blobKeys).toHaveLength(2);
    for (const key of blobKeys) expect(await t.container.blobStore.exists(key)).toBe(true);

    t.clock.advance(3600_000 + 2000);
    await eventually(async () => (await getRequest(pushId)).complete === true);
    expect(await getRequest(pushId)).toMatchObject({
      id: pushId,
      type: "push",
      complete: true,
      is_expired: true,
    });
    expect((await getRequest(laterId)).complete).toBe(false);

    for (const id of files) expect([404, 410]).toContain((await download(id)).statusCode);
    const media = await db
      .selectFrom("media")
      .select(["state", "wrapped_key"])
      .where("id", "in", files)
      .execute();
    expect(media).toEqual([
      { state: "removed", wrapped_key: null },
      { state: "removed", wrapped_key: null },
    ]);
    expect(
      await db.selectFrom("media_parts").select("media_id").where("media_id", "in", files).execute(),
    ).toEqual([]);
    // The worker runs the media feature's blobs.delete job queued by the expiry.
    await eventually(async () => {
      for (const key of blobKeys) if (await t.container.blobStore.exists(key)) return false;
      return true;
    });

    const [got] = await receiver.waitFor(1);
    expect(got?.url).toBe("/expired?ref=push");
    expect(got?.json).toMatchObject({
      type: "request_complete",
      request: { id: pushId, complete: true, is_expired: true },
    });

    // Later sweeps find nothing more to do: still one event for the request.
    const sweepsBefore = await doneSweeps();
    t.clock.advance(5000);
    await eventually(async () => (await doneSweeps()) > sweepsBefore);
    const events = await db
      .selectFrom("callback_events")
      .select("id")
      .where("request_id", "=", pushId)
      .execute();
    expect(events).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
  });

  it("completes a pull request for its recipient, once", async () => {
    const pullId = await createRequest({ type: "pull", callback_url: `${receiver.url}/pull` });
    const before = receiver.received.length;
    const view = await t.container.lifecycle.completePullRequest(owner.accountId, pullId, {
      receiverMessage: "Done!",
    });
    expect(view).toMatchObject({ id: pullId, complete: true, is_expired: false, receiver_message: "Done!" });
    expect(await getRequest(pullId)).toMatchObject({ complete: true, receiver_message: "Done!" });
    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got?.json).toMatchObject({ type: "request_complete", request: { id: pullId, complete: true } });

    await expectRefusal(
      t.container.lifecycle.completePullRequest(owner.accountId, pullId),
      422,
      "The request is already complete.",
    );
  });

  it("refuses to complete what is not an open, sent pull request of the account", async () => {
    const { lifecycle } = t.container;
    const push = await createRequest({ type: "push", is_draft: false });
    const draft = await createRequest({ type: "pull", is_draft: true });
    const expiring = await createRequest({
      type: "pull",
      expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString(),
    });
    const stranger = await createTestAccount(t);
    await expectRefusal(
      lifecycle.completePullRequest(owner.accountId, push),
      422,
      "Only a pull request is completed by its recipient.",
    );
    await expectRefusal(
      lifecycle.completePullRequest(owner.accountId, draft),
      422,
      "The request has not been sent.",
    );
    await expectRefusal(lifecycle.completePullRequest(stranger.accountId, draft), 404, "Request not found.");
    await expectRefusal(
      lifecycle.completePullRequest(owner.accountId, expiring, { receiverMessage: "x".repeat(10_001) }),
      400,
    );
    t.clock.advance(61_000);
    await expectRefusal(
      lifecycle.completePullRequest(owner.accountId, expiring),
      422,
      "The request has expired.",
    );
    expect((await getRequest(expiring)).complete).toBe(false);
  });

  it("expires a push request on demand (sandbox helper)", async () => {
    const push = await createRequest({ type: "push", is_draft: true });
    const media = await uploadMedia(push, "d.txt", Buffer.from("on demand\n"));
    await t.app.inject({
      method: "PATCH",
      url: `/v1/request/${push}/`,
      headers: owner.headers,
      payload: { is_draft: false },
    });
    const view = await t.container.lifecycle.expirePushRequestNow(owner.accountId, push);
    expect(view).toMatchObject({ id: push, complete: true, is_expired: true });
    const row = await t.container.database.db
      .selectFrom("media")
      .select("state")
      .where("id", "=", media)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe("removed");
    await expectRefusal(
      t.container.lifecycle.expirePushRequestNow(owner.accountId, push),
      422,
      "The request is already complete.",
    );
  });

  async function doneSweeps(): Promise<number> {
    const row = await t.container.database.db
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("kind", "=", "lifecycle.sweep")
      .where("state", "=", "done")
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
});

async function expectRefusal(p: Promise<unknown>, status: number, detail?: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).status).toBe(status);
  if (detail !== undefined) expect((err as AppError).detail).toBe(detail);
}
