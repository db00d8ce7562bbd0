import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart } from "../../../test/helpers/media.js";

let t: TestApp;
let owner: TestAccount;
let draft: number;

beforeAll(async () => {
  t = await createTestApp({
    MAX_FILE_BYTES: "100000",
    MAX_CHUNK_BYTES: "40000",
    ACCOUNT_STORAGE_QUOTA_BYTES: "150000",
  });
  owner = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
});
afterAll(async () => t?.close());

async function send(
  method: "POST" | "PUT",
  url: string,
  fields: Record<string, string | number>,
  size: number,
  who: TestAccount = owner,
) {
  const body = multipart(fields, { data: bytesOf(size, `${url}-${size}`), filename: "l.bin" });
  return t.app.inject({ method, url, headers: { ...who.headers, ...body.headers }, payload: body.payload });
}

describe("size limits and the storage quota", () => {
  it("refuses a whole file over MAX_FILE_BYTES with 413", async () => {
    const whole = await send("POST", "/v1/media/", { request: draft, name: "big.bin" }, 100_001);
    expect(whole.statusCode).toBe(413);
    expect(whole.json()).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      detail: "The file is larger than the maximum of 100000 bytes.",
    });
  });

  it("refuses the chunk that takes a file over MAX_FILE_BYTES, keeping the chunks before it", async () => {
    const first = await send(
      "POST",
      "/v1/media/",
      { request: draft, name: "c.bin", total_chunks: 3, current_chunk: 1 },
      40_000,
    );
    expect(first.statusCode).toBe(201);
    const id = first.json().id;
    expect((await send("PUT", `/v1/media/${id}`, { current_chunk: 2 }, 40_000)).statusCode).toBe(201);
    const third = await send("PUT", `/v1/media/${id}`, { current_chunk: 3 }, 30_000);
    expect(third.statusCode).toBe(413);
    expect(
      (await t.app.inject({ method: "GET", url: `/v1/media/${id}/`, headers: owner.headers })).json(),
    ).toMatchObject({
      state: "uploading",
      current_chunk: 2,
      bytes: 80_000,
    });
    await t.app.inject({ method: "DELETE", url: `/v1/media/${id}/`, headers: owner.headers });
  });

  it("refuses a file that would take the account past its quota with 422", async () => {
    expect((await send("POST", "/v1/media/", { request: draft, name: "a.bin" }, 90_000)).statusCode).toBe(
      201,
    );
    const over = await send("POST", "/v1/media/", { request: draft, name: "b.bin" }, 70_000);
    expect(over.statusCode).toBe(422);
    expect(over.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail:
        "The account's storage quota of 150000 bytes would be exceeded. Delete files or ask the operator for more space.",
    });
  });

  it("takes files up to the quota exactly, then refuses even one byte with 422", async () => {
    const other = await createTestAccount(t);
    const request = await createRequest(t, other, { type: "push", is_draft: true });
    const upload = (name: string, size: number) => send("POST", "/v1/media/", { request, name }, size, other);
    expect((await upload("a.bin", 90_000)).statusCode).toBe(201);
    expect((await upload("c.bin", 60_000)).statusCode).toBe(201);
    const full = await upload("d.bin", 1);
    expect(full.statusCode).toBe(422);
  });
});
