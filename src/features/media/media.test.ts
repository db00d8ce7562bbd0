import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart, sha256, urlencoded } from "../../../test/helpers/media.js";
import { eventually } from "../../../test/helpers/process.js";

const MiB = 1024 * 1024;
const md5 = (data: Buffer) => createHash("md5").update(data).digest("hex");

let t: TestApp;
let owner: TestAccount;
let other: TestAccount;
let draft: number;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
  other = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
});
afterAll(async () => t?.close());

async function upload(
  fields: Record<string, string | number>,
  data: Buffer,
  opts: { fileFirst?: boolean; who?: TestAccount } = {},
) {
  const body = multipart(fields, { data, filename: String(fields.name ?? "x.bin") }, opts);
  return t.app.inject({
    method: "POST",
    url: "/v1/media/",
    headers: { ...(opts.who ?? owner).headers, ...body.headers },
    payload: body.payload,
  });
}

async function putChunk(
  id: number,
  chunk: number,
  data: Buffer,
  who: TestAccount = owner,
  path = `/v1/media/${id}`,
) {
  const body = multipart({ current_chunk: chunk }, { data });
  return t.app.inject({
    method: "PUT",
    url: path,
    headers: { ...who.headers, ...body.headers },
    payload: body.payload,
  });
}

async function download(id: number, headers: Record<string, string> = {}, who: TestAccount = owner) {
  return t.app.inject({
    method: "GET",
    url: `/v1/media/${id}/download`,
    headers: { ...who.headers, ...headers },
  });
}

/** Uploads `data` in chunks of `chunkBytes`: the first by POST, the rest by PUT in `order` (1-based), then `resend`. */
async function uploadChunked(data: Buffer, chunkBytes: number, order?: number[], resend: number[] = []) {
  const total = Math.max(1, Math.ceil(data.length / chunkBytes));
  const chunk = (n: number) => data.subarray((n - 1) * chunkBytes, n * chunkBytes);
  const sequence = order ?? Array.from({ length: total }, (_, i) => i + 1);
  const first = sequence[0]!;
  const created = await upload(
    {
      request: draft,
      name: "chunked.bin",
      content_type: "application/octet-stream",
      total_chunks: total,
      current_chunk: first,
    },
    chunk(first),
  );
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as number;
  for (const n of [...sequence.slice(1), ...resend]) {
    const res = await putChunk(id, n, chunk(n));
    expect(res.statusCode, res.body).toBe(201);
  }
  return id;
}

describe("POST /v1/media/ (whole files)", () => {
  it("stores a file and answers the full Media object", async () => {
    const data = Buffer.from("hello, ferry\n");
    const res = await upload({ request: draft, name: "hello.txt", content_type: "text/plain" }, data);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: body.id,
      request: draft,
      feature: null,
      recipient: null,
      name: "hello.txt",
      content_type: "text/plain",
      bytes: data.length,
      extension: "txt",
      total_chunks: 1,
      current_chunk: 1,
      total_bytes: null,
      fingerprint: null,
      file_checksum: md5(data),
      sha256: sha256(data),
      state: "available",
      times_downloaded: 0,
      max_allowed_times_downloaded: null,
      removed_at: null,
      created: "2026-01-15T10:00:00.000000Z",
      updated: "2026-01-15T10:00:00.000000Z",
    });
  });

  it("answers GET /v1/media/{id}/ with the object the upload answered and the chunks it holds", async () => {
    const res = await upload({ request: draft, name: "again.txt", content_type: "text/plain" }, bytesOf(9));
    const info = await t.app.inject({
      method: "GET",
      url: `/v1/media/${res.json().id}/`,
      headers: owner.headers,
    });
    expect(info.json()).toEqual({ ...res.json(), received_chunks: [1] });
  });

  it("lists the chunks an unfinished upload holds, so that a client resumes with the others", async () => {
    const first = await upload(
      { request: draft, name: "parts.bin", total_chunks: 4, current_chunk: 2 },
      bytesOf(10, "p2"),
    );
    expect(first.statusCode, first.body).toBe(201);
    const id = first.json().id;
    const put4 = await putChunk(id, 4, bytesOf(5, "p4"));
    expect(put4.statusCode, put4.body).toBe(201);
    const info = await t.app.inject({ method: "GET", url: `/v1/media/${id}/`, headers: owner.headers });
    expect(info.json()).toMatchObject({ state: "uploading", current_chunk: 2, received_chunks: [2, 4] });
  });

  it.each([0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1])(
    "round-trips %i bytes whole (multipart, file first too)",
    async (size) => {
      const data = bytesOf(size, `whole-${size}`);
      for (const fileFirst of [false, true]) {
        const res = await upload(
          { request: draft, name: "f.bin", content_type: "application/octet-stream" },
          data,
          { fileFirst },
        );
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json()).toMatchObject({ bytes: size, state: "available", sha256: sha256(data) });
        const got = await download(res.json().id, { accept: "application/json" });
        expect(got.statusCode).toBe(200);
        expect(got.headers["content-length"]).toBe(String(size));
        expect(got.headers.etag).toBe(`"${sha256(data)}"`);
        expect(got.rawPayload.equals(data)).toBe(true);
      }
    },
  );

  it.each([0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1])(
    "round-trips %i bytes as form-urlencoded raw bytes",
    async (size) => {
      const data = bytesOf(size, `form-${size}`);
      const body = urlencoded(
        { request: String(draft), name: "form.bin", content_type: "application/octet-stream" },
        data,
      );
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/media/",
        headers: { ...owner.headers, ...body.headers },
        payload: body.payload,
      });
      expect(res.statusCode, res.body).toBe(201);
      const got = await download(res.json().id);
      expect(got.rawPayload.equals(data)).toBe(true);
    },
  );

  it("round-trips 50 MB whole", async () => {
    const data = bytesOf(50 * 1000 * 1000, "fifty");
    const whole = await upload(
      { request: draft, name: "big.bin", content_type: "application/octet-stream" },
      data,
    );
    expect(whole.statusCode, whole.body).toBe(201);
    expect(whole.json().file_checksum).toBe(md5(data));
    const wholeGot = await download(whole.json().id);
    expect(sha256(wholeGot.rawPayload)).toBe(sha256(data));
  });

  it("round-trips 50 MB in 4 MiB chunks sent out of order and re-sent", async () => {
    const data = bytesOf(50 * 1000 * 1000, "fifty");
    const total = Math.ceil(data.length / (4 * MiB));
    const order = [
      3,
      1,
      ...Array.from({ length: total }, (_, i) => i + 1)
        .filter((n) => n !== 3 && n !== 1)
        .reverse(),
    ];
    const id = await uploadChunked(data, 4 * MiB, order, [2, total]);
    const info = (
      await t.app.inject({ method: "GET", url: `/v1/media/${id}/`, headers: owner.headers })
    ).json();
    expect(info).toMatchObject({
      state: "available",
      total_chunks: total,
      current_chunk: total,
      bytes: data.length,
      sha256: sha256(data),
    });
    expect(info.file_checksum).toBe(md5(data));
    const got = await download(id);
    expect(got.headers["content-length"]).toBe(String(data.length));
    expect(sha256(got.rawPayload)).toBe(sha256(data));
  });

  it.each([0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1])(
    "round-trips %i bytes chunked in order",
    async (size) => {
      const data = bytesOf(size, `chunks-${size}`);
      const inOrder = await uploadChunked(data, 20_000);
      expect((await download(inOrder)).rawPayload.equals(data)).toBe(true);
    },
  );

  it.each([0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1])(
    "round-trips %i bytes chunked in reverse order with the first chunk re-sent",
    async (size) => {
      const data = bytesOf(size, `chunks-${size}`);
      const total = Math.max(1, Math.ceil(size / 20_000));
      const reversed = await uploadChunked(
        data,
        20_000,
        Array.from({ length: total }, (_, i) => total - i),
        [1],
      );
      const info = (
        await t.app.inject({ method: "GET", url: `/v1/media/${reversed}/`, headers: owner.headers })
      ).json();
      expect(info).toMatchObject({ state: "available", sha256: sha256(data), bytes: size });
      expect((await download(reversed)).rawPayload.equals(data)).toBe(true);
    },
  );

  /** Chunk 2 of 3 sent by POST: an incomplete upload. */
  const uploadChunkTwoOfThree = () =>
    upload({ request: draft, name: "part.bin", total_chunks: 3, current_chunk: 2 }, bytesOf(10));

  it("shows an incomplete upload as uploading with its received chunk count", async () => {
    const created = await uploadChunkTwoOfThree();
    expect(created.json()).toMatchObject({
      state: "uploading",
      total_chunks: 3,
      current_chunk: 1,
      sha256: null,
      file_checksum: null,
    });
  });

  it("replaces a chunk sent again: the count stays, the bytes are the new copy's", async () => {
    const created = await uploadChunkTwoOfThree();
    const again = await putChunk(created.json().id, 2, bytesOf(12));
    expect(again.json()).toMatchObject({ state: "uploading", current_chunk: 1, bytes: 12 });
  });

  it("refuses to download an incomplete upload with 409", async () => {
    const created = await uploadChunkTwoOfThree();
    const res = await download(created.json().id);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: "CONFLICT",
      detail: "The file is still uploading: 1 of 3 chunks received.",
    });
  });

  const uploadUnsafeName = () =>
    upload(
      { request: draft, name: "../../etc/\u0007pass\u202ewd.TXT", content_type: "text/plain" },
      bytesOf(3),
    );

  it("removes path segments and control characters from file names", async () => {
    const res = await uploadUnsafeName();
    expect(res.json()).toMatchObject({ name: "passwd.TXT", extension: "txt" });
  });

  it("cuts long file names to 255 characters, keeping the extension", async () => {
    const long = await upload(
      { request: draft, name: `${"a".repeat(400)}.pdf`, content_type: "application/pdf" },
      bytesOf(3),
    );
    expect(long.json().name).toHaveLength(255);
    expect(long.json().name.endsWith(".pdf")).toBe(true);
  });

  it("downloads under the sanitised name, with nosniff", async () => {
    const res = await uploadUnsafeName();
    const got = await download(res.json().id);
    expect(got.headers["content-disposition"]).toBe(
      `attachment; filename="passwd.TXT"; filename*=UTF-8''passwd.TXT`,
    );
    expect(got.headers["x-content-type-options"]).toBe("nosniff");
  });
});

describe("downloads", () => {
  const data = bytesOf(300_000, "ranges");
  let id: number;
  beforeAll(async () => {
    id = await uploadChunked(data, 100_000, [2, 1, 3]);
  });

  it("serves single byte ranges across parts with 206", async () => {
    for (const [header, start, end] of [
      ["bytes=0-0", 0, 0],
      ["bytes=65530-65550", 65530, 65550],
      ["bytes=99990-200010", 99990, 200010],
      ["bytes=-10", 299_990, 299_999],
      ["bytes=250000-", 250_000, 299_999],
    ] as const) {
      const res = await download(id, { range: header });
      expect(res.statusCode, header).toBe(206);
      expect(res.headers["content-range"]).toBe(`bytes ${start}-${end}/300000`);
      expect(res.rawPayload.equals(data.subarray(start, end + 1)), header).toBe(true);
    }
  });

  it("answers 416 to a range outside the file", async () => {
    const outside = await download(id, { range: "bytes=300000-" });
    expect(outside.statusCode).toBe(416);
    expect(outside.headers["content-range"]).toBe("bytes */300000");
  });

  it("sends the whole file when If-Range names another version", async () => {
    const stale = await download(id, { range: "bytes=0-9", "if-range": '"not-the-etag"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.equals(data)).toBe(true);
  });
});

describe("bad input", () => {
  it("answers 400 to a body without a file", async () => {
    const body = multipart({}, undefined);
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...body.headers },
      payload: body.payload,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ file: ["No file was submitted."] });
  });

  it("lists every missing field at once", async () => {
    const partial = multipart({ content_type: "text/plain" }, { data: bytesOf(3), filename: "" });
    const noRequest = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...partial.headers },
      payload: partial.payload,
    });
    expect(noRequest.statusCode).toBe(400);
    expect(noRequest.json()).toEqual({
      request: ["This field is required."],
      name: ["This field is required."],
    });
  });

  /** A chunked media (2 chunks) with its first chunk stored. */
  const firstOfTwo = () =>
    upload({ request: draft, name: "c.bin", total_chunks: 2, current_chunk: 1 }, bytesOf(10));

  it("refuses a chunk over 4 MiB with 413 and a clear message", async () => {
    const created = await firstOfTwo();
    const res = await putChunk(created.json().id, 2, bytesOf(4 * MiB + 1));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      detail: "The chunk is larger than the maximum of 4194304 bytes (4 MiB). Send chunks of at most 4 MiB.",
    });
  });

  it("refuses a first chunk over 4 MiB sent by POST with 413", async () => {
    const first = await upload(
      { request: draft, name: "c.bin", total_chunks: 2, current_chunk: 1 },
      bytesOf(4 * MiB + 1),
    );
    expect(first.statusCode).toBe(413);
  });

  it("refuses a first chunk over 4 MiB with 413 when its chunk fields come after the file", async () => {
    const late = await upload(
      { request: draft, name: "c.bin", total_chunks: 2, current_chunk: 1 },
      bytesOf(4 * MiB + 1),
      { fileFirst: true },
    );
    expect(late.statusCode).toBe(413);
  });

  it("refuses a form-urlencoded chunk over 4 MiB with 413", async () => {
    const created = await firstOfTwo();
    const form = urlencoded({ current_chunk: 2 }, bytesOf(4 * MiB + 1));
    const formRes = await t.app.inject({
      method: "PUT",
      url: `/v1/media/${created.json().id}/`,
      headers: { ...owner.headers, ...form.headers },
      payload: form.payload,
    });
    expect(formRes.statusCode).toBe(413);
  });

  it("refuses chunk number 0 with 400", async () => {
    const zero = await upload(
      { request: draft, name: "c.bin", total_chunks: 2, current_chunk: 0 },
      bytesOf(3),
    );
    expect(zero.statusCode).toBe(400);
    expect(zero.json()).toEqual({ current_chunk: ["Ensure this value is between 1 and total_chunks (2)."] });
  });

  it("refuses a chunk number past total_chunks with 400", async () => {
    const created = await firstOfTwo();
    const past = await putChunk(created.json().id, 3, bytesOf(3));
    expect(past.statusCode).toBe(400);
    expect(past.json()).toEqual({ current_chunk: ["Ensure this value is between 1 and total_chunks (2)."] });
  });

  it("requires current_chunk on PUT", async () => {
    const created = await firstOfTwo();
    const body = multipart({}, { data: bytesOf(3) });
    const missing = await t.app.inject({
      method: "PUT",
      url: `/v1/media/${created.json().id}`,
      headers: { ...owner.headers, ...body.headers },
      payload: body.payload,
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ current_chunk: ["This field is required."] });
  });

  it("answers 400 to multipart without a boundary", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, "content-type": "multipart/form-data" },
      payload: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: "INVALID_REQUEST",
      detail: "Malformed multipart body (missing or wrong boundary).",
    });
  });

  it("answers 415 to a JSON body", async () => {
    const json = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: owner.headers,
      payload: { request: draft },
    });
    expect(json.statusCode).toBe(415);
  });

  it("answers 404 for a request that does not exist", async () => {
    expect((await upload({ request: 999999, name: "a.txt" }, bytesOf(1))).statusCode).toBe(404);
  });

  it("answers 404 for another account's request", async () => {
    const foreign = await createRequest(t, other, { type: "push", is_draft: true });
    expect((await upload({ request: foreign, name: "a.txt" }, bytesOf(1))).json()).toEqual({
      code: "RESOURCE_NOT_FOUND",
      detail: "Request not found.",
    });
  });

  it("answers 422 for a pull request", async () => {
    const pull = await createRequest(t, owner, { type: "pull" });
    const pullRes = await upload({ request: pull, name: "a.txt" }, bytesOf(1));
    expect(pullRes.statusCode).toBe(422);
  });

  it("answers 422 for a sent push request named after the file part", async () => {
    const sent = await createRequest(t, owner, { type: "push", is_draft: false });
    const sentRes = await upload({ request: sent, name: "a.txt" }, bytesOf(1), { fileFirst: true });
    expect(sentRes.statusCode).toBe(422);
    expect(sentRes.json().detail).toBe("The request was already sent: attach files while it is a draft.");
  });

  it("answers 404 for another account's media on every route", async () => {
    const mine = (await upload({ request: draft, name: "mine.txt" }, bytesOf(5))).json().id as number;
    for (const [method, url] of [
      ["GET", `/v1/media/${mine}/`],
      ["GET", `/v1/media/${mine}/download`],
      ["DELETE", `/v1/media/${mine}/`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: other.headers });
      expect(res.statusCode, url).toBe(404);
    }
    expect((await putChunk(mine, 1, bytesOf(5), other)).statusCode).toBe(404);
    expect((await download(mine)).statusCode).toBe(200);
  });
});

describe("listing, deleting and the audit log", () => {
  // Two media of one request: the list is read, then `a` is deleted and `b` downloaded.
  let req: number;
  let a: { id: number };
  let b: { id: number };
  let aBlob: { store: string; key: string };
  let list: Awaited<ReturnType<typeof download>>;
  let deleted: Awaited<ReturnType<typeof download>>;
  let downloaded: Awaited<ReturnType<typeof download>>;
  beforeAll(async () => {
    req = await createRequest(t, owner, { type: "push", is_draft: true });
    a = (await upload({ request: req, name: "a.txt" }, bytesOf(5))).json();
    b = (await upload({ request: req, name: "b.txt" }, bytesOf(6))).json();
    const part = await t.ferry.database.db
      .selectFrom("media_parts")
      .select(["blob_store", "blob_key"])
      .where("media_id", "=", a.id)
      .executeTakeFirstOrThrow();
    aBlob = { store: part.blob_store, key: part.blob_key };
    list = await t.app.inject({
      method: "GET",
      url: `/v1/media/?request=${req}&page_size=1`,
      headers: owner.headers,
    });
    deleted = await t.app.inject({ method: "DELETE", url: `/v1/media/${a.id}/`, headers: owner.headers });
    downloaded = await download(b.id);
  });

  it("lists a request's media with ?request=, newest first, page by page", () => {
    expect(list.json()).toEqual({
      links: { previous: null, next: `http://ferry.test/v1/media/?request=${req}&page=2&page_size=1` },
      total_pages: 2,
      count: 2,
      page_size: 1,
      results: [b],
    });
  });

  it("deletes with 204", () => {
    expect(deleted.statusCode).toBe(204);
  });

  it("answers 404 for a deleted media", async () => {
    expect(
      (await t.app.inject({ method: "GET", url: `/v1/media/${a.id}/`, headers: owner.headers })).statusCode,
    ).toBe(404);
  });

  it("queues the deleted media's blobs for deletion", async () => {
    const jobs = await t.ferry.database.db
      .selectFrom("jobs")
      .select("payload")
      .where("kind", "=", "blobs.delete")
      .execute();
    expect(jobs.some((j) => JSON.parse(j.payload).blobs.length === 1)).toBe(true);
    expect(jobs.map((j) => JSON.parse(j.payload).blobs)).toContainEqual([aBlob]);
  });

  it("leaves the request's other media downloadable", () => {
    expect(downloaded.statusCode).toBe(200);
  });

  it("writes an audit entry for each upload, the delete and the download", async () => {
    const mediaAudit = () =>
      t.ferry.database.db
        .selectFrom("audit_entries")
        .select(["code", "relation_key"])
        .where("related_model", "=", "media")
        .where("relation_key", "in", [String(a.id), String(b.id)])
        .execute();
    // ABB-0010 is written once the response has ended.
    await eventually(async () => (await mediaAudit()).length === 4);
    const codes = await mediaAudit();
    expect(codes.map((c) => `${c.code}:${c.relation_key}`).sort()).toEqual(
      [`ABA-0010:${a.id}`, `ABA-0010:${b.id}`, `ABA-0020:${a.id}`, `ABB-0010:${b.id}`].sort(),
    );
  });
});

describe("the blobs.delete job", () => {
  /** A stored file whose blob the job deleted. */
  async function uploadAndDeleteBlob() {
    const res = await upload({ request: draft, name: "gone.txt" }, bytesOf(5));
    const part = await t.ferry.database.db
      .selectFrom("media_parts")
      .selectAll()
      .where("media_id", "=", res.json().id)
      .executeTakeFirstOrThrow();
    expect(await t.ferry.blobStore.exists(part.blob_key)).toBe(true);
    await t.ferry.media.storage.deleteBlobs([{ store: part.blob_store, key: part.blob_key }]);
    return { id: res.json().id as number, key: part.blob_key };
  }

  it("deletes the blobs it names", async () => {
    const { key } = await uploadAndDeleteBlob();
    expect(await t.ferry.blobStore.exists(key)).toBe(false);
  });

  it("leaves a media whose blob is gone answering 500 before any byte", async () => {
    const { id } = await uploadAndDeleteBlob();
    const broken = await download(id);
    expect(broken.statusCode).toBe(500);
    expect(broken.json()).toEqual({
      code: "INTERNAL_SERVER_ERROR",
      detail: "The stored file could not be read; nothing was sent.",
    });
  });
});
