/**
 * Two Ferry nodes over one database and blob folder, and a chunked upload of a known file sent
 * chunk by chunk to either: what the digest tests across nodes share (ADR 0075).
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect } from "vitest";
import { createPeerApp, createTestAccount, createTestApp, type TestAccount, type TestApp } from "./app.js";
import { bytesOf, createRequest, multipart } from "./media.js";

export const CHUNK = 1024 * 1024;
export const CHUNKS = 6;
const data = bytesOf(CHUNKS * CHUNK - 12_345, "nodes");
const chunkOf = (n: number) => data.subarray((n - 1) * CHUNK, n * CHUNK);

/** The SHA-256 and MD5 (`file_checksum`) of the file every upload sends. */
export const expected = {
  sha256: createHash("sha256").update(data).digest("hex"),
  file_checksum: createHash("md5").update(data).digest("hex"),
};

export interface TwoNodes {
  readonly a: TestApp;
  readonly b: TestApp;
  /** Sends chunk `chunk` to `node` (the first creates the media); expects 201; the media. */
  send(
    node: TestApp,
    chunk: number,
    id: number | undefined,
    bytes?: Buffer,
  ): Promise<{ id: number; state: string; sha256: string | null; file_checksum: string | null }>;
  /** Chunks covered by the saved running digests, or null when none is saved. */
  savedChunks(id: number): Promise<number | null>;
  /** Sends the chunks in `order`, the i-th to `nodes[i % nodes.length]`; the last answer. */
  upload(order: number[], nodes: TestApp[]): ReturnType<TwoNodes["send"]>;
}

/** Starts two nodes with `env` for the test file (closed after it) and a draft to upload to. */
export function useTwoNodes(env: Record<string, string>): TwoNodes {
  let a: TestApp;
  let b: TestApp;
  let owner: TestAccount;
  let draft: number;
  beforeAll(async () => {
    a = await createTestApp(env);
    b = await createPeerApp(a, env);
    owner = await createTestAccount(a);
    draft = await createRequest(a, owner, { type: "push", is_draft: true });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });
  const send: TwoNodes["send"] = async (node, chunk, id, bytes = chunkOf(chunk)) => {
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
    return res.json();
  };
  return {
    get a() {
      return a;
    },
    get b() {
      return b;
    },
    send,
    async savedChunks(id) {
      const row = await a.ferry.database.db
        .selectFrom("media")
        .select("digest_chunks")
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
      return row.digest_chunks === null ? null : Number(row.digest_chunks);
    },
    async upload(order, nodes) {
      let id: number | undefined;
      let last: Awaited<ReturnType<TwoNodes["send"]>> | undefined;
      for (const [i, chunk] of order.entries()) {
        last = await send(nodes[i % nodes.length]!, chunk, id);
        id ??= last.id;
      }
      return last!;
    },
  };
}
