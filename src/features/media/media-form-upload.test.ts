import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart, sha256, urlencoded } from "../../../test/helpers/media.js";

const MiB = 1024 * 1024;
const MAX_FILE = 6 * MiB;

let t: TestApp;
let owner: TestAccount;
let draft: number;

beforeAll(async () => {
  t = await createTestApp({ MAX_FILE_BYTES: String(MAX_FILE) });
  owner = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
});
afterAll(async () => t?.close());

/** POST /v1/media/ with a form-urlencoded body, sent as one piece or as a stream of `pieceBytes` pieces. */
function postForm(payload: string, pieceBytes?: number) {
  const bytes = Buffer.from(payload, "latin1");
  const pieces: Buffer[] = [];
  if (pieceBytes)
    for (let i = 0; i < bytes.length; i += pieceBytes) pieces.push(bytes.subarray(i, i + pieceBytes));
  return t.app.inject({
    method: "POST",
    url: "/v1/media/",
    headers: { ...owner.headers, "content-type": "application/x-www-form-urlencoded" },
    payload: pieceBytes ? Readable.from(pieces) : bytes,
  });
}

async function downloaded(id: number): Promise<Buffer> {
  const got = await t.app.inject({ method: "GET", url: `/v1/media/${id}/download`, headers: owner.headers });
  expect(got.statusCode).toBe(200);
  return got.rawPayload;
}

describe("whole files sent form-urlencoded (the spec's encoding for media create)", () => {
  it("streams a file over 4 MiB to the same limit as multipart, fields before or after it", async () => {
    const data = bytesOf(5 * MiB, "form-five");
    const before = urlencoded(
      { request: draft, name: "five.bin", content_type: "application/octet-stream" },
      data,
    );
    const first = await postForm(before.payload);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({
      name: "five.bin",
      bytes: data.length,
      state: "available",
      sha256: sha256(data),
    });
    expect(sha256(await downloaded(first.json().id))).toBe(sha256(data));

    const fileFirst = `${urlencoded({}, data).payload}&request=${draft}&name=after.bin`;
    const second = await postForm(fileFirst, 64 * 1024 + 1);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ name: "after.bin", bytes: data.length, sha256: sha256(data) });
  });

  it("decodes plain characters, + and escapes cut between pieces of the body", async () => {
    const text = "Hello, world: 100% sure & done. Ünïcode ✓\n".repeat(500);
    const payload = new URLSearchParams({ request: String(draft), name: "note.txt", file: text }).toString();
    for (const piece of [1, 2, 7, 1001]) {
      const res = await postForm(payload, piece);
      expect(res.statusCode, res.body).toBe(201);
      expect((await downloaded(res.json().id)).toString("utf8")).toBe(text);
    }
  });

  it("refuses a file over MAX_FILE_BYTES with 413, as multipart does, and stores nothing", async () => {
    const countBefore = (
      await t.app.inject({ method: "GET", url: `/v1/media/?request=${draft}`, headers: owner.headers })
    ).json().count;
    const data = bytesOf(MAX_FILE + 1, "form-over");
    const form = await postForm(urlencoded({ request: draft, name: "over.bin" }, data).payload, 256 * 1024);
    expect(form.statusCode).toBe(413);
    const parts = multipart({ request: draft, name: "over.bin" }, { data, filename: "over.bin" });
    const multi = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...parts.headers },
      payload: parts.payload,
    });
    expect(multi.statusCode).toBe(413);
    expect(form.json()).toEqual(multi.json());
    expect(form.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    const countAfter = (
      await t.app.inject({ method: "GET", url: `/v1/media/?request=${draft}`, headers: owner.headers })
    ).json().count;
    expect(countAfter).toBe(countBefore);
  });

  it("keeps a form-urlencoded chunk (PUT) to MAX_CHUNK_BYTES: 413 past it", async () => {
    const created = await postForm(
      urlencoded({ request: draft, name: "c.bin", total_chunks: 2, current_chunk: 1 }, bytesOf(4 * MiB))
        .payload,
    );
    expect(created.statusCode, created.body).toBe(201);
    const chunk = urlencoded({ current_chunk: 2 }, bytesOf(4 * MiB + 1));
    const res = await t.app.inject({
      method: "PUT",
      url: `/v1/media/${created.json().id}/`,
      headers: { ...owner.headers, ...chunk.headers },
      payload: chunk.payload,
    });
    expect(res.statusCode).toBe(413);
  });
});
