/**
 * An S3 server that is down or frozen: uploads and downloads answer 503 with Retry-After in the
 * spec's error shape (never 500), each S3 call gives up after S3_TIMEOUT_MS without progress, and
 * an upload that was answered 503 is not kept as complete: re-sent once S3 is back, it completes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { type FreezingProxy, startFreezingProxy } from "../../../test/helpers/freezing-proxy.js";
import { bytesOf, createRequest, multipart, sha256 } from "../../../test/helpers/media.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "../../../test/helpers/s3-server.js";

let s3: TestS3Server;
let proxy: FreezingProxy;
let t: TestApp;
let owner: TestAccount;
let draft: number;

beforeAll(async () => {
  s3 = await startS3Server();
  proxy = await startFreezingProxy(Number(new URL(s3.endpoint).port));
  t = await createTestApp({ ...ferryS3Env(s3, proxy.url), S3_TIMEOUT_MS: "2000" });
  owner = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
});
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await s3?.stop();
});

function send(method: "POST" | "PUT", url: string, fields: Record<string, string | number>, data: Buffer) {
  const body = multipart(fields, { data, filename: "outage.bin" });
  return t.app.inject({ method, url, headers: { ...owner.headers, ...body.headers }, payload: body.payload });
}

const UNAVAILABLE = {
  code: "SERVICE_UNAVAILABLE",
  detail: "The file storage is not reachable right now; nothing was stored or sent. Try again shortly.",
};

function expectUnavailable(res: Awaited<ReturnType<typeof send>>) {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.headers["retry-after"]).toBe("5");
  expect(res.json()).toEqual(UNAVAILABLE);
}

const mediaOfDraft = async () =>
  (
    await t.ferry.database.db
      .selectFrom("media")
      .select(["id", "state"])
      .where("request_id", "=", draft)
      .execute()
  ).map((m) => m.state);

describe.each([
  ["down", () => proxy.down()],
  ["frozen", () => proxy.freeze()],
])("with the S3 server %s", (_name, fail) => {
  const data = bytesOf(300 * 1024, "outage");

  it("answers 503 to a whole-file upload and keeps no file", async () => {
    const before = await mediaOfDraft();
    fail();
    try {
      expectUnavailable(await send("POST", "/v1/media/", { request: draft, name: "w.bin" }, data));
    } finally {
      proxy.normal();
    }
    expect(await mediaOfDraft()).toEqual(before);
  });

  it("answers 503 to a download of a stored file", async () => {
    const stored = await send("POST", "/v1/media/", { request: draft, name: "d.bin" }, data);
    expect(stored.statusCode, stored.body).toBe(201);
    fail();
    try {
      const res = await t.app.inject({
        method: "GET",
        url: `/v1/media/${stored.json().id}/download`,
        headers: owner.headers,
      });
      expectUnavailable(res);
    } finally {
      proxy.normal();
    }
  });

  it("does not complete an upload whose last chunk was answered 503; re-sent, it completes", async () => {
    const half = data.length / 2;
    const first = await send(
      "POST",
      "/v1/media/",
      { request: draft, name: "c.bin", total_chunks: 2, current_chunk: 1 },
      data.subarray(0, half),
    );
    expect(first.statusCode, first.body).toBe(201);
    const id = first.json().id as number;
    fail();
    try {
      expectUnavailable(await send("PUT", `/v1/media/${id}`, { current_chunk: 2 }, data.subarray(half)));
    } finally {
      proxy.normal();
    }
    const shown = await t.app.inject({ method: "GET", url: `/v1/media/${id}/`, headers: owner.headers });
    expect(shown.json().state).toBe("uploading");
    const again = await send("PUT", `/v1/media/${id}`, { current_chunk: 2 }, data.subarray(half));
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json()).toMatchObject({ state: "available", sha256: sha256(data) });
  });
});
