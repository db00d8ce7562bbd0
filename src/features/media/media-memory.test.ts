import { readFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/db.js";
import { deterministicStream, sha256OfStream } from "../../../test/helpers/media.js";
import {
  type FerryProcess,
  freePort,
  runFerry,
  spawnFerry,
  waitForHttp,
} from "../../../test/helpers/process.js";

// Streaming in constant memory: a large upload and download through a real `ferry serve` keep the
// server's resident memory under 250 MB. FERRY_TEST_BIG_FILE_MB sets the size (default 1024).
const SIZE = Number(process.env.FERRY_TEST_BIG_FILE_MB ?? "1024") * 1024 * 1024;
const RSS_LIMIT = 250 * 1024 * 1024;

let database: TestDatabase;
let server: FerryProcess;
let base: string;
let headers: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    ...database.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: base,
    FERRY_ENVIRONMENT: "live",
  };
  await runFerry(["admin", "create-account", "--email", "big@example.com"], env);
  const app = await runFerry(
    ["admin", "create-app", "--email", "big@example.com", "--name", "t", "--json"],
    env,
  );
  const { api_key } = JSON.parse(app.stdout.trim().split("\n").pop()!);
  server = spawnFerry(["serve", "--no-worker"], env);
  await waitForHttp(`${base}/healthz`, server);
  const token = await fetch(`${base}/v1/auth/get_token/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key, email: "big@example.com" }),
  });
  headers = { authorization: `JWT ${(await token.json()).token}` };
});
afterAll(async () => {
  server?.child.kill("SIGKILL");
  await server?.exited;
  await database?.drop();
});

/** Samples the server's VmRSS until stopped; returns the peak in bytes. */
function sampleRss(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}

describe("streaming", () => {
  it(`uploads and downloads ${SIZE / 1024 / 1024} MiB in constant server memory`, {
    timeout: 900_000,
  }, async () => {
    const req = await fetch(`${base}/v1/request/`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ type: "push", is_draft: true }),
    });
    const requestId = (await req.json()).id;
    const boundary = "----ferrybig";
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n${requestId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nbig.bin\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const rss = sampleRss(server.child.pid!);

    const created = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const up = httpRequest(
        `${base}/v1/media/`,
        {
          method: "POST",
          headers: {
            ...headers,
            "content-type": `multipart/form-data; boundary=${boundary}`,
            "content-length": String(head.length + SIZE + tail.length),
          },
        },
        (res) => {
          let body = "";
          res.on("data", (d) => {
            body += d;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      up.on("error", reject);
      const body = Readable.from(
        (async function* () {
          yield head;
          yield* deterministicStream(SIZE);
          yield tail;
        })(),
      );
      body.pipe(up);
    });
    expect(created.status, created.body).toBe(201);
    const media = JSON.parse(created.body);
    const expected = await sha256OfStream(deterministicStream(SIZE));
    expect(media).toMatchObject({ bytes: SIZE, state: "available", sha256: expected });

    const downloaded = await new Promise<string>((resolve, reject) => {
      const down = httpRequest(`${base}/v1/media/${media.id}/download`, { headers }, (res) => {
        expect(res.statusCode).toBe(200);
        expect(res.headers["content-length"]).toBe(String(SIZE));
        sha256OfStream(res).then(resolve, reject);
      });
      down.on("error", reject);
      down.end();
    });
    const peak = await rss.stop();
    console.log(
      `media-memory: ${SIZE / 1048576} MiB up and down, server peak RSS ${(peak / 1048576).toFixed(0)} MiB`,
    );
    expect(downloaded).toBe(expected);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(RSS_LIMIT);
  });
});
