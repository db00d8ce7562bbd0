/**
 * The digests of a chunked upload across two nodes with UPLOAD_DIGEST_STATE=off (ADR 0075): the
 * native hashes keep no state another node could continue, so nothing is saved and the node that
 * completes the upload reads back the parts it did not hash; the digests are still the file's.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPeerApp,
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart } from "../../../test/helpers/media.js";

const CHUNK = 1024 * 1024;
const CHUNKS = 6;
const data = bytesOf(CHUNKS * CHUNK - 12_345, "nodes");
const chunkOf = (n: number) => data.subarray((n - 1) * CHUNK, n * CHUNK);
const expected = {
  sha256: createHash("sha256").update(data).digest("hex"),
  file_checksum: createHash("md5").update(data).digest("hex"),
};

let a: TestApp;
let b: TestApp;
let owner: TestAccount;
let draft: number;

beforeAll(async () => {
  a = await createTestApp({ UPLOAD_DIGEST_STATE: "off" });
  b = await createPeerApp(a, { UPLOAD_DIGEST_STATE: "off" });
  owner = await createTestAccount(a);
  draft = await createRequest(a, owner, { type: "push", is_draft: true });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function send(node: TestApp, chunk: number, id: number | undefined, bytes = chunkOf(chunk)) {
  const fields: Record<string, string | number> =
    id === undefined
      ? { request: draft, name: "nodes.bin", total_chunks: CHUNKS, current_chunk: chunk }
      : { current_chunk: chunk };
  const body = multipart(fields, { data: bytes, filename: "nodes.bin" });
  const res = await node.app.inject({
    method: id === undefined ? "POST" : "PUT",
    url: id === undefined ? "/v1/media/" : `/v1/media/${id}`,
    headers: { ...owner.headers, ...body.headers },
    payload: body.payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: number; state: string; sha256: string | null; file_checksum: string | null };
}

/** Chunks of the saved running digests (what the next node continues from). */
async function savedChunks(id: number): Promise<number | null> {
  const row = await a.ferry.database.db
    .selectFrom("media")
    .select("digest_chunks")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.digest_chunks === null ? null : Number(row.digest_chunks);
}

/** Sends the chunks in `order`, the i-th to `nodes[i % nodes.length]`; the last answer. */
async function upload(order: number[], nodes: TestApp[]) {
  let id: number | undefined;
  let last: Awaited<ReturnType<typeof send>> | undefined;
  for (const [i, chunk] of order.entries()) {
    last = await send(nodes[i % nodes.length]!, chunk, id);
    id ??= last.id;
  }
  return last!;
}

describe("UPLOAD_DIGEST_STATE=off: native hashes, nothing saved, the other node reads back", () => {
  it("in order, alternating nodes: the file's SHA-256 and MD5, and no state saved", async () => {
    let id: number | undefined;
    for (let chunk = 1; chunk < CHUNKS; chunk++) {
      const res = await send(chunk % 2 === 1 ? a : b, chunk, id);
      id ??= res.id;
      expect(await savedChunks(id)).toBeNull();
    }
    const last = await send(b, CHUNKS, id);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("out of order, alternating nodes: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 3, 2, 5, 4, 6], [a, b]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("in order on one node: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 2, 3, 4, 5, 6], [a]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });
});
