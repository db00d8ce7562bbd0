import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart } from "../../../test/helpers/media.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "../../../test/helpers/s3-server.js";

// Chunked uploads with several chunks in flight at once over real sockets, on the local blob store
// and on an S3-compatible server: the digests of the finished media are those of the whole file
// whatever order the chunks were stored in, and the downloaded bytes are the file's.

const CHUNK = 256 * 1024;

function digestsOf(data: Buffer) {
  return {
    sha256: createHash("sha256").update(data).digest("hex"),
    md5: createHash("md5").update(data).digest("hex"),
  };
}

function slices(data: Buffer, chunkBytes: number): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += chunkBytes) {
    out.push(data.subarray(offset, offset + chunkBytes));
  }
  return out;
}

describe.each(["local", "s3"] as const)("chunks in flight together (%s blob store)", (store) => {
  let s3: TestS3Server | undefined;
  let t: TestApp;
  let owner: TestAccount;
  let draft: number;
  let base: string;

  beforeAll(async () => {
    s3 = store === "s3" ? await startS3Server() : undefined;
    t = await createTestApp({ MAX_CHUNK_BYTES: String(CHUNK), ...(s3 ? ferryS3Env(s3) : {}) });
    owner = await createTestAccount(t);
    draft = await createRequest(t, owner, { type: "push", is_draft: true });
    ({ base } = await listenOnLoopback(t.app));
  });
  afterAll(async () => {
    await t?.close();
    await s3?.stop();
  });

  /**
   * Sends one chunk over HTTP. With `gate`, the body stops half way until `gate` resolves, so the
   * chunk is still arriving while others are stored.
   */
  async function sendChunk(
    method: "POST" | "PUT",
    path: string,
    fields: Record<string, string | number>,
    data: Buffer,
    gate?: Promise<unknown>,
  ) {
    const body = multipart(fields, { data, filename: "f.bin" });
    const cut = body.payload.length - Math.floor(data.length / 2);
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new Uint8Array(body.payload.subarray(0, cut)));
        await gate;
        controller.enqueue(new Uint8Array(body.payload.subarray(cut)));
        controller.close();
      },
    });
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...owner.headers,
        ...body.headers,
        "content-length": String(body.payload.length),
      },
      body: stream,
      duplex: "half",
    } as RequestInit);
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  async function download(id: number): Promise<Buffer> {
    const res = await fetch(`${base}/v1/media/${id}/download`, { headers: owner.headers });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  /** Creates a chunked media with its first chunk; returns its id. */
  async function start(chunks: Buffer[], fields: Record<string, string | number> = {}): Promise<number> {
    const first = await sendChunk(
      "POST",
      "/v1/media/",
      { request: draft, name: "f.bin", total_chunks: chunks.length, current_chunk: 1, ...fields },
      chunks[0]!,
    );
    expect(first.status, JSON.stringify(first.json)).toBe(201);
    return first.json.id as number;
  }

  it("completes with the file's SHA-256 and MD5 when chunks are stored out of order, 4 in flight", async () => {
    const data = bytesOf(9 * CHUNK + 1234, `in-flight-${store}`);
    const chunks = slices(data, CHUNK);
    const id = await start(chunks);
    // Waves of 4 chunks: in each, the first chunk of the wave is held half-sent until the other
    // three are answered, so they are stored ahead of the hashed prefix.
    for (let wave = 2; wave <= chunks.length; wave += 4) {
      const numbers = [wave, wave + 1, wave + 2, wave + 3].filter((n) => n <= chunks.length);
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const [slow, ...rest] = numbers;
      const slowAnswer = sendChunk(
        "PUT",
        `/v1/media/${id}`,
        { current_chunk: slow! },
        chunks[slow! - 1]!,
        gate,
      );
      const others = await Promise.all(
        rest.map((n) => sendChunk("PUT", `/v1/media/${id}`, { current_chunk: n }, chunks[n - 1]!)),
      );
      for (const answer of others) expect(answer.status, JSON.stringify(answer.json)).toBe(201);
      release();
      const answer = await slowAnswer;
      expect(answer.status, JSON.stringify(answer.json)).toBe(201);
    }
    const media = await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }).then((r) => r.json());
    const expected = digestsOf(data);
    expect(media).toMatchObject({
      state: "available",
      sha256: expected.sha256,
      file_checksum: expected.md5,
      total_chunks: chunks.length,
    });
    expect((await download(id)).equals(data)).toBe(true);
  });

  it("completes correctly when the last chunk is sent first and the second last", async () => {
    const data = bytesOf(5 * CHUNK, `reversed-${store}`);
    const chunks = slices(data, CHUNK);
    const id = await start(chunks);
    for (const n of [5, 4, 3, 2]) {
      const answer = await sendChunk("PUT", `/v1/media/${id}`, { current_chunk: n }, chunks[n - 1]!);
      expect(answer.status, JSON.stringify(answer.json)).toBe(201);
    }
    const media = await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }).then((r) => r.json());
    expect(media).toMatchObject({
      state: "available",
      sha256: digestsOf(data).sha256,
      file_checksum: digestsOf(data).md5,
    });
    expect((await download(id)).equals(data)).toBe(true);
  });

  it("still refuses chunks that break the declared size, then completes with the right chunk", async () => {
    const data = bytesOf(4 * CHUNK - 10, `declared-${store}`);
    const chunks = slices(data, CHUNK);
    const id = await start(chunks, { total_bytes: data.length });
    const short = chunks[3]!.subarray(1);
    const answers = await Promise.all([
      sendChunk("PUT", `/v1/media/${id}`, { current_chunk: 2 }, chunks[1]!),
      sendChunk("PUT", `/v1/media/${id}`, { current_chunk: 3 }, chunks[2]!),
      sendChunk("PUT", `/v1/media/${id}`, { current_chunk: 4 }, short),
    ]);
    // Whichever chunk came last found every chunk there and a sum one byte short.
    expect(answers.filter((a) => a.status === 422)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(2);
    const refused = answers.find((a) => a.status === 422)!;
    expect(refused.json).toMatchObject({ code: "UNPROCESSABLE_ENTITY" });
    const waiting = await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }).then((r) => r.json());
    expect(waiting).toMatchObject({ state: "uploading", sha256: null });

    // Chunk 4 sent right: completes if it was the refused one, else replaces the short copy.
    const numbers = [2, 3, 4];
    const missing = numbers[answers.findIndex((a) => a.status === 422)]!;
    const fix = await sendChunk("PUT", `/v1/media/${id}`, { current_chunk: 4 }, chunks[3]!);
    expect(fix.status, JSON.stringify(fix.json)).toBe(201);
    if (missing !== 4) {
      const again = await sendChunk(
        "PUT",
        `/v1/media/${id}`,
        { current_chunk: missing },
        chunks[missing - 1]!,
      );
      expect(again.status, JSON.stringify(again.json)).toBe(201);
    }
    const media = await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }).then((r) => r.json());
    expect(media).toMatchObject({
      state: "available",
      sha256: digestsOf(data).sha256,
      file_checksum: digestsOf(data).md5,
    });
    expect((await download(id)).equals(data)).toBe(true);
  });

  it("refuses a chunk with another fingerprint while others are in flight", async () => {
    const data = bytesOf(3 * CHUNK, `fingerprint-${store}`);
    const chunks = slices(data, CHUNK);
    const id = await start(chunks, { fingerprint: "file-a" });
    const answers = await Promise.all([
      sendChunk("PUT", `/v1/media/${id}`, { current_chunk: 3, fingerprint: "file-a" }, chunks[2]!),
      sendChunk("PUT", `/v1/media/${id}`, { current_chunk: 2, fingerprint: "file-b" }, chunks[1]!),
    ]);
    expect(answers.map((a) => a.status)).toEqual([201, 409]);
    const done = await sendChunk(
      "PUT",
      `/v1/media/${id}`,
      { current_chunk: 2, fingerprint: "file-a" },
      chunks[1]!,
    );
    expect(done.status).toBe(201);
    expect(done.json).toMatchObject({ state: "available", sha256: digestsOf(data).sha256 });
  });
});
