/**
 * Ferry scaled out as operators run it: two `ferry serve --no-worker` processes and a `ferry
 * worker` on one database (PostgreSQL in CI's second run), Redis and S3 (s3rver, or the server
 * FERRY_TEST_S3_* names), sharing FERRY_MASTER_KEY. One upload's chunks alternate nodes and the
 * file is downloaded from the other node; an application revoked on one node is refused on the
 * other; a node killed with SIGKILL mid-chunk leaves an upload the other node finishes.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";
import { multipart } from "./helpers/media.js";
import { type FerryProcess, freePort, runFerry, spawnFerry, waitForHttp } from "./helpers/process.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "./helpers/s3-server.js";

const REDIS_URL = process.env.FERRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const CHUNK = 1024 * 1024;

let database: TestDatabase;
let s3: TestS3Server;
let env: Record<string, string>;
const nodes: { url: string; process: FerryProcess }[] = [];
let worker: FerryProcess;
let apiKey: string;
const email = "owner@example.com";

async function startNode(): Promise<{ url: string; process: FerryProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawnFerry(["serve", "--no-worker"], { ...env, PORT: String(port), HOST: "127.0.0.1" });
  await waitForHttp(`${url}/readyz`, proc);
  return { url, process: proc };
}

async function token(base: string, key = apiKey): Promise<Record<string, string>> {
  const res = await fetch(`${base}/v1/auth/get_token/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: key, email }),
  });
  expect(res.status).toBe(200);
  return { authorization: `JWT ${((await res.json()) as { token: string }).token}` };
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

async function sendChunk(
  base: string,
  headers: Record<string, string>,
  method: "POST" | "PUT",
  path: string,
  fields: Record<string, string | number>,
  data: Buffer,
) {
  const body = multipart(fields, { data, filename: "big.bin" });
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...body.headers },
    body: new Uint8Array(body.payload),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  database = await createTestDatabase();
  s3 = await startS3Server();
  env = {
    ...database.env,
    ...ferryS3Env(s3),
    REDIS_URL,
    FERRY_MASTER_KEY: `k1:${randomBytes(32).toString("base64")}`,
    PUBLIC_BASE_URL: "http://ferry.test",
  };
  expect((await runFerry(["admin", "create-account", "--email", email, "--json"], env)).code).toBe(0);
  const app = await runFerry(["admin", "create-app", "--email", email, "--name", "Nodes", "--json"], env);
  apiKey = JSON.parse(app.stdout).api_key;
  nodes.push(await startNode(), await startNode());
  worker = spawnFerry(["worker"], env);
});

afterAll(async () => {
  for (const p of [...nodes.map((n) => n.process), worker]) {
    if (p && p.child.exitCode === null && p.child.signalCode === null) {
      const exited = p.exited;
      p.child.kill("SIGTERM");
      await exited;
    }
  }
  await s3?.stop();
  await database?.drop();
});

describe("two nodes and a worker on one database, Redis and S3", () => {
  let request: number;
  let headers: [Record<string, string>, Record<string, string>];

  beforeAll(async () => {
    headers = [await token(nodes[0]!.url), await token(nodes[1]!.url)];
    const res = await fetch(`${nodes[0]!.url}/v1/request/`, {
      method: "POST",
      headers: { ...headers[0], "content-type": "application/json" },
      body: JSON.stringify({ type: "push", is_draft: true }),
    });
    expect(res.status).toBe(201);
    request = ((await res.json()) as { id: number }).id;
  });

  it("takes one upload's chunks on alternating nodes and serves it from the other", async () => {
    const data = randomBytes(5 * CHUNK + 321);
    const total = Math.ceil(data.length / CHUNK);
    const chunk = (n: number) => data.subarray((n - 1) * CHUNK, n * CHUNK);
    const first = await sendChunk(
      nodes[0]!.url,
      headers[0],
      "POST",
      "/v1/media/",
      {
        request,
        name: "big.bin",
        total_chunks: total,
        current_chunk: 1,
      },
      chunk(1),
    );
    expect(first.status).toBe(201);
    const id = first.json.id as number;
    let last = first;
    for (let n = 2; n <= total; n++) {
      const node = n % 2;
      last = await sendChunk(
        nodes[node]!.url,
        headers[node]!,
        "PUT",
        `/v1/media/${id}`,
        { current_chunk: n },
        chunk(n),
      );
      expect(last.status, JSON.stringify(last.json)).toBeLessThan(300);
    }
    expect(last.json).toMatchObject({ state: "available", sha256: sha256(data) });
    // The last chunk landed on node 0 (total is 6): download from node 1.
    const got = await fetch(`${nodes[1]!.url}/v1/media/${id}/download`, { headers: headers[1] });
    expect(got.status).toBe(200);
    expect(sha256(Buffer.from(await got.arrayBuffer()))).toBe(sha256(data));
  });

  it("refuses on one node an application revoked on the other", async () => {
    const created = await fetch(`${nodes[0]!.url}/v1/application/`, {
      method: "POST",
      headers: { ...headers[0], "content-type": "application/json" },
      body: JSON.stringify({ name: "Short-lived" }),
    });
    expect(created.status).toBe(201);
    const app = (await created.json()) as { application: { id: number }; api_key: string };
    const appHeaders = await token(nodes[1]!.url, app.api_key);
    expect((await fetch(`${nodes[1]!.url}/v1/request/`, { headers: appHeaders })).status).toBe(200);

    const revoked = await fetch(`${nodes[0]!.url}/v1/application/${app.application.id}/`, {
      method: "DELETE",
      headers: headers[0],
    });
    expect(revoked.status).toBeLessThan(300);
    const refused = await fetch(`${nodes[1]!.url}/v1/request/`, { headers: appHeaders });
    expect(refused.status).toBe(401);
  });

  it("finishes on the other node an upload whose node was killed mid-chunk", async () => {
    const data = randomBytes(3 * CHUNK);
    const chunk = (n: number) => data.subarray((n - 1) * CHUNK, n * CHUNK);
    const first = await sendChunk(
      nodes[0]!.url,
      headers[0],
      "POST",
      "/v1/media/",
      {
        request,
        name: "killed.bin",
        total_chunks: 3,
        current_chunk: 1,
      },
      chunk(1),
    );
    expect(first.status).toBe(201);
    const id = first.json.id as number;

    // Chunk 2 to node 1: half of its body sent, then the node is killed.
    const body = multipart({ current_chunk: 2 }, { data: chunk(2), filename: "killed.bin" });
    const victim = nodes[1]!;
    let sentHalf!: () => void;
    const halfway = new Promise<void>((resolve) => {
      sentHalf = resolve;
    });
    const half = Math.floor(body.payload.length / 2);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(body.payload.subarray(0, half)));
        sentHalf();
      },
    });
    const cut = fetch(`${victim.url}/v1/media/${id}`, {
      method: "PUT",
      headers: { ...headers[1], ...body.headers },
      body: stream,
      duplex: "half",
    } as RequestInit).then(
      (res) => res.status,
      () => "no answer",
    );
    await halfway;
    const exited = victim.process.exited;
    victim.process.child.kill("SIGKILL");
    await exited;
    expect(await cut).toBe("no answer");

    const survivor = nodes[0]!;
    for (const n of [2, 3]) {
      const res = await sendChunk(
        survivor.url,
        headers[0],
        "PUT",
        `/v1/media/${id}`,
        { current_chunk: n },
        chunk(n),
      );
      expect(res.status, JSON.stringify(res.json)).toBeLessThan(300);
      if (n === 3) expect(res.json).toMatchObject({ state: "available", sha256: sha256(data) });
    }
    const got = await fetch(`${survivor.url}/v1/media/${id}/download`, { headers: headers[0] });
    expect(sha256(Buffer.from(await got.arrayBuffer()))).toBe(sha256(data));
  });
});
