/**
 * The SDK against a real `ferry serve` process: typed calls and errors, pagination, a 200 MB upload
 * with four chunks in flight interrupted and resumed, a download interrupted and resumed with Range,
 * a real rate limit, and the verification of a real callback.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CuttingProxy, startCuttingProxy } from "../../../test/helpers/cutting-proxy.js";
import { deterministicStream } from "../../../test/helpers/media.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../../test/helpers/webhook-receiver.js";
import {
  FerryApiError,
  FerryClient,
  FerryDestinationError,
  type RequestCompleteEvent,
  verifyWebhook,
  WebhookVerificationError,
} from "../src/index.js";
import { nodeFetch } from "../src/node-fetch.js";
import { type ServerUnderTest, startServer } from "./server.js";

const MiB = 1024 * 1024;

/** The sandbox complete helper's documented content of a generated file: a SHA-256 counter stream seeded by its name. */
function generated(name: string, size: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i * 32 < size; i++) blocks.push(createHash("sha256").update(`${name}:${i}`).digest());
  return Buffer.concat(blocks).subarray(0, size);
}

async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  h.update(await readFile(path));
  return h.digest("hex");
}

describe("the SDK against a real server", () => {
  let server: ServerUnderTest;
  let client: FerryClient;
  let dir: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    server = await startServer();
    client = new FerryClient({ baseUrl: server.base, apiKey: server.apiKey, email: server.email });
    dir = await mkdtemp(join(tmpdir(), "ferry-sdk-"));
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("gets a token by itself, calls typed methods and pages through lists", async () => {
    const account = await client.getAccount();
    expect(account).toMatchObject({ email: server.email, environment: "sandbox" });
    for (let i = 0; i < 5; i++) {
      await client.createContact({
        body: {
          first_name: `C${i}`,
          contactmethod: [{ interface_class: "email", value: `c${i}@example.com` }],
        },
      });
    }
    const names: string[] = [];
    for await (const c of client.paginate("listContacts", { page_size: 2 })) names.push(c.first_name ?? "");
    expect(names.sort()).toEqual(["C0", "C1", "C2", "C3", "C4"]);
  });

  it("throws typed errors with the spec's code and field messages", async () => {
    const missing = await client.getRequest({ id: 999_999 }).catch((e) => e);
    expect(missing).toBeInstanceOf(FerryApiError);
    expect(missing).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
    const invalid = await client
      .createRequest({
        body: {
          type: "pull",
          contact: [{ contactmethod: [{ interface_class: "email", value: "not-an-email" }] }],
        },
      })
      .catch((e) => e);
    expect(invalid).toBeInstanceOf(FerryApiError);
    expect(invalid.status).toBe(400);
    expect(invalid.code).toBe("INVALID_REQUEST");
    expect(JSON.stringify(invalid.fields)).toContain("email");
  });

  it("uploads 200 MB with 4 chunks in flight, is interrupted midway, and a second run resumes it", async () => {
    const path = join(dir, "big.bin");
    await pipeline(deterministicStream(200 * MiB, "sdk-resume"), createWriteStream(path));
    const expected = await sha256File(path);
    const draft = await client.createRequest({ body: { type: "push", is_draft: true } });

    const stop = new AbortController();
    let sentBeforeStop = 0;
    const first = await client
      .uploadFile({ request: draft.id }, path, {
        concurrency: 4,
        signal: stop.signal,
        onProgress: (p) => {
          sentBeforeStop = p.chunks ?? 0;
          if ((p.chunks ?? 0) >= 20) stop.abort(new Error("stopped midway"));
        },
      })
      .catch((e) => e);
    expect(first).toBeInstanceOf(Error);
    expect(sentBeforeStop).toBeGreaterThanOrEqual(20);

    const media = await client.listMedia({ request: String(draft.id) });
    expect(media.results).toHaveLength(1);
    const unfinished = await client.getMedia({ id: media.results[0]!.id });
    expect(unfinished.state).toBe("uploading");
    const held = (unfinished as { received_chunks?: number[] }).received_chunks ?? [];
    expect(held.length).toBeGreaterThanOrEqual(20);
    expect(held.length).toBeLessThan(50);

    const progress: number[] = [];
    const second = await client.uploadFile({ request: draft.id }, path, {
      concurrency: 4,
      onProgress: (p) => progress.push(p.bytes),
    });
    expect(second.media.id).toBe(unfinished.id);
    // Chunks in flight when the first run stopped may still have been stored after it looked.
    expect(second.chunksResumed).toBeGreaterThanOrEqual(held.length);
    expect(second.chunksSent + second.chunksResumed).toBe(50);
    expect(second.chunksSent).toBeLessThanOrEqual(50 - 20);
    expect(second.sha256).toBe(expected);
    expect(second.media).toMatchObject({ state: "available", bytes: 200 * MiB, sha256: expected });
    expect(progress[0]).toBeGreaterThanOrEqual(held.length * 4 * MiB - 4 * MiB);
    expect(progress.at(-1)).toBe(200 * MiB);
  });

  it("uploads from a stream of unknown chunking when told its size and name", async () => {
    const draft = await client.createRequest({ body: { type: "push", is_draft: true } });
    const size = 9 * MiB + 17;
    const expected = createHash("sha256");
    for await (const piece of deterministicStream(size, "sdk-stream")) expected.update(piece as Buffer);
    const up = await client.uploadFile({ request: draft.id }, deterministicStream(size, "sdk-stream"), {
      size,
      name: "stream.bin",
      chunkSize: 2 * MiB,
    });
    expect(up.media).toMatchObject({ name: "stream.bin", bytes: size, total_chunks: 5, state: "available" });
    expect(up.sha256).toBe(expected.digest("hex"));
    const tooShort = await client
      .uploadFile({ request: draft.id }, deterministicStream(1000, "short"), {
        size: 2000,
        name: "short.bin",
      })
      .catch((e) => e);
    expect(tooShort.message).toContain("the stream had 1000 bytes, not 2000");
  });

  it("sends the chunks after the first as raw bodies, the chunk number in the query string", async () => {
    const sent: { method: string; url: string; type: string | null; bytes: number }[] = [];
    const recording = new FerryClient({
      baseUrl: server.base,
      apiKey: server.apiKey,
      email: server.email,
      fetch: async (input, init) => {
        const headers = new Headers(init?.headers);
        const body = init?.body;
        sent.push({
          method: init?.method ?? "GET",
          url: String(input),
          type: headers.get("content-type"),
          bytes: body instanceof Uint8Array ? body.length : 0,
        });
        return nodeFetch(input, init);
      },
    });
    const draft = await recording.createRequest({ body: { type: "push", is_draft: true } });
    const size = 5 * MiB + 3;
    const pieces: Buffer[] = [];
    for await (const piece of deterministicStream(size, "sdk-raw")) pieces.push(piece as Buffer);
    const data = Buffer.concat(pieces);
    const up = await recording.uploadFile({ request: draft.id }, new Blob([data]), {
      name: "raw.bin",
      chunkSize: 2 * MiB,
    });
    expect(up.media).toMatchObject({ state: "available", bytes: size, total_chunks: 3 });
    expect(up.sha256).toBe(createHash("sha256").update(data).digest("hex"));
    const puts = sent.filter((r) => r.method === "PUT");
    expect(puts.map((r) => new URL(r.url).searchParams.get("current_chunk")).sort()).toEqual(["2", "3"]);
    for (const put of puts) {
      expect(put.type).toBe("application/octet-stream");
      expect(new URL(put.url).searchParams.get("fingerprint")).toBe(up.media.fingerprint);
    }
    expect(puts.map((r) => r.bytes).sort((a, b) => a - b)).toEqual([MiB + 3, 2 * MiB]);
    const dest = join(dir, "raw-downloaded.bin");
    await recording.downloadFile(up.media.id, dest);
    expect((await readFile(dest)).equals(data)).toBe(true);
  });

  it("sends raw bytes through the generated uploadMediaChunk, as a Uint8Array or a Blob", async () => {
    const draft = await client.createRequest({ body: { type: "push", is_draft: true } });
    const parts = [Buffer.alloc(1000, 1), Buffer.alloc(2000, 2), Buffer.alloc(3000, 3)];
    const first = await client.uploadMedia({
      body: {
        request: draft.id,
        name: "parts.bin",
        total_chunks: 3,
        current_chunk: 1,
        file: new Blob([parts[0]!]),
      },
    });
    expect(first).toMatchObject({ state: "uploading", total_chunks: 3, current_chunk: 1 });
    const fingerprint = first.fingerprint ?? undefined;
    const second = await client.uploadMediaChunk({
      id: first.id,
      current_chunk: 2,
      fingerprint,
      body: new Uint8Array(parts[1]!),
    });
    expect(second).toMatchObject({ id: first.id, state: "uploading", current_chunk: 2 });
    const third = await client.uploadMediaChunk({
      id: first.id,
      current_chunk: 3,
      fingerprint,
      body: new Blob([parts[2]!]),
    });
    const whole = Buffer.concat(parts);
    expect(third).toMatchObject({ state: "available", bytes: whole.length });
    expect(third.sha256).toBe(createHash("sha256").update(whole).digest("hex"));
    const res = await client.downloadMedia({ id: first.id });
    expect(Buffer.from(await res.arrayBuffer()).equals(whole)).toBe(true);
    // Without current_chunk in the query, the server says which field is missing.
    await expect(
      client.uploadMediaChunk({ id: first.id, body: new Uint8Array(10) } as never),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("falls back to multipart chunks when the server refuses raw bodies (a server from before them)", async () => {
    // Such a server answers 415 to an application/octet-stream PUT; everything else goes to the real one.
    const sent: { raw: boolean; status: number }[] = [];
    const older = new FerryClient({
      baseUrl: server.base,
      apiKey: server.apiKey,
      email: server.email,
      fetch: async (input, init) => {
        const type = new Headers(init?.headers).get("content-type") ?? "";
        if (init?.method !== "PUT") return nodeFetch(input, init);
        if (type === "application/octet-stream") {
          sent.push({ raw: true, status: 415 });
          const detail =
            "Send the upload as multipart/form-data (recommended) or application/x-www-form-urlencoded.";
          return new Response(JSON.stringify({ code: "UNSUPPORTED_MEDIA_TYPE", detail }), {
            status: 415,
            headers: { "content-type": "application/json" },
          });
        }
        const res = await nodeFetch(input, init);
        sent.push({ raw: false, status: res.status });
        return res;
      },
    });
    const draft = await older.createRequest({ body: { type: "push", is_draft: true } });
    const size = 7 * MiB + 11;
    const pieces: Buffer[] = [];
    for await (const piece of deterministicStream(size, "sdk-older")) pieces.push(piece as Buffer);
    const data = Buffer.concat(pieces);
    const up = await older.uploadFile({ request: draft.id }, new Blob([data]), {
      name: "older.bin",
      chunkSize: MiB,
      concurrency: 1,
    });
    expect(up.media).toMatchObject({ state: "available", bytes: size, total_chunks: 8 });
    expect(up.sha256).toBe(createHash("sha256").update(data).digest("hex"));
    // One raw attempt, then every chunk after the first as a form, each accepted.
    expect(sent).toEqual([
      { raw: true, status: 415 },
      ...Array.from({ length: 7 }, () => ({ raw: false, status: 201 })),
    ]);
  });

  it("downloads to a file, is interrupted, and resumes with a Range request", async () => {
    const draft = await client.createRequest({ body: { type: "push", is_draft: true } });
    const src = join(dir, "dl-src.bin");
    await pipeline(deterministicStream(40 * MiB, "sdk-download"), createWriteStream(src));
    // Uploaded from a Blob through the platform's fetch, as in a browser.
    const browserLike = new FerryClient({
      baseUrl: server.base,
      apiKey: server.apiKey,
      email: server.email,
      fetch: globalThis.fetch,
    });
    const up = await browserLike.uploadFile({ request: draft.id }, new Blob([await readFile(src)]), {
      name: "dl.bin",
      concurrency: 3,
    });
    expect(up.media).toMatchObject({ name: "dl.bin", state: "available", bytes: 40 * MiB });
    const dest = join(dir, "dl.bin");
    const stop = new AbortController();
    const cut = await client
      .downloadFile(up.media.id, dest, {
        signal: stop.signal,
        onProgress: (p) => {
          if (p.bytes > 10 * MiB) stop.abort(new Error("cut"));
        },
      })
      .catch((e) => e);
    expect(cut).toBeInstanceOf(Error);
    const partial = (await stat(`${dest}.part`)).size;
    expect(partial).toBeGreaterThan(10 * MiB);
    expect(partial).toBeLessThan(40 * MiB);

    const resumed = await client.downloadFile(up.media.id, dest);
    expect(resumed.resumedBytes).toBe(partial);
    expect(resumed.bytes).toBe(40 * MiB);
    expect(resumed.sha256).toBe(up.sha256);
    expect(await sha256File(dest)).toBe(up.sha256);
    await expect(stat(`${dest}.part`)).rejects.toThrow();
  });

  /** A pull request completed in the sandbox with one generated file; its media id. */
  async function pulledFile(name: string, bytes: number): Promise<number> {
    const pull = await client.createRequest({
      body: {
        type: "pull",
        contact: [{ contactmethod: [{ interface_class: "email", value: "jo@example.com" }] }],
      },
    });
    await client.sandboxCompleteRequest({ id: pull.id, body: { files: [{ name, bytes }] } });
    const done = await client.getRequest({ id: pull.id });
    expect(done.media).toHaveLength(1);
    return done.media[0]!.id;
  }

  it("creates the destination's missing folders before downloading a file that is downloaded once", async () => {
    const id = await pulledFile("statement.bin", 300_000);
    const dest = join(dir, "in", "2024", "statement.bin");
    const result = await client.downloadFile(id, dest);
    expect(result).toMatchObject({ path: dest, bytes: 300_000, resumes: 0 });
    expect((await readFile(dest)).equals(generated("statement.bin", 300_000))).toBe(true);
    expect(await readdir(join(dir, "in", "2024"))).toEqual(["statement.bin"]);
    // The one allowed download was this one.
    await expect(client.downloadFile(id, join(dir, "in", "again.bin"))).rejects.toMatchObject({
      status: 410,
    });
  });

  it("refuses a destination it cannot write before asking for the file, which the server keeps", async () => {
    const id = await pulledFile("kept.bin", 200_000);
    const requests: string[] = [];
    const recording = new FerryClient({
      baseUrl: server.base,
      apiKey: server.apiKey,
      email: server.email,
      fetch: (input, init) => {
        requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
        return nodeFetch(input, init);
      },
    });
    await recording.getAccount();
    requests.length = 0;
    // A folder in the path is a file; the destination is a folder.
    await writeFile(join(dir, "not-a-folder"), "x");
    const underFile = await recording.downloadFile(id, join(dir, "not-a-folder", "kept.bin")).catch((e) => e);
    expect(underFile).toBeInstanceOf(FerryDestinationError);
    expect(underFile.message).toContain("not-a-folder");
    await mkdir(join(dir, "a-folder"));
    const onFolder = await recording.downloadFile(id, join(dir, "a-folder")).catch((e) => e);
    expect(onFolder).toBeInstanceOf(FerryDestinationError);
    expect(onFolder.message).toContain("is a folder");
    expect(requests).toEqual([]);
    expect(await readdir(join(dir, "a-folder"))).toEqual([]);

    const dest = join(dir, "kept", "kept.bin");
    await recording.downloadFile(id, dest);
    expect(requests).toEqual([`GET /v1/media/${id}/download`]);
    expect((await readFile(dest)).equals(generated("kept.bin", 200_000))).toBe(true);
  });

  describe("through a connection that is cut midway", () => {
    let proxy: CuttingProxy;
    beforeAll(async () => {
      proxy = await startCuttingProxy(Number(new URL(server.base).port));
    });
    afterAll(async () => proxy?.close());

    it("resumes by itself with Range and writes the file byte for byte, counted as one download", async () => {
      const size = 6_000_000;
      const id = await pulledFile("scan.bin", size);
      const viaProxy = new FerryClient({ baseUrl: proxy.url, apiKey: server.apiKey, email: server.email });
      await viaProxy.getAccount();
      proxy.cutAfter(MiB);
      const progress: number[] = [];
      await mkdir(join(dir, "cut"));
      const dest = join(dir, "cut", "scan.bin");
      const result = await viaProxy.downloadFile(id, dest, { onProgress: (p) => progress.push(p.bytes) });
      expect(proxy.cuts).toHaveLength(1);
      expect(result.resumes).toBeGreaterThanOrEqual(1);
      expect(result.bytes).toBe(size);
      const bytes = await readFile(dest);
      expect(bytes.equals(generated("scan.bin", size))).toBe(true);
      expect(result.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(await readdir(join(dir, "cut"))).toEqual(["scan.bin"]);
      expect(progress.at(-1)).toBe(size);
      // The resumes were the same download: a new one is refused.
      await expect(client.downloadFile(id, join(dir, "cut", "again.bin"))).rejects.toMatchObject({
        status: 410,
      });
    });
  });

  it("verifies a real callback with the account's secret; the payload is typed by its type", async () => {
    const { secret } = await client.getCallbackSecret();
    const request = await client.createRequest({
      body: {
        type: "pull",
        callback_url: `${receiver.url}/hook?order=7`,
        contact: [{ contactmethod: [{ interface_class: "email", value: "jo@example.com" }] }],
      },
    });
    await client.sandboxCompleteRequest({
      id: request.id,
      body: { receiver_message: "Here you go", files: [{ name: "a.txt", content: "hi" }] },
    });
    const [hook] = await receiver.waitFor(1);
    const event = verifyWebhook(secret, hook!.headers, hook!.body);
    expect(event.type).toBe("request_complete");
    if (event.type === "request_complete") {
      const typed: RequestCompleteEvent = event;
      expect(typed.request).toMatchObject({
        id: request.id,
        complete: true,
        receiver_message: "Here you go",
      });
    }
    expect(() => verifyWebhook(secret, hook!.headers, hook!.body.replace("Here", "Hare"))).toThrow(
      WebhookVerificationError,
    );
  });
});

describe("a real rate limit", () => {
  let server: ServerUnderTest;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_APPLICATION: "3", RATE_LIMIT_WINDOW_SECONDS: "1" });
  });
  afterAll(async () => server?.stop());

  it("waits as long as Retry-After says and then succeeds", async () => {
    const retries: { status: number; waitMs: number }[] = [];
    const client = new FerryClient({
      baseUrl: server.base,
      apiKey: server.apiKey,
      email: server.email,
      onRetry: (r) => retries.push(r),
    });
    for (let i = 0; i < 8; i++) expect((await client.getAccount()).email).toBe(server.email);
    expect(retries.length).toBeGreaterThan(0);
    expect(retries.every((r) => r.status === 429 && r.waitMs >= 0 && r.waitMs <= 1000)).toBe(true);
  });
});
