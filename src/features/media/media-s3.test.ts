import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart, sha256 } from "../../../test/helpers/media.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "../../../test/helpers/s3-server.js";

// The same media flows with BLOB_STORE=s3 against a real S3-compatible server on 127.0.0.1.
let s3: TestS3Server;
let t: TestApp;
let owner: TestAccount;
let draft: number;

beforeAll(async () => {
  s3 = await startS3Server();
  t = await createTestApp(ferryS3Env(s3));
  owner = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
});
afterAll(async () => {
  await t?.close();
  await s3?.stop();
});

async function send(
  method: "POST" | "PUT",
  url: string,
  fields: Record<string, string | number>,
  data: Buffer,
) {
  const body = multipart(fields, { data, filename: "s3.bin" });
  return t.app.inject({ method, url, headers: { ...owner.headers, ...body.headers }, payload: body.payload });
}

describe("media on S3", () => {
  const data = bytesOf(9 * 1024 * 1024 + 123, "s3");
  const chunk = 4 * 1024 * 1024;

  it("round-trips a whole file", async () => {
    const whole = await send("POST", "/v1/media/", { request: draft, name: "s3.bin" }, data);
    expect(whole.statusCode, whole.body).toBe(201);
    const got = await t.app.inject({
      method: "GET",
      url: `/v1/media/${whole.json().id}/download`,
      headers: owner.headers,
    });
    expect(sha256(got.rawPayload)).toBe(sha256(data));
  });

  describe("a chunked upload sent out of order", () => {
    let id: number;
    let last: Awaited<ReturnType<typeof send>>;
    beforeAll(async () => {
      const first = await send(
        "POST",
        "/v1/media/",
        { request: draft, name: "c.bin", total_chunks: 3, current_chunk: 3 },
        data.subarray(2 * chunk),
      );
      id = first.json().id as number;
      expect(
        (await send("PUT", `/v1/media/${id}`, { current_chunk: 1 }, data.subarray(0, chunk))).statusCode,
      ).toBe(201);
      last = await send("PUT", `/v1/media/${id}`, { current_chunk: 2 }, data.subarray(chunk, 2 * chunk));
    });

    it("completes with the file's SHA-256", () => {
      expect(last.json()).toMatchObject({ state: "available", sha256: sha256(data) });
    });

    it("serves a range across two chunks", async () => {
      const range = await t.app.inject({
        method: "GET",
        url: `/v1/media/${id}/download`,
        headers: { ...owner.headers, range: `bytes=${chunk - 5}-${chunk + 5}` },
      });
      expect(range.statusCode).toBe(206);
      expect(range.rawPayload.equals(data.subarray(chunk - 5, chunk + 6))).toBe(true);
    });
  });

  // After the uploads above.
  const parts = () =>
    t.ferry.database.db.selectFrom("media_parts").select(["blob_store", "blob_key"]).execute();

  it("records s3 as the store of every part", async () => {
    expect(new Set((await parts()).map((p) => p.blob_store))).toEqual(new Set(["s3"]));
  });

  it("deletes the parts' blobs from S3", async () => {
    const all = await parts();
    await t.ferry.media.storage.deleteBlobs(all.map((p) => ({ store: p.blob_store, key: p.blob_key })));
    for (const p of all) expect(await t.ferry.blobStore.exists(p.blob_key)).toBe(false);
  });
});
