import { open, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, flipByte, multipart } from "../../../test/helpers/media.js";
import { BLOB_HEADER_BYTES, SEGMENT_BLOB_BYTES } from "../../crypto/segment-aead.js";

// Tampering happens on the local blob store's files; the download goes through a real socket so a
// stream aborted mid-way is seen as the client would see it.
let t: TestApp;
let owner: TestAccount;
let draft: number;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
  ({ base } = await listenOnLoopback(t.app));
});
afterAll(async () => t?.close());

async function uploadWhole(data: Buffer): Promise<{ id: number; path: string }> {
  const body = multipart({ request: draft, name: "t.bin" }, { data });
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/media/",
    headers: { ...owner.headers, ...body.headers },
    payload: body.payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  const part = await t.ferry.database.db
    .selectFrom("media_parts")
    .selectAll()
    .where("media_id", "=", res.json().id)
    .executeTakeFirstOrThrow();
  return {
    id: res.json().id,
    path: `${join(t.database.dataDir, "blobs", ...part.blob_key.split("/"))}.blob`,
  };
}

/** Downloads over HTTP; returns the status, the JSON error if any, the bytes received and whether the body completed. */
async function fetchDownload(id: number) {
  const res = await fetch(`${base}/v1/media/${id}/download`, { headers: owner.headers });
  const received: Buffer[] = [];
  let completed = true;
  try {
    for await (const piece of res.body as AsyncIterable<Uint8Array>) received.push(Buffer.from(piece));
  } catch {
    completed = false;
  }
  const bytes = Buffer.concat(received);
  return {
    status: res.status,
    bytes,
    completed,
    json: res.headers.get("content-type")?.startsWith("application/json")
      ? JSON.parse(bytes.toString())
      : undefined,
  };
}

async function swapSegments(path: string, a: number, b: number): Promise<void> {
  const handle = await open(path, "r+");
  const first = Buffer.alloc(SEGMENT_BLOB_BYTES);
  const second = Buffer.alloc(SEGMENT_BLOB_BYTES);
  const at = (i: number) => BLOB_HEADER_BYTES + i * SEGMENT_BLOB_BYTES;
  await handle.read(first, 0, first.length, at(a));
  await handle.read(second, 0, second.length, at(b));
  await handle.write(second, 0, second.length, at(a));
  await handle.write(first, 0, first.length, at(b));
  await handle.close();
}

/** Never a completed body, and whatever arrived is a prefix of the original bytes. */
function expectNoWrongBytes(result: Awaited<ReturnType<typeof fetchDownload>>, original: Buffer) {
  if (result.status === 200) {
    expect(result.completed).toBe(false);
    expect(result.bytes.length).toBeLessThan(original.length);
    expect(original.subarray(0, result.bytes.length).equals(result.bytes)).toBe(true);
  } else {
    expect(result.status).toBe(500);
    expect(result.json.code).toBe("INTERNAL_SERVER_ERROR");
  }
}

describe("tampered blobs", () => {
  it("answers 500 before any byte when the first segment is flipped", async () => {
    const data = bytesOf(1000, "small");
    const { id, path } = await uploadWhole(data);
    await flipByte(path, BLOB_HEADER_BYTES + 10);
    const result = await fetchDownload(id);
    expect(result.status).toBe(500);
    expect(result.json).toEqual({
      code: "INTERNAL_SERVER_ERROR",
      detail:
        "The stored file failed its integrity check; nothing was sent. The operator has been alerted in the logs.",
    });
  });

  it("aborts the stream when a later segment is flipped", async () => {
    // Far enough in (5 MiB) that no back pressure lets the server read up to it before the
    // answer starts: the blocks read ahead and the buffers between them hold about 2.5 MiB.
    const data = bytesOf(6 * 1024 * 1024, "flip");
    const { id, path } = await uploadWhole(data);
    const offset = BLOB_HEADER_BYTES + 80 * SEGMENT_BLOB_BYTES + 5;
    expect((await stat(path)).size).toBeGreaterThan(offset + SEGMENT_BLOB_BYTES);
    await flipByte(path, offset);
    const result = await fetchDownload(id);
    expect(result.status).toBe(200);
    expectNoWrongBytes(result, data);
  });

  it("aborts the stream when two segments are swapped", async () => {
    const data = bytesOf(2 * 1024 * 1024, "swap");
    const { id, path } = await uploadWhole(data);
    await swapSegments(path, 3, 4);
    expectNoWrongBytes(await fetchDownload(id), data);
  });

  it.each([
    ["at a segment boundary", 10 * SEGMENT_BLOB_BYTES],
    ["mid-segment", 10 * SEGMENT_BLOB_BYTES + 100],
  ])("aborts the stream when a part is truncated %s", async (_where, cut) => {
    const data = bytesOf(2 * 1024 * 1024, `cut-${cut}`);
    const { id, path } = await uploadWhole(data);
    await truncate(path, BLOB_HEADER_BYTES + cut);
    expectNoWrongBytes(await fetchDownload(id), data);
  });

  it("authenticates against the header recorded with the part, not the copy in the blob", async () => {
    const data = bytesOf(500, "header");
    const { id, path } = await uploadWhole(data);
    await flipByte(path, 8);
    const result = await fetchDownload(id);
    expect(result.status).toBe(200);
    expect(result.bytes.equals(data)).toBe(true);
  });

  it("refuses a blob replaced by another encryption of the same part", async () => {
    const data = bytesOf(500, "replaced");
    const first = await uploadWhole(data);
    const second = await uploadWhole(data);
    const { copyFile } = await import("node:fs/promises");
    await copyFile(second.path, first.path);
    const result = await fetchDownload(first.id);
    expect(result.status).toBe(500);
  });
});
