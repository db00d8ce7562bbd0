/**
 * The digests of a chunked upload whose chunks come to different nodes (ADR 0075): two Ferry
 * instances over one database and one blob folder. Whatever node each chunk reaches, and in
 * whatever order, the completed media carries the SHA-256 and MD5 (`file_checksum`) of the file.
 * The running digests are saved with each chunk that extends the hashed prefix, so the node that
 * receives the next chunk continues them.
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
  a = await createTestApp({ UPLOAD_DIGEST_STATE: "on" });
  b = await createPeerApp(a, { UPLOAD_DIGEST_STATE: "on" });
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

describe("a chunked upload across two nodes", () => {
  it("in order on one node: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 2, 3, 4, 5, 6], [a]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("in order, alternating nodes: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 2, 3, 4, 5, 6], [a, b]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("in order, alternating nodes: each chunk saves the digests the other node continues", async () => {
    let id: number | undefined;
    for (let chunk = 1; chunk < CHUNKS; chunk++) {
      const res = await send(chunk % 2 === 1 ? a : b, chunk, id);
      id ??= res.id;
      expect(res.state).toBe("uploading");
      expect(await savedChunks(id)).toBe(chunk);
    }
    const last = await send(b, CHUNKS, id);
    expect(last).toMatchObject({ state: "available", ...expected });
    expect(await savedChunks(id!)).toBeNull();
  });

  it("out of order, alternating nodes: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 3, 2, 5, 4, 6], [a, b]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("last chunk first, then the rest alternating: the file's SHA-256 and MD5", async () => {
    const last = await upload([6, 1, 2, 3, 4, 5], [b, a]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("an early chunk replaced on the other node after later ones: the digests of the final bytes", async () => {
    const wrong = bytesOf(CHUNK, "replaced");
    const first = await send(a, 1, undefined);
    await send(a, 2, first.id, wrong);
    await send(b, 3, first.id);
    await send(a, 4, first.id);
    // Chunk 2 again, with the right bytes, on the node that did not store it first.
    await send(b, 2, first.id);
    await send(a, 5, first.id);
    const last = await send(b, 6, first.id);
    expect(last).toMatchObject({ state: "available", ...expected });
  });
});
