/**
 * Chunked uploads that say what file they are: a declared size (`total_bytes`) the chunks must add
 * up to, and a fingerprint every later chunk must repeat (docs/media.md, ADR 0022).
 */
import { describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { buildPushRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { bytesOf, multipart, sha256 } from "../../../test/helpers/media.js";
import { deref } from "../../../test/helpers/openapi.js";

const CHUNK = 1024;
const MAX_FILE = 100_000;
const h = useHarness({ env: { MAX_CHUNK_BYTES: String(4 * CHUNK), MAX_FILE_BYTES: String(MAX_FILE) } });

/** 2.5 chunks: the last one short. */
const FILE = bytesOf(2 * CHUNK + 500, "declared");
const chunkOf = (data: Buffer, n: number) => data.subarray((n - 1) * CHUNK, n * CHUNK);
const FINGERPRINT = "6f1ed002ab5595859014ebf0951522d9";

function send(method: "POST" | "PUT", url: string, fields: Record<string, string | number>, data: Buffer) {
  const body = multipart(fields, { data, filename: String(fields.name ?? "chunk.bin") });
  return h.call(method, url, body.payload, { contentType: body.headers["content-type"]! });
}

/** POSTs chunk 1 of FILE (three chunks) into a new draft push request with `fields` added. */
async function startUpload(fields: Record<string, string | number>, first = chunkOf(FILE, 1)) {
  const request = (await buildPushRequest(h.t, h.owner)).id as number;
  const res = await send(
    "POST",
    "/v1/media/",
    { request, name: "ledger.csv", total_chunks: 3, current_chunk: 1, ...fields },
    first,
  );
  return { request, media: expectJson(res, 201) };
}

const putChunk = (id: number, n: number, data: Buffer, fields: Record<string, string | number> = {}) =>
  send("PUT", `/v1/media/${id}`, { current_chunk: n, ...fields }, data);

const mediaOf = async (id: number): Promise<Json> => expectJson(await h.call("GET", `/v1/media/${id}/`), 200);

describe("a chunked upload with a declared size (total_bytes)", () => {
  it("completes at its declared size with the SHA-256 of its bytes, and shows the size from the start", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length });
    expect(media).toMatchObject({ state: "uploading", total_bytes: FILE.length, bytes: CHUNK });
    expectJson(await putChunk(media.id, 3, chunkOf(FILE, 3)), 201);
    const done = expectJson(await putChunk(media.id, 2, chunkOf(FILE, 2)), 201);
    expect(done).toMatchObject({
      state: "available",
      bytes: FILE.length,
      total_bytes: FILE.length,
      sha256: sha256(FILE),
    });
    const download = await h.call("GET", `/v1/media/${media.id}/download`);
    expect(sha256(download.rawPayload)).toBe(sha256(FILE));
  });

  it("refuses a last chunk that makes the sum differ from the declared size; the media stays incomplete", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length });
    expectJson(await putChunk(media.id, 2, chunkOf(FILE, 2)), 201);
    const short = await putChunk(media.id, 3, chunkOf(FILE, 3).subarray(0, 400));
    expect(expectJson(short, 422)).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: `The file was declared at ${FILE.length} bytes, but with this chunk its chunks add up to ${2 * CHUNK + 400} bytes. The chunk was not stored; the upload stays incomplete.`,
    });
    expect(await mediaOf(media.id)).toMatchObject({
      state: "uploading",
      current_chunk: 2,
      bytes: 2 * CHUNK,
      sha256: null,
    });
    expect((await h.call("GET", `/v1/media/${media.id}/download`)).statusCode).toBe(409);
  });

  it("keeps what it holds when a chunk is refused: the right chunk then completes the file", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length });
    expectJson(await putChunk(media.id, 2, chunkOf(FILE, 2)), 201);
    // A new copy of chunk 2 that would take the sum past the declared size replaces nothing.
    const tooLong = await putChunk(media.id, 2, bytesOf(CHUNK + 600, "other"));
    expect(expectJson(tooLong, 422).detail).toBe(
      `The file was declared at ${FILE.length} bytes, but with this chunk its chunks add up to ${2 * CHUNK + 600} bytes. The chunk was not stored; the upload stays incomplete.`,
    );
    expect(await mediaOf(media.id)).toMatchObject({ state: "uploading", current_chunk: 2, bytes: 2 * CHUNK });
    const done = expectJson(await putChunk(media.id, 3, chunkOf(FILE, 3)), 201);
    expect(done).toMatchObject({ state: "available", sha256: sha256(FILE) });
  });

  it("refuses a chunk that takes the sum past the declared size before the last one", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length });
    const res = await putChunk(media.id, 3, bytesOf(2 * CHUNK, "longer"));
    expect(expectJson(res, 422).code).toBe("UNPROCESSABLE_ENTITY");
    expect(await mediaOf(media.id)).toMatchObject({ state: "uploading", current_chunk: 1, bytes: CHUNK });
  });

  it("refuses a whole file whose size differs from total_bytes, and creates no media", async () => {
    const request = (await buildPushRequest(h.t, h.owner)).id as number;
    for (const data of [bytesOf(120), bytesOf(80)]) {
      const res = await send("POST", "/v1/media/", { request, name: "a.bin", total_bytes: 100 }, data);
      expect(expectJson(res, 422).code).toBe("UNPROCESSABLE_ENTITY");
    }
    const list = expectJson(await h.call("GET", `/v1/media/?request=${request}`), 200);
    expect(list.count).toBe(0);
    const exact = await send(
      "POST",
      "/v1/media/",
      { request, name: "a.bin", total_bytes: 100 },
      bytesOf(100),
    );
    expect(expectJson(exact, 201)).toMatchObject({ state: "available", total_bytes: 100, bytes: 100 });
  });

  it("refuses a total_bytes that is not a byte count (400), over MAX_FILE_BYTES (413) or beyond its chunks (400)", async () => {
    const request = (await buildPushRequest(h.t, h.owner)).id as number;
    const fields = { request, name: "a.bin", total_chunks: 3, current_chunk: 1 };
    const bad = await send("POST", "/v1/media/", { ...fields, total_bytes: "12kB" }, bytesOf(CHUNK));
    expect(expectJson(bad, 400)).toEqual({ total_bytes: ["A valid integer is required."] });
    const huge = await send("POST", "/v1/media/", { ...fields, total_bytes: MAX_FILE + 1 }, bytesOf(CHUNK));
    expect(expectJson(huge, 413)).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      detail: `The file is larger than the maximum of ${MAX_FILE} bytes.`,
    });
    const unfit = await send(
      "POST",
      "/v1/media/",
      { ...fields, total_bytes: 3 * 4 * CHUNK + 1 },
      bytesOf(CHUNK),
    );
    expect(expectJson(unfit, 400)).toEqual({
      total_bytes: [`${3 * 4 * CHUNK + 1} bytes do not fit in 3 chunks of at most ${4 * CHUNK} bytes.`],
    });
    const list = expectJson(await h.call("GET", `/v1/media/?request=${request}`), 200);
    expect(list.count).toBe(0);
  });

  it("keeps uploads without total_bytes as they were: any sum completes, total_bytes is null", async () => {
    const { media } = await startUpload({});
    expect(media).toMatchObject({ total_bytes: null, fingerprint: null });
    const other = bytesOf(300, "tail");
    expectJson(await putChunk(media.id, 2, chunkOf(FILE, 2)), 201);
    const done = expectJson(await putChunk(media.id, 3, other), 201);
    const whole = Buffer.concat([chunkOf(FILE, 1), chunkOf(FILE, 2), other]);
    expect(done).toMatchObject({ state: "available", bytes: whole.length, sha256: sha256(whole) });
  });
});

describe("resuming an upload with its fingerprint", () => {
  it("records the fingerprint given with the first chunk and shows it with the media", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length, fingerprint: FINGERPRINT });
    expect(media.fingerprint).toBe(FINGERPRINT);
    expect((await mediaOf(media.id)).fingerprint).toBe(FINGERPRINT);
  });

  it("refuses a chunk whose fingerprint differs from the upload's (409) and stores nothing", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length, fingerprint: FINGERPRINT });
    const res = await putChunk(media.id, 2, chunkOf(FILE, 2), { fingerprint: "another-file-0001" });
    expect(expectJson(res, 409)).toEqual({
      code: "CONFLICT",
      detail:
        "This upload is of another file: its fingerprint differs. Start a new upload for this file; nothing was stored.",
    });
    expect(await mediaOf(media.id)).toMatchObject({ state: "uploading", current_chunk: 1, bytes: CHUNK });
  });

  it("refuses a fingerprint on a chunk of an upload that was started without one (409)", async () => {
    const { media } = await startUpload({});
    const res = await putChunk(media.id, 2, chunkOf(FILE, 2), { fingerprint: FINGERPRINT });
    expect(expectJson(res, 409).code).toBe("CONFLICT");
    expect((await mediaOf(media.id)).current_chunk).toBe(1);
  });

  it("refuses a fingerprint sent after the file part too, once the body is read", async () => {
    const { media } = await startUpload({ fingerprint: FINGERPRINT });
    const body = multipart(
      { current_chunk: 2, fingerprint: "another-file-0002" },
      { data: chunkOf(FILE, 2) },
      { fileFirst: true },
    );
    const res = await h.call("PUT", `/v1/media/${media.id}`, body.payload, {
      contentType: body.headers["content-type"]!,
    });
    expect(expectJson(res, 409).code).toBe("CONFLICT");
    expect((await mediaOf(media.id)).current_chunk).toBe(1);
  });

  it("completes an upload whose every chunk repeats its fingerprint", async () => {
    const { media } = await startUpload({ total_bytes: FILE.length, fingerprint: FINGERPRINT });
    expectJson(await putChunk(media.id, 2, chunkOf(FILE, 2), { fingerprint: FINGERPRINT }), 201);
    const done = expectJson(await putChunk(media.id, 3, chunkOf(FILE, 3), { fingerprint: FINGERPRINT }), 201);
    expect(done).toMatchObject({ state: "available", sha256: sha256(FILE), fingerprint: FINGERPRINT });
  });

  it("refuses a malformed fingerprint with 400", async () => {
    const request = (await buildPushRequest(h.t, h.owner)).id as number;
    const res = await send(
      "POST",
      "/v1/media/",
      { request, name: "a.bin", fingerprint: "has spaces in it" },
      bytesOf(10),
    );
    expect(expectJson(res, 400)).toEqual({
      fingerprint: ["Enter 1 to 128 printable ASCII characters without spaces."],
    });
  });
});

describe("the OpenAPI document", () => {
  it("describes total_bytes and fingerprint on the upload bodies and the Media object", async () => {
    const doc = expectJson(await h.call("GET", "/v1/openapi.json"), 200);
    const create = deref(doc, doc.paths["/v1/media/"].post.requestBody.content["multipart/form-data"].schema)
      .properties as Record<string, { description: string }>;
    const chunk = deref(
      doc,
      doc.paths["/v1/media/{id}/"].put.requestBody.content["multipart/form-data"].schema,
    ).properties as Record<string, { description: string }>;
    const media = deref(
      doc,
      doc.paths["/v1/media/{id}/"].get.responses["200"].content["application/json"].schema,
    ).properties as Record<string, { description: string }>;
    expect(create.total_bytes).toMatchObject({
      type: "integer",
      description: expect.stringContaining("bytes"),
    });
    expect(create.fingerprint).toMatchObject({ type: "string", description: expect.stringContaining("409") });
    expect(chunk.fingerprint).toMatchObject({ type: "string", description: expect.stringContaining("409") });
    expect(media.total_bytes?.description).toContain("declared");
    expect(media.fingerprint?.description).toContain("fingerprint");
  });
});
