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
import { eventually } from "../../../test/helpers/process.js";

// Chunks sent as the whole body (application/octet-stream, current_chunk in the query string,
// ADR 0041) over real sockets: the same media, digests, errors and audit entries as chunks sent as
// multipart forms, with both kinds mixed in one upload.

const MiB = 1024 * 1024;
const CHUNK = 4 * MiB;

let t: TestApp;
let owner: TestAccount;
let other: TestAccount;
let draft: number;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
  other = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
  ({ base } = await listenOnLoopback(t.app));
});
afterAll(async () => t?.close());

const digest = (algorithm: string, data: Buffer) => createHash(algorithm).update(data).digest("hex");

async function answer(res: Response) {
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Starts an upload of `total` chunks with chunk 1 (the first chunk is always a form). */
async function start(total: number, first: Buffer, fields: Record<string, string | number> = {}) {
  const body = multipart(
    { request: draft, name: "raw.bin", total_chunks: total, current_chunk: 1, ...fields },
    { data: first, filename: "raw.bin" },
  );
  const res = await answer(
    await fetch(`${base}/v1/media/`, {
      method: "POST",
      headers: { ...owner.headers, ...body.headers },
      body: new Uint8Array(body.payload),
    }),
  );
  expect(res.status).toBe(201);
  return res.body as { id: number };
}

/** PUTs `data` as the raw body; `query` is the query string (without "?"). */
async function putRaw(
  id: number,
  query: string,
  data: Buffer | ReadableStream<Uint8Array> | undefined,
  opts: { who?: TestAccount; type?: string; path?: string } = {},
) {
  const init: RequestInit & { duplex?: "half" } = {
    method: "PUT",
    headers: { ...(opts.who ?? owner).headers, "content-type": opts.type ?? "application/octet-stream" },
  };
  if (data instanceof ReadableStream) {
    init.body = data;
    init.duplex = "half";
  } else if (data) {
    init.body = new Uint8Array(data);
  }
  const path = opts.path ?? `/v1/media/${id}`;
  return answer(await fetch(`${base}${path}${query ? `?${query}` : ""}`, init));
}

async function putForm(id: number, fields: Record<string, string | number>, data: Buffer) {
  const body = multipart(fields, { data, filename: "raw.bin" });
  return answer(
    await fetch(`${base}/v1/media/${id}/`, {
      method: "PUT",
      headers: { ...owner.headers, ...body.headers },
      body: new Uint8Array(body.payload),
    }),
  );
}

async function download(id: number): Promise<Buffer> {
  const res = await fetch(`${base}/v1/media/${id}/download`, { headers: owner.headers });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

function chunkOf(data: Buffer, n: number): Buffer {
  return data.subarray((n - 1) * CHUNK, n * CHUNK);
}

describe("PUT /v1/media/{id} with the chunk as the body", () => {
  it("completes an upload with the file's SHA-256 and MD5; the download is the file", async () => {
    const data = bytesOf(2 * CHUNK + 12345, "raw-in-order");
    const { id } = await start(3, chunkOf(data, 1));
    const second = await putRaw(id, "current_chunk=2", chunkOf(data, 2));
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ id, state: "uploading", current_chunk: 2, sha256: null });
    const last = await putRaw(id, "current_chunk=3", chunkOf(data, 3), { path: `/v1/media/${id}/` });
    expect(last.status).toBe(201);
    expect(last.body).toMatchObject({
      id,
      state: "available",
      bytes: data.length,
      total_chunks: 3,
      current_chunk: 3,
      sha256: digest("sha256", data),
      file_checksum: digest("md5", data),
    });
    expect((await download(id)).equals(data)).toBe(true);
  });

  it("takes chunks in any order, and a chunk sent again replaces the earlier copy", async () => {
    const data = bytesOf(3 * CHUNK + 7, "raw-out-of-order");
    const { id } = await start(4, chunkOf(data, 1));
    expect((await putRaw(id, "current_chunk=4", chunkOf(data, 4))).status).toBe(201);
    expect((await putRaw(id, "current_chunk=2", bytesOf(CHUNK, "wrong bytes"))).status).toBe(201);
    expect((await putRaw(id, "current_chunk=3", chunkOf(data, 3))).body).toMatchObject({
      state: "available",
      sha256: expect.not.stringMatching(digest("sha256", data)),
    });
    const fixed = await putRaw(id, "current_chunk=2", chunkOf(data, 2));
    expect(fixed.body).toMatchObject({
      state: "available",
      current_chunk: 4,
      bytes: data.length,
      sha256: digest("sha256", data),
      file_checksum: digest("md5", data),
    });
    expect((await download(id)).equals(data)).toBe(true);
  });

  it("mixes with chunks sent as multipart forms in one upload", async () => {
    const data = bytesOf(3 * CHUNK + 99, "mixed");
    const { id } = await start(4, chunkOf(data, 1));
    expect((await putForm(id, { current_chunk: 3 }, chunkOf(data, 3))).status).toBe(201);
    expect((await putRaw(id, "current_chunk=2", chunkOf(data, 2))).status).toBe(201);
    const last = await putForm(id, { current_chunk: 4 }, chunkOf(data, 4));
    expect(last.body).toMatchObject({
      state: "available",
      sha256: digest("sha256", data),
      file_checksum: digest("md5", data),
    });
    expect((await download(id)).equals(data)).toBe(true);
  });

  it("streams a body sent without Content-Length (chunked transfer encoding)", async () => {
    const data = bytesOf(CHUNK + 5, "streamed");
    const { id } = await start(2, chunkOf(data, 1));
    const tail = chunkOf(data, 2);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(tail.subarray(0, 2)));
        controller.enqueue(new Uint8Array(tail.subarray(2)));
        controller.close();
      },
    });
    const res = await putRaw(id, "current_chunk=2", stream);
    expect(res.body).toMatchObject({ state: "available", sha256: digest("sha256", data) });
  });

  it("writes the same audit entry as a form chunk, with the body's content type", async () => {
    const viaRaw = (await start(2, bytesOf(10))).id;
    const viaForm = (await start(2, bytesOf(10))).id;
    expect((await putRaw(viaRaw, "current_chunk=2", bytesOf(20))).status).toBe(201);
    expect((await putForm(viaForm, { current_chunk: 2 }, bytesOf(20))).status).toBe(201);
    const chunkEntry = async (id: number) => {
      const rows = await t.ferry.database.db
        .selectFrom("audit_entries")
        .select(["code", "value", "method", "path", "content_type"])
        .where("related_model", "=", "media")
        .where("relation_key", "=", String(id))
        .execute();
      return rows.find((e) => e.value?.startsWith("chunk"));
    };
    await eventually(async () => (await chunkEntry(viaRaw)) !== undefined);
    await eventually(async () => (await chunkEntry(viaForm)) !== undefined);
    const raw = await chunkEntry(viaRaw);
    const form = await chunkEntry(viaForm);
    expect(raw).toMatchObject({
      value: "chunk 2 of 2 stored (owner)",
      method: "PUT",
      path: `/v1/media/${viaRaw}`,
      content_type: "application/octet-stream",
    });
    expect(form).toMatchObject({ value: "chunk 2 of 2 stored (owner)", content_type: "multipart/form-data" });
    expect(raw?.code).toBe(form?.code);
  });

  it("checks the fingerprint given in the query string", async () => {
    const { id } = await start(2, bytesOf(10), { fingerprint: "file-a" });
    const wrong = await putRaw(id, "current_chunk=2&fingerprint=file-b", bytesOf(10));
    expect(wrong.status).toBe(409);
    expect(wrong.body).toMatchObject({ code: "CONFLICT" });
    const right = await putRaw(id, "current_chunk=2&fingerprint=file-a", bytesOf(10));
    expect(right.body).toMatchObject({ state: "available" });
  });
});

describe("raw chunk bodies refused, as forms are", () => {
  const tooLarge = {
    code: "PAYLOAD_TOO_LARGE",
    detail: "The chunk is larger than the maximum of 4194304 bytes (4 MiB). Send chunks of at most 4 MiB.",
  };

  it("answers 413 to a chunk over 4 MiB, declared or streamed, and the media keeps its chunks", async () => {
    const { id } = await start(2, bytesOf(10));
    const declared = await putRaw(id, "current_chunk=2", bytesOf(CHUNK + 1));
    expect(declared).toEqual({ status: 413, body: tooLarge });
    const big = bytesOf(CHUNK + 1);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < big.length; at += 256 * 1024)
          controller.enqueue(new Uint8Array(big.subarray(at, at + 256 * 1024)));
        controller.close();
      },
    });
    const streamed = await putRaw(id, "current_chunk=2", stream);
    expect(streamed).toEqual({ status: 413, body: tooLarge });
    const form = await putForm(id, { current_chunk: 2 }, big);
    expect(form).toEqual({ status: 413, body: tooLarge });
    const media = await answer(await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }));
    expect(media.body).toMatchObject({ state: "uploading", received_chunks: [1], bytes: 10 });
  });

  it("answers 400 without current_chunk, as a form without it", async () => {
    const { id } = await start(2, bytesOf(10));
    const raw = await putRaw(id, "", bytesOf(3));
    const form = await putForm(id, {}, bytesOf(3));
    expect(raw).toEqual({ status: 400, body: { current_chunk: ["This field is required."] } });
    expect(raw).toEqual(form);
  });

  it("refuses a chunk without current_chunk before reading its body", async () => {
    const { id } = await start(2, bytesOf(10));
    // A body that sends one piece and then waits: only an answer given before the body is read
    // can arrive; the stream is cancelled once it has.
    let cancel!: () => void;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(64 * 1024));
        cancel = () => controller.error(new Error("cancelled by the test"));
      },
    });
    const res = await fetch(`${base}/v1/media/${id}`, {
      method: "PUT",
      headers: {
        ...owner.headers,
        "content-type": "application/octet-stream",
        "content-length": String(CHUNK),
      },
      body: stalled,
      duplex: "half",
    } as RequestInit & { duplex: "half" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ current_chunk: ["This field is required."] });
    cancel();
    const media = await answer(await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }));
    expect(media.body).toMatchObject({ state: "uploading", received_chunks: [1], bytes: 10 });
  }, 20_000);

  it.each(["0", "3", "abc", "-1"])("answers 400 to current_chunk=%s, as a form with it", async (value) => {
    const { id } = await start(2, bytesOf(10));
    const raw = await putRaw(id, `current_chunk=${value}`, bytesOf(3));
    const form = await putForm(id, { current_chunk: value }, bytesOf(3));
    expect(raw).toEqual({
      status: 400,
      body: { current_chunk: ["Ensure this value is between 1 and total_chunks (2)."] },
    });
    expect(raw).toEqual(form);
  });

  it("answers 400 to an empty or missing body, as a form without a file", async () => {
    const { id } = await start(2, bytesOf(10));
    const empty = await putRaw(id, "current_chunk=2", Buffer.alloc(0));
    const missing = await putRaw(id, "current_chunk=2", undefined);
    const noFile = multipart({ current_chunk: 2 });
    const form = await answer(
      await fetch(`${base}/v1/media/${id}/`, {
        method: "PUT",
        headers: { ...owner.headers, ...noFile.headers },
        body: new Uint8Array(noFile.payload),
      }),
    );
    for (const res of [empty, missing])
      expect(res).toEqual({ status: 400, body: { file: ["No file was submitted."] } });
    expect(form.body).toEqual({ file: ["No file was submitted."] });
  });

  it("answers 415 to bytes under another content type", async () => {
    const { id } = await start(2, bytesOf(10));
    for (const type of ["text/plain", "application/offset+octet-stream", "image/png"]) {
      const res = await putRaw(id, "current_chunk=2", bytesOf(3), { type });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    }
    const media = await answer(await fetch(`${base}/v1/media/${id}/`, { headers: owner.headers }));
    expect(media.body).toMatchObject({ received_chunks: [1] });
  });

  it("answers 415 to a raw first chunk: POST /v1/media/ takes forms only", async () => {
    const res = await answer(
      await fetch(`${base}/v1/media/?request=${draft}&name=a.bin`, {
        method: "POST",
        headers: { ...owner.headers, "content-type": "application/octet-stream" },
        body: new Uint8Array(bytesOf(3)),
      }),
    );
    expect(res).toEqual({
      status: 415,
      body: {
        code: "UNSUPPORTED_MEDIA_TYPE",
        detail: "Send the upload as multipart/form-data (recommended) or application/x-www-form-urlencoded.",
      },
    });
  });

  it("answers 404 for another account's media", async () => {
    const { id } = await start(2, bytesOf(10));
    const res = await putRaw(id, "current_chunk=2", bytesOf(3), { who: other });
    expect(res.status).toBe(404);
  });
});

describe("the OpenAPI document", () => {
  it("documents both request bodies of uploadMediaChunk and the raw body's query parameters", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    const put = doc.paths["/v1/media/{id}/"].put;
    expect(put.operationId).toBe("uploadMediaChunk");
    expect(Object.keys(put.requestBody.content).sort()).toEqual([
      "application/octet-stream",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
    ]);
    expect(put.requestBody.content["application/octet-stream"].schema).toMatchObject({
      type: "string",
      format: "binary",
    });
    expect(put.requestBody.content["multipart/form-data"].schema).toEqual({
      $ref: "#/components/schemas/MediaChunkInput",
    });
    const query = put.parameters.filter((p: { in: string }) => p.in === "query");
    expect(query.map((p: { name: string }) => p.name).sort()).toEqual(["current_chunk", "fingerprint"]);
  });
});
