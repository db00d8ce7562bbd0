import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart, partsOf, sha256 } from "../../../test/helpers/media.js";
import { toTimestamp } from "../../shared/time.js";

let t: TestApp;
let owner: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
});
afterAll(async () => t?.close());

const db = () => t.ferry.database.db;

/** A sent pull request with one file uploaded by its recipient (through the service). */
async function pullFile(data: Buffer): Promise<{ requestId: number; mediaId: number }> {
  const requestId = await createRequest(t, owner, { type: "pull" });
  const view = await t.ferry.media.recipientCreate(
    requestId,
    partsOf({ name: "scan.pdf", content_type: "application/pdf" }, data),
  );
  return { requestId, mediaId: view.id };
}

/** A new download that asks for a range: download-limited files are sent whole all the same. */
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
    const media = await t.ferry.media.listOfRequest(requestId);
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

  const data = bytesOf(30_000, "rchunks");

  it("takes chunks from the recipient", async () => {
    const requestId = await createRequest(t, owner, { type: "pull" });
    const first = await t.ferry.media.recipientCreate(
      requestId,
      partsOf({ name: "a.bin", total_chunks: 2, current_chunk: 2 }, data.subarray(20_000)),
    );
    const done = await t.ferry.media.recipientPutChunk(
      requestId,
      first.id,
      partsOf({ current_chunk: 1 }, data.subarray(0, 20_000)),
    );
    expect(done).toMatchObject({ state: "available", sha256: sha256(data), bytes: 30_000 });
  });

  it("refuses recipient uploads into push requests", async () => {
    const push = await createRequest(t, owner, { type: "push" });
    await expect(t.ferry.media.recipientCreate(push, partsOf({ name: "a.bin" }, data))).rejects.toMatchObject(
      { status: 422 },
    );
  });

  it("refuses recipient uploads into pull requests not sent yet", async () => {
    const draft = await createRequest(t, owner, { type: "pull", is_draft: true });
    await expect(
      t.ferry.media.recipientCreate(draft, partsOf({ name: "a.bin" }, data)),
    ).rejects.toMatchObject({ status: 422 });
  });

  it("refuses recipient uploads into complete requests", async () => {
    const requestId = await createRequest(t, owner, { type: "pull" });
    await db().updateTable("requests").set({ complete: 1 }).where("id", "=", requestId).execute();
    await expect(
      t.ferry.media.recipientCreate(requestId, partsOf({ name: "b.bin" }, data)),
    ).rejects.toMatchObject({
      status: 422,
      detail: "This request is complete: it accepts no more files.",
    });
  });
});

describe("download-once", () => {
  /** A pull file whose download-once claim another download holds for another minute. */
  async function claimedFile(): Promise<number> {
    const { mediaId } = await pullFile(bytesOf(10, "claimed"));
    await db()
      .updateTable("media")
      .set({
        download_claim_token: "someone-else",
        download_claimed_until: toTimestamp(new Date(t.clock.now().getTime() + 60_000)),
      })
      .where("id", "=", mediaId)
      .execute();
    return mediaId;
  }

  it("tells a concurrent download that the file is being downloaded", async () => {
    const mediaId = await claimedFile();
    const res = await download(mediaId);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: "CONFLICT",
      detail:
        "This file can be downloaded once and another download of it is in progress. Try again if that download fails.",
    });
  });

  it("lets a new download through, whole, once the other download's claim has run out", async () => {
    const mediaId = await claimedFile();
    t.clock.advance(5 * 60_000);
    const res = await download(mediaId);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-range"]).toBeUndefined();
    expect(res.rawPayload.equals(bytesOf(10, "claimed"))).toBe(true);
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
