/**
 * SDK: the @ferry/client SDK's upload of a MEDIA_BENCH_MB (default 1024) MiB file from disk in
 * 4 MiB chunks with 1 and 4 chunks in flight, each next to raw HTTP doing the same in the same run
 * (node:http with a keep-alive agent, the same file read chunk by chunk, the same bodies: a
 * multipart POST for chunk 1, application/octet-stream PUTs for the others as the SDK sends them
 * (ADR 0041), no hashing and no resume lookup). Runs alternate raw/SDK and are repeated SDK_BENCH_RUNS (default 3)
 * times; medians are compared. The ratio is what the SDK costs: its own SHA-256 of the file, the
 * fingerprint, the unfinished-upload lookup, fetch instead of node:http.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { FerryClient } from "../packages/client/src/index.js";
import { deterministicStream } from "../test/helpers/media.js";
import { type BenchFerry, type BenchModule, median, report, startBenchFerry } from "./lib.js";

const MiB = 1024 * 1024;
const SIZE = Number(process.env.MEDIA_BENCH_MB ?? 1024) * MiB;
const CHUNK = 4 * MiB;
const RUNS = Number(process.env.SDK_BENCH_RUNS ?? 3);

function multipart(
  fields: Record<string, string | number>,
  bytes: Buffer,
): { head: Buffer; tail: Buffer; type: string } {
  const boundary = `----bench${randomBytes(8).toString("hex")}`;
  let head = "";
  for (const [k, v] of Object.entries(fields)) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  }
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  void bytes;
  return {
    head: Buffer.from(head),
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

function post(agent: Agent, url: string, method: string, headers: Record<string, string>, body: Buffer[]) {
  const length = body.reduce((n, b) => n + b.length, 0);
  return new Promise<{ status: number; json: { id: number; state: string } }>((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, agent, headers: { ...headers, "content-length": String(length) } },
      (res) => {
        let text = "";
        res.on("data", (d) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    for (const b of body) req.write(b);
    req.end();
  });
}

/** Raw HTTP: chunk 1 by POST, the others by PUT with `inFlight` at a time; MiB/s. */
async function rawUpload(
  ferry: BenchFerry,
  path: string,
  request: number,
  inFlight: number,
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
  const total = Math.ceil(SIZE / CHUNK);
  const started = performance.now();
  const handle = await open(path, "r");
  try {
    const read = async (n: number) => {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, SIZE - (n - 1) * CHUNK));
      await handle.read(buf, 0, buf.length, (n - 1) * CHUNK);
      return buf;
    };
    const first = await read(1);
    const m1 = multipart(
      { request, name: "big.bin", total_chunks: total, current_chunk: 1, total_bytes: SIZE },
      first,
    );
    const created = await post(
      agent,
      `${ferry.base}/v1/media/`,
      "POST",
      { ...ferry.headers, "content-type": m1.type },
      [m1.head, first, m1.tail],
    );
    if (created.status !== 201) throw new Error(`raw POST answered ${created.status}`);
    const id = created.json.id;
    let next = 2;
    let last = "uploading";
    const worker = async () => {
      while (next <= total) {
        const n = next++;
        const bytes = await read(n);
        const res = await post(
          agent,
          `${ferry.base}/v1/media/${id}?current_chunk=${n}`,
          "PUT",
          { ...ferry.headers, "content-type": "application/octet-stream" },
          [bytes],
        );
        if (res.status !== 201) throw new Error(`raw PUT answered ${res.status}`);
        if (res.json.state === "available") last = "available";
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    if (last !== "available") throw new Error("raw upload did not complete");
    const seconds = (performance.now() - started) / 1000;
    await fetch(`${ferry.base}/v1/media/${id}/`, { method: "DELETE", headers: ferry.headers });
    return SIZE / MiB / seconds;
  } finally {
    await handle.close();
    agent.destroy();
  }
}

/** The SDK's uploadFile with `inFlight` chunks at a time; MiB/s. */
async function sdkUpload(
  client: FerryClient,
  path: string,
  request: number,
  inFlight: number,
): Promise<number> {
  const started = performance.now();
  const result = await client.uploadFile({ request }, path, { concurrency: inFlight });
  const seconds = (performance.now() - started) / 1000;
  await client.deleteMedia({ id: result.media.id });
  return SIZE / MiB / seconds;
}

export const sdkBench: BenchModule = {
  name: "sdk",
  async run() {
    const dir = await mkdtemp(join(tmpdir(), "ferry-bench-sdk-"));
    const ferry = await startBenchFerry();
    try {
      const path = join(dir, "big.bin");
      await pipeline(deterministicStream(SIZE, "sdk-bench"), createWriteStream(path));
      const client = new FerryClient({ baseUrl: ferry.base, token: ferry.token });
      const draft = await client.createRequest({ body: { type: "push", is_draft: true } });
      const figures: Record<string, number[]> = { raw1: [], sdk1: [], raw4: [], sdk4: [] };
      const cpu: Record<string, number[]> = { raw1: [], sdk1: [], raw4: [], sdk4: [] };
      const measure = async (key: string, upload: () => Promise<number>) => {
        const before = process.cpuUsage();
        figures[key]!.push(await upload());
        const used = process.cpuUsage(before);
        cpu[key]!.push((used.user + used.system) / 1e6);
      };
      for (let run = 0; run < RUNS; run++) {
        for (const inFlight of [1, 4]) {
          await measure(`raw${inFlight}`, () => rawUpload(ferry, path, draft.id, inFlight));
          await measure(`sdk${inFlight}`, () => sdkUpload(client, path, draft.id, inFlight));
        }
      }
      const mb = SIZE / MiB;
      for (const inFlight of [1, 4]) {
        const raw = median(figures[`raw${inFlight}`]!);
        const sdk = median(figures[`sdk${inFlight}`]!);
        report(`raw HTTP upload ${mb} MiB, 4 MiB chunks, ${inFlight} in flight (median)`, raw, "MiB/s");
        report(`SDK uploadFile ${mb} MiB, 4 MiB chunks, ${inFlight} in flight (median)`, sdk, "MiB/s", {
          label: "raw HTTP",
          value: raw,
        });
        console.log(
          `   runs: raw ${figures[`raw${inFlight}`]!.map((v) => v.toFixed(0)).join(", ")}; SDK ${figures[`sdk${inFlight}`]!.map((v) => v.toFixed(0)).join(", ")}; SDK cost ${((raw / sdk - 1) * 100).toFixed(1)} % of time over raw HTTP; client CPU s: raw ${median(cpu[`raw${inFlight}`]!).toFixed(2)}, SDK ${median(cpu[`sdk${inFlight}`]!).toFixed(2)}`,
        );
      }
    } finally {
      await ferry.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
