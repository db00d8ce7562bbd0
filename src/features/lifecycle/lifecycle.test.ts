import { beforeAll, describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { buildMedia, buildPushRequest, buildRequest, sendDraft } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { eventually } from "../../../test/helpers/process.js";
import { AppError } from "../../shared/errors.js";

describe("request lifecycle: push expiry and pull completion", () => {
  const h = useHarness({
    env: {
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      JOB_POLL_INTERVAL_MS: "20",
      LIFECYCLE_SWEEP_INTERVAL_SECONDS: "1",
    },
    worker: true,
    receiver: true,
  });

  const getRequest = async (id: number) => (await h.call("GET", `/v1/request/${id}/`)).json();
  const download = (id: number) => h.call("GET", `/v1/media/${id}/download`);
  const HOUR = 3600_000;
  /** The test clock's time `ms` from now, as an API timestamp. */
  const fromNow = (ms: number) => new Date(h.t.clock.now().getTime() + ms).toISOString();

  describe("a sent push request whose expires_at passes", () => {
    let pushId: number;
    let laterId: number;
    let files: number[];
    let blobKeys: string[];
    const beforeExpiry = { download: 0, blobsExist: [] as boolean[] };

    beforeAll(async () => {
      const { t, owner, receiver } = h;
      pushId = (await buildPushRequest(t, owner, { callback_url: `${receiver.url}/expired?ref=push` })).id;
      files = [
        (await buildMedia(t, owner, { request: pushId, name: "a.txt", data: "first file\n" })).id,
        (await buildMedia(t, owner, { request: pushId, name: "b.txt", data: "second file\n" })).id,
      ];
      await sendDraft(t, owner, pushId, { expires_at: fromNow(HOUR) });
      laterId = (await buildRequest(t, owner, { type: "push", expires_at: fromNow(2 * HOUR) })).id;
      beforeExpiry.download = (await download(files[0]!)).statusCode;
      blobKeys = (
        await t.ferry.database.db
          .selectFrom("media_parts")
          .select("blob_key")
          .where("media_id", "in", files)
          .execute()
      ).map((p) => p.blob_key);
      for (const key of blobKeys) beforeExpiry.blobsExist.push(await t.ferry.blobStore.exists(key));

      t.clock.advance(HOUR + 2000);
      await eventually(async () => (await getRequest(pushId)).complete === true);
    });

    it("served its files, stored in blobs, before expires_at", () => {
      expect(beforeExpiry.download).toBe(200);
      expect(blobKeys).toHaveLength(2);
      expect(beforeExpiry.blobsExist).toEqual([true, true]);
    });

    it("is marked complete and expired", async () => {
      expect(await getRequest(pushId)).toMatchObject({
        id: pushId,
        type: "push",
        complete: true,
        is_expired: true,
      });
    });

    it("leaves a push request that expires later open", async () => {
      expect((await getRequest(laterId)).complete).toBe(false);
    });

    it("refuses downloads of its files", async () => {
      for (const id of files) expect([404, 410]).toContain((await download(id)).statusCode);
    });

    it("marks its files removed, without their keys or parts", async () => {
      const { db } = h.t.ferry.database;
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
    });

    it("deletes its files' blobs through the media feature's blobs.delete job", async () => {
      await eventually(async () => {
        for (const key of blobKeys) if (await h.t.ferry.blobStore.exists(key)) return false;
        return true;
      });
    });

    it("sends request_complete to the callback URL, keeping its query string", async () => {
      const [got] = await h.receiver.waitFor(1);
      expect(got?.url).toBe("/expired?ref=push");
      expect(got?.json).toMatchObject({
        type: "request_complete",
        request: { id: pushId, complete: true, is_expired: true },
      });
    });

    it("records and sends one event only, however many sweeps follow", async () => {
      await h.receiver.waitFor(1);
      const sweepsBefore = await doneSweeps();
      h.t.clock.advance(5000);
      await eventually(async () => (await doneSweeps()) > sweepsBefore);
      const events = await h.t.ferry.database.db
        .selectFrom("callback_events")
        .select("id")
        .where("request_id", "=", pushId)
        .execute();
      expect(events).toHaveLength(1);
      expect(h.receiver.received).toHaveLength(1);
    });
  });

  it("completes a pull request for its recipient, once", async () => {
    const { t, owner, receiver } = h;
    const pullId = (await buildRequest(t, owner, { callback_url: `${receiver.url}/pull` })).id;
    const before = receiver.received.length;
    const view = await t.ferry.lifecycle.completePullRequest(owner.accountId, pullId, {
      receiverMessage: "Done!",
    });
    expect(view).toMatchObject({ id: pullId, complete: true, is_expired: false, receiver_message: "Done!" });
    expect(await getRequest(pullId)).toMatchObject({ complete: true, receiver_message: "Done!" });
    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got?.json).toMatchObject({ type: "request_complete", request: { id: pullId, complete: true } });

    await expectRefusal(
      t.ferry.lifecycle.completePullRequest(owner.accountId, pullId),
      422,
      "The request is already complete.",
    );
  });

  it("refuses to complete what is not an open, sent pull request of the account", async () => {
    const { t, owner } = h;
    const { lifecycle } = t.ferry;
    const push = (await buildRequest(t, owner, { type: "push" })).id;
    const draft = (await buildRequest(t, owner, { is_draft: true })).id;
    const expiring = (await buildRequest(t, owner, { expires_at: fromNow(60_000) })).id;
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
    const { t, owner } = h;
    const push = (await buildPushRequest(t, owner)).id;
    const media = (await buildMedia(t, owner, { request: push, name: "d.txt", data: "on demand\n" })).id;
    await sendDraft(t, owner, push);
    const view = await t.ferry.lifecycle.expirePushRequestNow(owner.accountId, push);
    expect(view).toMatchObject({ id: push, complete: true, is_expired: true });
    const row = await t.ferry.database.db
      .selectFrom("media")
      .select("state")
      .where("id", "=", media)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe("removed");
    await expectRefusal(
      t.ferry.lifecycle.expirePushRequestNow(owner.accountId, push),
      422,
      "The request is already complete.",
    );
  });

  async function doneSweeps(): Promise<number> {
    const row = await h.t.ferry.database.db
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
