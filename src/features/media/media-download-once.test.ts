import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { eventually } from "../../../test/helpers/process.js";
import { bytesOf, createRequest, multipart, partsOf, sha256 } from "./media.testkit.js";

let t: TestApp;
let owner: TestAccount;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const address = t.app.server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => t?.close());

const db = () => t.container.database.db;

/** A sent pull request with one file uploaded by its recipient (through the service). */
async function pullFile(data: Buffer): Promise<{ requestId: number; mediaId: number }> {
  const requestId = await createRequest(t, owner, { type: "pull" });
  const view = await t.container.media.recipientCreate(
    requestId,
    partsOf({ name: "scan.pdf", content_type: "application/pdf" }, data),
  );
  return { requestId, mediaId: view.id };
}

const download = (id: number) =>
  t.app.inject({
    method: "GET",
    url: `/v1/media/${id}/download`,
    headers: { ...owner.headers, range: "bytes=0-9" },
  });

describe("recipient uploads", () => {
  it("stores a recipient's file in an open pull request, downloadable once", async () => {
    const data = bytesOf(70_000, "recipient");
    const { requestId, mediaId } = await pullFile(data);
    const media = await t.container.media.listOfRequest(requestId);
    expect(media).toEqual([
      expect.objectContaining({
        id: mediaId,
        request: requestId,
        name: "scan.pdf",
        state: "available",
        sha256: sha256(data),
        max_allowed_times_downloaded: 1,
        times_downloaded: 0,
      }),
    ]);
    const row = await db()
      .selectFrom("media")
      .select("uploaded_by")
      .where("id", "=", mediaId)
      .executeTakeFirstOrThrow();
    expect(row.uploaded_by).toBe("recipient");
  });

  it("takes chunks from the recipient and refuses push, draft and complete requests", async () => {
    const data = bytesOf(30_000, "rchunks");
    const requestId = await createRequest(t, owner, { type: "pull" });
    const first = await t.container.media.recipientCreate(
      requestId,
      partsOf({ name: "a.bin", total_chunks: 2, current_chunk: 2 }, data.subarray(20_000)),
    );
    const done = await t.container.media.recipientPutChunk(
      requestId,
      first.id,
      partsOf({ current_chunk: 1 }, data.subarray(0, 20_000)),
    );
    expect(done).toMatchObject({ state: "available", sha256: sha256(data), bytes: 30_000 });
    const push = await createRequest(t, owner, { type: "push" });
    await expect(
      t.container.media.recipientCreate(push, partsOf({ name: "a.bin" }, data)),
    ).rejects.toMatchObject({ status: 422 });
    const draft = await createRequest(t, owner, { type: "pull", is_draft: true });
    await expect(
      t.container.media.recipientCreate(draft, partsOf({ name: "a.bin" }, data)),
    ).rejects.toMatchObject({ status: 422 });
    await db().updateTable("requests").set({ complete: 1 }).where("id", "=", requestId).execute();
    await expect(
      t.container.media.recipientCreate(requestId, partsOf({ name: "b.bin" }, data)),
    ).rejects.toMatchObject({
      status: 422,
      detail: "This request is complete: it accepts no more files.",
    });
  });
});

describe("download-once", () => {
  it("lets exactly one of two concurrent downloads have the bytes, then destroys the file", async () => {
    const data = bytesOf(3 * 1024 * 1024, "once");
    const { mediaId } = await pullFile(data);
    const [a, b] = await Promise.all([download(mediaId), download(mediaId)]);
    const winners = [a, b].filter((r) => r.statusCode === 200);
    const losers = [a, b].filter((r) => r.statusCode !== 200);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.headers["accept-ranges"]).toBe("none");
    expect(sha256(winners[0]!.rawPayload)).toBe(sha256(data));
    expect([409, 410]).toContain(losers[0]!.statusCode);
    // The outcome is committed before the last bytes leave: once the client has the file, it is gone.
    const row = await db()
      .selectFrom("media")
      .selectAll()
      .where("id", "=", mediaId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      times_downloaded: 1,
      wrapped_key: null,
      removed_at: "2026-01-15T10:00:00.000000Z",
    });
    expect(
      await db().selectFrom("media_parts").select("media_id").where("media_id", "=", mediaId).execute(),
    ).toEqual([]);
    const again = await download(mediaId);
    expect(again.statusCode).toBe(410);
    expect(again.json()).toEqual({
      code: "GONE",
      detail:
        "The file is no longer available: it was downloaded 1 time(s), the most allowed, and then destroyed.",
    });
    const info = await t.app.inject({ method: "GET", url: `/v1/media/${mediaId}/`, headers: owner.headers });
    expect(info.json()).toMatchObject({
      state: "removed",
      times_downloaded: 1,
      removed_at: "2026-01-15T10:00:00.000000Z",
    });
    const audit = await db()
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABB-0010")
      .where("relation_key", "=", String(mediaId))
      .execute();
    expect(audit.map((e) => e.value)).toEqual([
      "owner download complete; the file reached its download limit and was destroyed",
    ]);
  });

  it("tells a concurrent download that the file is being downloaded", async () => {
    const { mediaId } = await pullFile(bytesOf(10, "claimed"));
    await db()
      .updateTable("media")
      .set({ download_claim_token: "someone-else", download_claimed_until: "2026-01-15T10:01:00.000000Z" })
      .where("id", "=", mediaId)
      .execute();
    const res = await download(mediaId);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: "CONFLICT",
      detail:
        "This file can be downloaded once and another download of it is in progress. Try again if that download fails.",
    });
    t.clock.advance(5 * 60_000);
    expect((await download(mediaId)).statusCode).toBe(200);
  });

  it("leaves the file downloadable when a download is aborted mid-stream", async () => {
    const data = bytesOf(48 * 1024 * 1024, "aborted");
    const { mediaId } = await pullFile(data);
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${base}/v1/media/${mediaId}/download`, { headers: owner.headers }, (res) => {
        expect(res.statusCode).toBe(200);
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
      req.end();
    });
    await eventually(async () => {
      const row = await db()
        .selectFrom("media")
        .selectAll()
        .where("id", "=", mediaId)
        .executeTakeFirstOrThrow();
      return row.download_claim_token === null;
    });
    const row = await db()
      .selectFrom("media")
      .selectAll()
      .where("id", "=", mediaId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: "available", times_downloaded: 0 });
    const full = await fetch(`${base}/v1/media/${mediaId}/download`, { headers: owner.headers });
    expect(full.status).toBe(200);
    expect(sha256(Buffer.from(await full.arrayBuffer()))).toBe(sha256(data));
    await eventually(async () => {
      const after = await db()
        .selectFrom("media")
        .select("state")
        .where("id", "=", mediaId)
        .executeTakeFirstOrThrow();
      return after.state === "removed";
    });
  });

  it("refuses owner uploads into pull requests", async () => {
    const pull = await createRequest(t, owner, { type: "pull" });
    const body = multipart({ request: pull, name: "x.bin" }, { data: bytesOf(3) });
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...body.headers },
      payload: body.payload,
    });
    expect(res.statusCode).toBe(422);
  });
});
