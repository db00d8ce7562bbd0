import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart, sha256 } from "../../../test/helpers/media.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "../../../test/helpers/s3-server.js";

// Completing a chunked upload whose chunks came out of order reads every part back, sending
// nothing meanwhile. Here each read from S3 is held up by a proxy, so that completion outlasts
// the connection's idle timeout many times over; the answer must still arrive.
const IDLE_MS = 1000;
const READ_DELAY_MS = 250;
const CHUNKS = 16;

let s3: TestS3Server;
let proxy: Server;
let t: TestApp;
let owner: TestAccount;
let base: string;

/** Forwards to `target`, delaying every object read (GET) by READ_DELAY_MS. */
function slowReadsProxy(target: string): Promise<Server> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const forward = () => {
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      req.pipe(out);
    };
    if (req.method === "GET") setTimeout(forward, READ_DELAY_MS);
    else forward();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  s3 = await startS3Server();
  proxy = await slowReadsProxy(s3.endpoint);
  t = await createTestApp({
    ...ferryS3Env(s3, `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`),
    HTTP_IDLE_TIMEOUT_MS: String(IDLE_MS),
  });
  owner = await createTestAccount(t);
  ({ base } = await listenOnLoopback(t.app));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => proxy?.close(resolve));
  await s3?.stop();
});

async function send(
  method: "POST" | "PUT",
  path: string,
  fields: Record<string, string | number>,
  data: Buffer,
) {
  const body = multipart(fields, { data, filename: "slow.bin" });
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...owner.headers, ...body.headers },
    body: new Uint8Array(body.payload),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("completing an upload from its stored parts", () => {
  it("answers even when it takes longer than the idle timeout", async () => {
    const draft = await createRequest(t, owner, { type: "push", is_draft: true });
    const chunk = (n: number) => bytesOf(1000 + n, `slow-${n}`);
    const first = await send(
      "POST",
      "/v1/media/",
      {
        request: draft,
        name: "slow.bin",
        total_chunks: CHUNKS,
        current_chunk: 1,
      },
      chunk(1),
    );
    expect(first.status).toBe(201);
    const id = first.json.id as number;
    // Out of order (last to second), so the running digests cannot be used: the last PUT reads
    // all CHUNKS parts, each read held up READ_DELAY_MS: well over IDLE_MS in total.
    for (let n = CHUNKS; n >= 2; n--) {
      const res = await send("PUT", `/v1/media/${id}`, { current_chunk: n }, chunk(n));
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      if (n === 2) {
        expect(res.json.state).toBe("available");
        const all = Buffer.concat(Array.from({ length: CHUNKS }, (_, i) => chunk(i + 1)));
        expect(res.json.sha256).toBe(sha256(all));
      }
    }
  }, 60_000);
});
