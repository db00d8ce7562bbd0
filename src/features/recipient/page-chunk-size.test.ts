import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { listenOnLoopback } from "../../../test/helpers/app.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { bytesOf } from "../../../test/helpers/media.js";
import { PageBrowser } from "../../../test/helpers/page-browser.js";

// The upload pages' chunk size (4 MiB) below the media service's (MAX_CHUNK_BYTES, 8 MiB here):
// a later chunk sent as a raw body without Content-Length (chunked transfer encoding) is held to
// the page's size as it streams, over a real socket, on the request pages and the session pages.

const MiB = 1024 * 1024;
const PAGE_CHUNK = 4 * MiB;
const h = useHarness({ env: { MAX_CHUNK_BYTES: String(8 * MiB) } });
let base: string;

beforeAll(async () => {
  ({ base } = await listenOnLoopback(h.t.app));
});

/** A file of three page chunks, the last one short. */
const FILE = bytesOf(2 * PAGE_CHUNK + 100, "page-chunks");
const chunkOf = (n: number) => FILE.subarray((n - 1) * PAGE_CHUNK, n * PAGE_CHUNK);

/** `data` as a body of 256 KiB pieces, which fetch sends with chunked transfer encoding. */
function streamOf(data: Buffer): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < data.length; at += 256 * 1024)
        controller.enqueue(new Uint8Array(data.subarray(at, at + 256 * 1024)));
      controller.close();
    },
  });
}

/** PUTs chunk `n` as a raw streamed body to `path` (under the page) over the socket. */
async function putStreamed(b: PageBrowser, path: string, n: number, data: Buffer) {
  const res = await fetch(`${base}${b.base}${path}?current_chunk=${n}`, {
    method: "PUT",
    headers: { ...b.header(), "x-csrf-token": b.csrf, "content-type": "application/octet-stream" },
    body: streamOf(data),
    duplex: "half",
  } as RequestInit & { duplex: "half" });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
}

async function blobCount(): Promise<number> {
  let count = 0;
  for await (const _ of h.t.ferry.blobStore.list("media/")) count++;
  return count;
}

/**
 * Starts an upload of FILE on the page under `uploads` (the first chunk as a form), sends chunk 2
 * one byte over the page's chunk size as a stream, then the right chunks 2 and 3; returns the
 * answers and what was stored in between.
 */
async function uploadWithOversizedChunk(b: PageBrowser, uploads: string) {
  const first = await b.chunk(
    "POST",
    uploads,
    { name: "big.pdf", size: String(FILE.length), total_chunks: "3", current_chunk: "1" },
    chunkOf(1),
  );
  expect(first.statusCode, first.body).toBe(201);
  const id = first.json().id as number;
  const blobsBefore = await blobCount();
  const oversized = await putStreamed(b, `${uploads}/${id}`, 2, bytesOf(PAGE_CHUNK + 1, "over"));
  const blobsAfter = await blobCount();
  const list = await b.get(uploads, { "x-csrf-token": b.csrf });
  const resent = await putStreamed(b, `${uploads}/${id}`, 2, chunkOf(2));
  const last = await putStreamed(b, `${uploads}/${id}`, 3, chunkOf(3));
  return { id, oversized, blobsBefore, blobsAfter, files: list.json().files as Json[], resent, last };
}

const tooLarge = { code: "PAYLOAD_TOO_LARGE", detail: `A chunk may hold at most ${PAGE_CHUNK} bytes.` };

async function expectRefusedThenResumed(run: Awaited<ReturnType<typeof uploadWithOversizedChunk>>) {
  expect(run.oversized).toEqual({ status: 413, body: tooLarge });
  expect(run.blobsAfter).toBe(run.blobsBefore);
  expect(run.files).toEqual([expect.objectContaining({ id: run.id, received_chunks: [1] })]);
  expect(run.resent.status).toBe(200);
  expect(run.resent.body).toMatchObject({ received_chunks: [1, 2], state: "uploading" });
  expect(run.last.body).toMatchObject({ state: "available", bytes: FILE.length });
  const download = await h.call("GET", `/v1/media/${run.id}/download`);
  expect(download.rawPayload.equals(FILE)).toBe(true);
}

describe("a raw chunk streamed past the page's chunk size", () => {
  it("is refused with 413 on a request page, storing nothing; the chunk sent again completes the file", async () => {
    const req = expectJson(await h.call("POST", "/v1/request/", { type: "pull" }), 201);
    const b = new PageBrowser(h.t, `/r/${req.identifier}/`);
    expect((await b.get()).statusCode).toBe(200);
    await expectRefusedThenResumed(await uploadWithOversizedChunk(b, "uploads"));
  }, 60_000);

  it("is refused with 413 on a session page, storing nothing; the chunk sent again completes the file", async () => {
    const c = await buildContainer(h.call);
    const ana = await addRecipient(h.call, c.id, { first_name: "Ana" });
    const pull = expectJson(
      await h.call("POST", "/v1/module_container_pull/pull/", {
        container: c.id,
        title: "Scans",
        recipient_permissions: [ana.id],
      }),
      201,
    );
    const session = sessionOf(await sendContainer(h.call, c.id), ana);
    const b = new PageBrowser(h.t, session.base);
    expect((await b.get()).statusCode).toBe(200);
    await expectRefusedThenResumed(await uploadWithOversizedChunk(b, `features/${pull.id}/uploads`));
  }, 60_000);
});
