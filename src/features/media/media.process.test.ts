import { createHash } from "node:crypto";
import { mkdir, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/db.js";
import { bytesOf, multipart, sha256 } from "../../../test/helpers/media.js";
import {
  type FerryProcess,
  freePort,
  runFerry,
  spawnFerry,
  waitForHttp,
} from "../../../test/helpers/process.js";

// A real `ferry serve`, killed with SIGKILL while a chunk is arriving, then restarted; then the
// maintenance commands (`keys rotate`, `storage gc`) on the same data.
let database: TestDatabase;
let env: Record<string, string>;
let base: string;
let server: FerryProcess | undefined;
let headers: Record<string, string>;
const data = bytesOf(3 * 1024 * 1024, "crash");
const half = 2 * 1024 * 1024;
let mediaId: number;

async function start(): Promise<void> {
  server = spawnFerry(["serve"], env);
  await waitForHttp(`${base}/healthz`, server);
}

async function stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!server) return;
  server.child.kill(signal);
  await server.exited;
  server = undefined;
}

async function api(
  method: string,
  path: string,
  body?: { payload: Buffer; headers: Record<string, string> },
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body?.headers ?? {}) },
    body: body ? new Uint8Array(body.payload) : undefined,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, json: () => JSON.parse(bytes.toString()) };
}

beforeAll(async () => {
  database = await createTestDatabase();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = {
    ...database.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: base,
    FERRY_ENVIRONMENT: "live",
  };
  expect((await runFerry(["admin", "create-account", "--email", "crash@example.com"], env)).code).toBe(0);
  const app = await runFerry(
    ["admin", "create-app", "--email", "crash@example.com", "--name", "t", "--json"],
    env,
  );
  const { api_key } = JSON.parse(app.stdout.trim().split("\n").pop()!);
  await start();
  const token = await fetch(`${base}/v1/auth/get_token/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key, email: "crash@example.com" }),
  });
  headers = { authorization: `JWT ${(await token.json()).token}` };
});
afterAll(async () => {
  await stop("SIGKILL");
  await database?.drop();
});

describe("a server killed while a chunk is written", () => {
  // Chunk 1 of 2 is stored; the server is killed half way through chunk 2, then restarted.
  let body: ReturnType<typeof multipart>;
  beforeAll(async () => {
    const req = await api("POST", "/v1/request/", {
      payload: Buffer.from(JSON.stringify({ type: "push", is_draft: true })),
      headers: { "content-type": "application/json" },
    });
    const requestId = req.json().id;
    const first = await api(
      "POST",
      "/v1/media/",
      multipart(
        { request: requestId, name: "crash.bin", total_chunks: 2, current_chunk: 1 },
        { data: data.subarray(0, half) },
      ),
    );
    expect(first.status, first.bytes.toString()).toBe(201);
    mediaId = first.json().id;

    // Send the headers and half of chunk 2, then kill the server while it is receiving it.
    body = multipart({ current_chunk: 2 }, { data: data.subarray(half) });
    const pending = new Promise<void>((resolve) => {
      const req2 = httpRequest(`${base}/v1/media/${mediaId}`, {
        method: "PUT",
        headers: { ...headers, ...body.headers, "content-length": String(body.payload.length) },
      });
      req2.on("error", () => resolve());
      req2.on("response", () => resolve());
      req2.write(body.payload.subarray(0, body.payload.length / 2));
    });
    await new Promise((r) => setTimeout(r, 500));
    await stop("SIGKILL");
    await pending;
    await start();
  });

  // In order: the first two look at the media as the crash left it, the last completes it.
  it("keeps the media uploading with only the first chunk", async () => {
    const info = await api("GET", `/v1/media/${mediaId}/`);
    expect(info.json()).toMatchObject({
      state: "uploading",
      total_chunks: 2,
      current_chunk: 1,
      bytes: half,
      sha256: null,
    });
  });

  it("refuses to download the media while its chunk is missing", async () => {
    expect((await api("GET", `/v1/media/${mediaId}/download`)).status).toBe(409);
  });

  it("completes the media, with the file's bytes, when the chunk is sent again", async () => {
    const resent = await api("PUT", `/v1/media/${mediaId}`, body);
    expect(resent.status, resent.bytes.toString()).toBe(201);
    expect(resent.json()).toMatchObject({
      state: "available",
      current_chunk: 2,
      bytes: data.length,
      sha256: sha256(data),
    });
    const got = await api("GET", `/v1/media/${mediaId}/download`);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(data));
  });
});

describe("maintenance commands", () => {
  // With the server stopped: `keys rotate`, then `storage gc` with an old orphan blob; then the
  // server starts again.
  let blobDir: string;
  let before: string[];
  let rotated: Awaited<ReturnType<typeof runFerry>>;
  let afterRotation: string[];
  let gc: Awaited<ReturnType<typeof runFerry>>;
  let crashLeft: string[];
  let inFlight: string;
  let notOurs: string;
  beforeAll(async () => {
    await stop();
    blobDir = join(database.dataDir, "blobs", "media");
    before = await readdir(blobDir, { recursive: true });
    rotated = await runFerry(["keys", "rotate", "--json"], env);
    afterRotation = await readdir(blobDir, { recursive: true });

    await mkdir(join(blobDir, "zz"), { recursive: true });
    const orphan = join(blobDir, "zz", "orphan.blob");
    await writeFile(orphan, "not referenced");
    const old = new Date(Date.now() - 48 * 3_600_000);
    await utimes(orphan, old, old);
    // Temporary files of writes a crash interrupted (as a put names them), one old, one fresh as
    // a write in progress keeps it; and another dot file that is not the store's.
    await mkdir(join(blobDir, "yy"), { recursive: true });
    crashLeft = [
      join(blobDir, "yy", ".part-0.blob.0a1b2c3d4e5f.tmp"),
      join(blobDir, "..", ".direct-io-probe.aabbccddeeff.tmp"),
    ];
    for (const path of crashLeft) {
      await writeFile(path, "half a chunk");
      await utimes(path, old, old);
    }
    inFlight = join(blobDir, "zz", ".part-1.blob.5f4e3d2c1b0a.tmp");
    notOurs = join(blobDir, "zz", ".keep");
    await writeFile(inFlight, "a chunk arriving");
    await writeFile(notOurs, "operator's note");
    await utimes(notOurs, old, old);
    gc = await runFerry(["storage", "gc", "--json"], env);
    await start();
  });

  it("`keys rotate` re-wraps the data keys", () => {
    expect(rotated.code, rotated.stderr).toBe(0);
    const rotation = JSON.parse(rotated.stdout.trim().split("\n").pop()!);
    expect(rotation).toMatchObject({ rotated: true, rewrapped_data_keys: 1 });
  });

  it("`keys rotate` leaves the blobs untouched", () => {
    expect(afterRotation).toEqual(before);
  });

  it("`storage gc` reports the orphan blob and the temporary files it deleted", () => {
    expect(gc.code, gc.stderr).toBe(0);
    expect(JSON.parse(gc.stdout.trim().split("\n").pop()!)).toEqual({
      stale_uploads_removed: 0,
      orphan_blobs_deleted: 1,
      blobs_checked: 3,
      temporary_files_removed: 2,
      incomplete_multipart_uploads_aborted: 0,
    });
  });

  it("`storage gc` removes old temporary files, and the folder one leaves empty, never a fresh one", async () => {
    for (const path of crashLeft) await expect(stat(path)).rejects.toMatchObject({ code: "ENOENT" });
    await expect(stat(join(blobDir, "yy"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await stat(inFlight)).isFile()).toBe(true);
    expect((await stat(notOurs)).isFile()).toBe(true);
  });

  it("`storage gc` deletes the orphan blob's file", async () => {
    expect((await readdir(blobDir, { recursive: true })).some((f) => f.includes("orphan"))).toBe(false);
  });

  it("leaves the file downloadable under its re-wrapped key", async () => {
    const got = await api("GET", `/v1/media/${mediaId}/download`);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(data));
  });
});

describe("chunks in flight across a restart", () => {
  // Chunks 3 and 4 of 5 are stored ahead of chunk 2 (held for the running digests), then the
  // server restarts: the digests it held are gone, and completing reads the parts back instead.
  const file = bytesOf(5 * 1024 * 1024 + 77, "restart");
  const size = 1024 * 1024;
  const piece = (n: number) => file.subarray((n - 1) * size, n * size);
  let id: number;

  it("completes with the file's digests and bytes", async () => {
    const req = await api("POST", "/v1/request/", {
      payload: Buffer.from(JSON.stringify({ type: "push", is_draft: true })),
      headers: { "content-type": "application/json" },
    });
    const first = await api(
      "POST",
      "/v1/media/",
      multipart(
        {
          request: req.json().id,
          name: "r.bin",
          total_chunks: 6,
          current_chunk: 1,
          total_bytes: file.length,
        },
        { data: piece(1) },
      ),
    );
    expect(first.status, first.bytes.toString()).toBe(201);
    id = first.json().id;
    const ahead = await Promise.all(
      [3, 4].map((n) => api("PUT", `/v1/media/${id}`, multipart({ current_chunk: n }, { data: piece(n) }))),
    );
    expect(ahead.map((a) => a.status)).toEqual([201, 201]);
    await stop();
    await start();
    const rest = await Promise.all(
      [2, 5, 6].map((n) =>
        api("PUT", `/v1/media/${id}`, multipart({ current_chunk: n }, { data: piece(n) })),
      ),
    );
    expect(rest.map((a) => a.status)).toEqual([201, 201, 201]);
    const info = await api("GET", `/v1/media/${id}/`);
    expect(info.json()).toMatchObject({
      state: "available",
      bytes: file.length,
      sha256: sha256(file),
      file_checksum: createHash("md5").update(file).digest("hex"),
    });
    const got = await api("GET", `/v1/media/${id}/download`);
    expect(got.bytes.equals(file)).toBe(true);
  });
});
