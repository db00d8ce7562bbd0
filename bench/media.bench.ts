/**
 * Media: upload and download MB/s through the API for a MEDIA_BENCH_MB (default 1024) MiB
 * file, whole and in 4 MiB chunks, each as a ratio to this machine's ceiling measured in the same
 * run (AES-256-GCM of the same bytes in 64 KiB segments plus writing them to the same disk, fsynced),
 * and the server's peak resident memory during each transfer. Chunked uploads are also compared
 * with the same ceiling done the way they must be stored: one fsynced file per 4 MiB part,
 * renamed into place, its directory fsynced. The chunked upload runs three times (the median is
 * compared) because its figure swings most between runs on shared machines, its PUTs sent both as
 * multipart forms and as raw bodies (ADR 0041), alternating with tus. The peers follow,
 * driven by the same client code in the same run: `@tus/server` with its file store (4 MiB PATCHes,
 * the finished file fsynced) and a plain `node:http` file stream for the download (alternating
 * with Ferry's downloads, as many rounds, medians compared), each with its process's peak memory
 * (bench/peers/tus-server.mjs).
 */

import { fork } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { Agent, type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  AlignedBufferPool,
  DIRECT_WRITE_BUFFER_BYTES,
  DIRECT_WRITE_FLAGS,
  writeDirect,
} from "../src/adapters/blob-store/direct-io.js";
import { generateDataKey } from "../src/crypto/envelope.js";
import { createEncryptStream } from "../src/crypto/segment-aead.js";
import { deterministicStream } from "../test/helpers/media.js";
import { type BenchFerry, type BenchModule, cpuSeconds, median, report, startBenchFerry } from "./lib.js";

export const MiB = 1024 * 1024;
const SIZE = Number(process.env.MEDIA_BENCH_MB ?? 1024) * MiB;
export const CHUNK = 4 * MiB;
const CHUNKED_RUNS = Number(process.env.MEDIA_BENCH_ROUNDS ?? 3);

/** MB/s of encrypting SIZE bytes and writing them to a file in `dir` (fsynced). */
async function ceiling(dir: string): Promise<number> {
  const path = join(dir, "ceiling.bin");
  const started = performance.now();
  await pipeline(
    deterministicStream(SIZE),
    createEncryptStream(generateDataKey(), 1),
    createWriteStream(path, { flush: true }),
  );
  const seconds = (performance.now() - started) / 1000;
  await rm(path, { force: true });
  return SIZE / MiB / seconds;
}

/**
 * MB/s of the ceiling's work with the file written as the local blob store writes it by default:
 * with direct I/O, around the page cache (ADR 0016). Printed for reference; the upload ratios use
 * `ceiling`, which writes through the page cache.
 */
async function directCeiling(dir: string): Promise<number | undefined> {
  const buffers = new AlignedBufferPool(2, DIRECT_WRITE_BUFFER_BYTES).acquire(2);
  if (DIRECT_WRITE_FLAGS === undefined || !buffers) return undefined;
  const path = join(dir, "ceiling-direct.bin");
  const started = performance.now();
  const handle = await open(path, DIRECT_WRITE_FLAGS);
  try {
    const body = deterministicStream(SIZE).pipe(createEncryptStream(generateDataKey(), 1));
    await writeDirect(handle, body, buffers);
    await handle.sync();
  } finally {
    await handle.close();
  }
  const seconds = (performance.now() - started) / 1000;
  await rm(path, { force: true });
  return SIZE / MiB / seconds;
}

/** MB/s of the same work in CHUNK-sized parts, each stored durably as the local blob store does. */
async function chunkedCeiling(dir: string): Promise<number> {
  const partsDir = join(dir, "ceiling-parts");
  await mkdir(partsDir, { recursive: true });
  const dek = generateDataKey();
  const started = performance.now();
  for (let n = 0; n * CHUNK < SIZE; n++) {
    const temp = join(partsDir, `.part-${n}.tmp`);
    await pipeline(
      deterministicStream(Math.min(CHUNK, SIZE - n * CHUNK)),
      createEncryptStream(dek, n + 1),
      createWriteStream(temp, { flush: true }),
    );
    await rename(temp, join(partsDir, `part-${n}`));
    const handle = await open(partsDir, "r");
    await handle.sync();
    await handle.close();
  }
  const seconds = (performance.now() - started) / 1000;
  await rm(partsDir, { recursive: true, force: true });
  return SIZE / MiB / seconds;
}

/** Samples the resident size of `pid` every 50 ms until `stop()`, which gives the peak in MiB. */
function sampleRss(pid: number) {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak / MiB;
    },
  };
}

/**
 * Runs `work` and gives its result with the CPU seconds the server process `pid` used meanwhile
 * and its peak resident size (MiB) during it.
 */
export async function watchServer<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: number; peakRss: number }> {
  const sampler = sampleRss(pid);
  const cpuBefore = await cpuSeconds(pid);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await sampler.stop();
    throw error;
  }
  const cpu = (await cpuSeconds(pid)) - cpuBefore;
  return { result, cpu, peakRss: await sampler.stop() };
}

/** Resident size of `pid` now, in MiB. */
async function rssNow(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return (Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024) / MiB;
}

/**
 * Takes items from `source` for `workers` loops running at once (each loop sends one item and
 * waits for its answer before taking the next), so at most `workers` items are in flight.
 */
async function inFlight<T>(
  source: AsyncIterator<T>,
  workers: number,
  send: (item: T) => Promise<void>,
): Promise<void> {
  let queue: Promise<unknown> = Promise.resolve();
  const next = () => {
    const taken = queue.then(() => source.next());
    queue = taken;
    return taken;
  };
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (;;) {
        const item = await next();
        if (item.done) return;
        await send(item.value);
      }
    }),
  );
}

interface Answer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

function send(
  agent: Agent,
  method: string,
  url: string,
  headers: Record<string, string>,
  writeBody: (req: ClientRequest) => void,
  length: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, agent, headers: { ...headers, "content-length": String(length) } },
      (res) => {
        let text = "";
        res.on("data", (d) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    writeBody(req);
  });
}

/** Like `send`, with the body written as buffers (no stream plumbing between them and the socket). */
function sendBuffers(
  agent: Agent,
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Buffer[],
): Promise<Answer> {
  const length = body.reduce((sum, b) => sum + b.length, 0);
  return send(
    agent,
    method,
    url,
    headers,
    (req) => {
      for (const b of body) req.write(b);
      req.end();
    },
    length,
  );
}

function multipartFramed(fields: Record<string, string | number>, fileBytes: number) {
  const boundary = "----ferrybench";
  let head = "";
  for (const [k, v] of Object.entries(fields))
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const headBuf = Buffer.from(head);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: headBuf.length + fileBytes + tail.length,
    head: headBuf,
    tail,
    body: (file: AsyncIterable<Buffer>) =>
      Readable.from(
        (async function* () {
          yield headBuf;
          yield* file;
          yield tail;
        })(),
      ),
  };
}

async function download(agent: Agent, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent, headers }, (res) => {
      let bytes = 0;
      res.on("data", (d: Buffer) => {
        bytes += d.length;
      });
      res.on("end", () => resolve(bytes));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** `call()`'s answer; its milliseconds (request sent to answer received) go to `latencies` if given. */
async function timed<T>(latencies: number[] | undefined, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const answer = await call();
  latencies?.push(performance.now() - started);
  return answer;
}

/** `total` (default SIZE) generated bytes in 4 MiB chunks, each as the pieces the generator gave. */
async function* chunks(total = SIZE): AsyncGenerator<{ pieces: Buffer[]; bytes: number }> {
  const source = deterministicStream(total)[Symbol.asyncIterator]();
  for (;;) {
    const pieces: Buffer[] = [];
    let bytes = 0;
    while (bytes < CHUNK) {
      const next = await source.next();
      if (next.done) break;
      pieces.push(next.value as Buffer);
      bytes += (next.value as Buffer).length;
    }
    if (bytes === 0) return;
    yield { pieces, bytes };
  }
}

/** The peers' process (bench/peers/tus-server.mjs): the tus server and the plain file stream. */
export async function startPeers(dir: string) {
  const directory = join(dir, "tus");
  await mkdir(directory, { recursive: true });
  const child = fork(join(import.meta.dirname, "peers", "tus-server.mjs"), [directory], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const [message] = (await once(child, "message")) as [{ port: number }];
  return {
    base: `http://127.0.0.1:${message.port}`,
    pid: child.pid!,
    directory,
    async stop() {
      child.kill();
      await once(child, "exit");
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * One tus upload of `total` bytes: a creation POST, then 4 MiB PATCHes one after another, each
 * PATCH's latency in milliseconds pushed to `latencies` when given. Gives the upload's id.
 */
export async function tusUpload(
  agent: Agent,
  base: string,
  total: number,
  latencies?: number[],
): Promise<string> {
  const tusHeaders = { "tus-resumable": "1.0.0" };
  const created = await sendBuffers(
    agent,
    "POST",
    `${base}/files`,
    { ...tusHeaders, "upload-length": `${total}` },
    [],
  );
  const location = created.headers.location;
  if (created.status !== 201 || !location) throw new Error(`tus create failed: ${created.status}`);
  const url = new URL(location, base).href;
  let offset = 0;
  for await (const { pieces, bytes } of chunks(total)) {
    const res = await timed(latencies, () =>
      sendBuffers(
        agent,
        "PATCH",
        url,
        { ...tusHeaders, "upload-offset": `${offset}`, "content-type": "application/offset+octet-stream" },
        pieces,
      ),
    );
    if (res.status !== 204) throw new Error(`tus PATCH at ${offset} failed: ${res.status} ${res.body}`);
    offset += bytes;
  }
  return url.split("/").pop()!;
}

/**
 * The same SIZE bytes through tus with the same client code (the server fsyncs each file when its
 * last PATCH ends). With `parallel` > 1 the file goes as that many uploads of an equal share, each
 * PATCHed in order, all at once: `@tus/file-store` has no concatenation extension, so there is no
 * final upload joining them (a reference that does less work than storing one file).
 */
async function uploadTus(agent: Agent, base: string, parallel = 1): Promise<{ mibs: number; ids: string[] }> {
  const started = performance.now();
  const share = Math.ceil(SIZE / CHUNK / parallel) * CHUNK;
  const shares = Array.from({ length: parallel }, (_, i) => Math.max(0, Math.min(share, SIZE - i * share)));
  const ids = await Promise.all(shares.filter((n) => n > 0).map((n) => tusUpload(agent, base, n)));
  return { mibs: SIZE / MiB / ((performance.now() - started) / 1000), ids };
}

/** How `uploadInChunks` uploads. */
export interface ChunkedUpload {
  /** Chunks in flight at once after the first (default 1). */
  parallel?: number;
  /** Bytes of the file (default SIZE). */
  size?: number;
  /** Each chunk's latency in milliseconds (request sent to answer received) is pushed here. */
  latencies?: number[];
  /**
   * Chunks after the first as raw application/octet-stream bodies, `current_chunk` in the query
   * string (ADR 0041), instead of multipart forms (default false).
   */
  raw?: boolean;
}

/** Creates a draft push request (what an owner uploads media into) and gives its id. */
export async function createDraftRequest(ferry: BenchFerry): Promise<number> {
  const res = await fetch(`${ferry.base}/v1/request/`, {
    method: "POST",
    headers: { ...ferry.headers, "content-type": "application/json" },
    body: JSON.stringify({ type: "push", is_draft: true }),
  });
  if (res.status !== 201) throw new Error(`request create failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}

/**
 * One chunked upload of `size` bytes: each 4 MiB chunk is generated (as the ceiling generates its
 * bytes), framed and written straight to the socket. The first chunk creates the media; then
 * `parallel` PUTs are in flight at once (each loop sends the next chunk once its last is answered).
 */
export async function uploadInChunks(
  agent: Agent,
  ferry: BenchFerry,
  requestId: number,
  { parallel = 1, size = SIZE, latencies, raw = false }: ChunkedUpload = {},
): Promise<{ mibs: number; id: number }> {
  const total = Math.ceil(size / CHUNK);
  const started = performance.now();
  // Chunk numbers given as chunks are generated, so each loop sends the number of what it took.
  const source = (async function* () {
    let n = 0;
    for await (const chunk of chunks(size)) yield { n: ++n, ...chunk };
  })();
  const put = async (n: number, pieces: Buffer[], bytes: number, id: number) => {
    if (raw && n > 1) {
      const res = await timed(latencies, () =>
        sendBuffers(
          agent,
          "PUT",
          `${ferry.base}/v1/media/${id}?current_chunk=${n}`,
          { ...ferry.headers, "content-type": "application/octet-stream" },
          pieces,
        ),
      );
      if (res.status !== 201) throw new Error(`chunk ${n} failed: ${res.status} ${res.body}`);
      return JSON.parse(res.body) as { id: number; state: string };
    }
    const fields: Record<string, string | number> =
      n === 1
        ? { request: requestId, name: "chunked.bin", total_chunks: total, current_chunk: 1 }
        : { current_chunk: n };
    const framed = multipartFramed(fields, bytes);
    const res = await timed(latencies, () =>
      sendBuffers(
        agent,
        n === 1 ? "POST" : "PUT",
        n === 1 ? `${ferry.base}/v1/media/` : `${ferry.base}/v1/media/${id}`,
        { ...ferry.headers, "content-type": framed.contentType },
        [framed.head, ...pieces, framed.tail],
      ),
    );
    if (res.status !== 201) throw new Error(`chunk ${n} failed: ${res.status} ${res.body}`);
    return JSON.parse(res.body) as { id: number; state: string };
  };
  const first = await source.next();
  if (first.done) throw new Error("nothing to upload");
  const media = await put(first.value.n, first.value.pieces, first.value.bytes, 0);
  let last = media;
  await inFlight(source, parallel, async ({ n, pieces, bytes }) => {
    const answer = await put(n, pieces, bytes, media.id);
    if (answer.state === "available") last = answer;
  });
  if (total > 1 && last.state !== "available") throw new Error("the chunked upload did not complete");
  return { mibs: size / MiB / ((performance.now() - started) / 1000), id: media.id };
}

export const mediaBench: BenchModule = {
  name: "media",
  async run() {
    const ferry = await startBenchFerry();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const agent4 = new Agent({ keepAlive: true, maxSockets: 4 });
    try {
      const ceilingMbs = await ceiling(ferry.database.dataDir);
      report(`ceiling: AES-256-GCM + disk write, ${SIZE / MiB} MiB`, ceilingMbs, "MiB/s");
      const ref = { label: "ceiling", value: ceilingMbs };
      const partsCeilingMbs = await chunkedCeiling(ferry.database.dataDir);
      report("ceiling in 4 MiB parts (each fsynced, renamed, dir fsynced)", partsCeilingMbs, "MiB/s");
      const partsRef = { label: "ceiling in parts", value: partsCeilingMbs };
      const directMbs = await directCeiling(ferry.database.dataDir);
      if (directMbs !== undefined)
        report("reference: the ceiling written with direct I/O (as Ferry writes)", directMbs, "MiB/s");
      const directRef =
        directMbs === undefined ? undefined : { label: "direct I/O ceiling", value: directMbs };
      const requestId = await createDraftRequest(ferry);
      const pid = ferry.process.child.pid!;
      // Idle: a few seconds after its first answers, nothing in flight.
      await new Promise((r) => setTimeout(r, 5000));
      report("server idle RSS (5 s after start)", await rssNow(pid), "MiB");

      // Whole file, one multipart POST.
      const whole = multipartFramed({ request: requestId, name: "whole.bin" }, SIZE);
      const rss = sampleRss(pid);
      const started = performance.now();
      const created = await send(
        agent,
        "POST",
        `${ferry.base}/v1/media/`,
        { ...ferry.headers, "content-type": whole.contentType },
        (req) => whole.body(deterministicStream(SIZE)).pipe(req),
        whole.length,
      );
      const seconds = (performance.now() - started) / 1000;
      if (created.status !== 201) throw new Error(`upload failed: ${created.status} ${created.body}`);
      report("upload whole (multipart POST)", SIZE / MiB / seconds, "MiB/s", ref);
      if (directRef)
        report("  same, against the direct I/O ceiling", SIZE / MiB / seconds, "MiB/s", directRef);
      report("  server peak RSS during it", await rss.stop(), "MiB");
      const wholeId = JSON.parse(created.body).id as number;

      // The same bytes in 4 MiB chunks through Ferry and through tus, one chunk at a time and 4 in
      // flight, alternating within each of CHUNKED_RUNS rounds (each run printed, medians
      // compared): on these shared machines one run can be 30% off. The server's CPU time per GiB
      // is read from /proc around each upload.
      const peers = await startPeers(ferry.database.dataDir);
      try {
        const total = Math.ceil(SIZE / CHUNK);
        const GiB = SIZE / (1024 * MiB);
        type Series = { mibs: number[]; cpu: number[]; rss: number };
        const series = (): Series => ({ mibs: [], cpu: [], rss: 0 });
        const ferry1 = series();
        const ferry4 = series();
        const raw1 = series();
        const raw4 = series();
        const tus1 = series();
        const tus4 = series();
        let chunkedId = 0;
        let tusIds: string[] = [];
        const measure = async (
          into: Series,
          target: number,
          label: string,
          upload: () => Promise<number>,
        ) => {
          const watched = await watchServer(target, upload);
          const mibs = watched.result;
          const cpu = watched.cpu / GiB;
          into.rss = Math.max(into.rss, watched.peakRss);
          into.mibs.push(mibs);
          into.cpu.push(cpu);
          console.log(
            `  ${label.padEnd(28)} ${mibs.toFixed(1).padStart(7)} MiB/s  ${cpu.toFixed(2)} CPU-s/GiB`,
          );
        };
        const tusRound = async (parallel: number) => {
          for (const id of tusIds) await rm(join(peers.directory, id), { force: true });
          const done = await uploadTus(agent4, peers.base, parallel);
          tusIds = done.ids;
          return done.mibs;
        };
        for (let run = 1; run <= CHUNKED_RUNS; run++) {
          await measure(ferry1, pid, `run ${run} Ferry, 1 in flight`, async () => {
            const done = await uploadInChunks(agent, ferry, requestId);
            chunkedId = done.id;
            return done.mibs;
          });
          await measure(tus1, peers.pid, `run ${run} tus, 1 in flight`, () => tusRound(1));
          await measure(raw1, pid, `run ${run} Ferry raw, 1 in flight`, async () => {
            const done = await uploadInChunks(agent, ferry, requestId, { raw: true });
            return done.mibs;
          });
          await measure(ferry4, pid, `run ${run} Ferry, 4 in flight`, async () => {
            const done = await uploadInChunks(agent4, ferry, requestId, { parallel: 4 });
            return done.mibs;
          });
          await measure(tus4, peers.pid, `run ${run} tus, 4 uploads at once`, () => tusRound(4));
          await measure(raw4, pid, `run ${run} Ferry raw, 4 in flight`, async () => {
            const done = await uploadInChunks(agent4, ferry, requestId, { parallel: 4, raw: true });
            return done.mibs;
          });
        }
        const r1 = median(raw1.mibs);
        const r4 = median(raw4.mibs);
        const f1 = median(ferry1.mibs);
        const f4 = median(ferry4.mibs);
        const t1 = median(tus1.mibs);
        const t4 = median(tus4.mibs);
        report(`upload in ${total} chunks of 4 MiB, 1 in flight, median`, f1, "MiB/s", ref);
        report("  same, against the ceiling in parts", f1, "MiB/s", partsRef);
        if (directRef) report("  same, against the direct I/O ceiling", f1, "MiB/s", directRef);
        report("  server CPU per GiB, median", median(ferry1.cpu), "s");
        report("  server peak RSS during them", ferry1.rss, "MiB");
        report(`upload in ${total} chunks of 4 MiB, 4 in flight, median`, f4, "MiB/s", ref);
        report("  against Ferry with 1 in flight", f4, "MiB/s", { label: "1 in flight", value: f1 });
        report("  server CPU per GiB, median", median(ferry4.cpu), "s");
        report("  server peak RSS during them", ferry4.rss, "MiB");
        report(`same with raw chunk bodies (PUTs as octet-stream), 1 in flight, median`, r1, "MiB/s", ref);
        report("  server CPU per GiB, median", median(raw1.cpu), "s");
        report("  server peak RSS during them", raw1.rss, "MiB");
        report(`same with raw chunk bodies, 4 in flight, median`, r4, "MiB/s", ref);
        report("  server CPU per GiB, median", median(raw4.cpu), "s");
        report("  server peak RSS during them", raw4.rss, "MiB");
        report("reference: @tus/server + file store, 4 MiB PATCHes, fsync, median", t1, "MiB/s");
        report("  tus CPU per GiB, median", median(tus1.cpu), "s");
        report("  tus server peak RSS during them", tus1.rss, "MiB");
        report("reference: tus, 4 uploads of a quarter at once, median", t4, "MiB/s");
        report("  tus CPU per GiB, median", median(tus4.cpu), "s");
        report("  tus server peak RSS during them", tus4.rss, "MiB");
        report("Ferry's chunked upload against tus (1 in flight each)", f1, "MiB/s", {
          label: "tus",
          value: t1,
        });
        report("Ferry 4 in flight against tus 1 in flight", f4, "MiB/s", {
          label: "tus 1 in flight",
          value: t1,
        });
        report("Ferry 4 in flight against tus 4 at once", f4, "MiB/s", { label: "tus 4 at once", value: t4 });
        report("Ferry's chunked upload, raw bodies, against tus (1 in flight each)", r1, "MiB/s", {
          label: "tus",
          value: t1,
        });
        report("Ferry 4 in flight, raw bodies, against tus 1 in flight", r4, "MiB/s", {
          label: "tus 1 in flight",
          value: t1,
        });
        report("Ferry raw bodies, 4 in flight against 1 in flight", r4, "MiB/s", {
          label: "1 in flight",
          value: r1,
        });
        report("Ferry 4 in flight, raw bodies, against tus 4 at once", r4, "MiB/s", {
          label: "tus 4 at once",
          value: t4,
        });

        // Downloads: Ferry's of the whole and of the chunked upload, and a plain node:http file
        // stream of a file tus stored (one whole upload of SIZE), alternating within each round
        // (each run printed, medians compared). Ferry reads its blobs with direct I/O, from the
        // disk; the plain stream reads through the page cache, where its file may still be.
        for (const id of tusIds) await rm(join(peers.directory, id), { force: true });
        const tusId = (await uploadTus(agent, peers.base, 1)).ids[0]!;
        const downloadWhole = series();
        const downloadChunked = series();
        const downloadPlain = series();
        const timedDownload = async (url: string, headers: Record<string, string>) => {
          const begun = performance.now();
          const got = await download(agent, url, headers);
          if (got !== SIZE) throw new Error(`${url} returned ${got} bytes`);
          return SIZE / MiB / ((performance.now() - begun) / 1000);
        };
        for (let run = 1; run <= CHUNKED_RUNS; run++) {
          await measure(downloadWhole, pid, `run ${run} Ferry, whole upload`, () =>
            timedDownload(`${ferry.base}/v1/media/${wholeId}/download`, ferry.headers),
          );
          await measure(downloadChunked, pid, `run ${run} Ferry, chunked upload`, () =>
            timedDownload(`${ferry.base}/v1/media/${chunkedId}/download`, ferry.headers),
          );
          await measure(downloadPlain, peers.pid, `run ${run} plain file stream`, () =>
            timedDownload(`${peers.base}/plain/${tusId}`, {}),
          );
        }
        const plainMbs = median(downloadPlain.mibs);
        report("download whole, median", median(downloadWhole.mibs), "MiB/s", ref);
        report("  server CPU per GiB, median", median(downloadWhole.cpu), "s");
        report("  server peak RSS during them", downloadWhole.rss, "MiB");
        report("download of the chunked upload, median", median(downloadChunked.mibs), "MiB/s", ref);
        report("  server CPU per GiB, median", median(downloadChunked.cpu), "s");
        report("  server peak RSS during them", downloadChunked.rss, "MiB");
        report("reference: plain node:http file stream, median", plainMbs, "MiB/s");
        report("  its server's CPU per GiB, median", median(downloadPlain.cpu), "s");
        report("Ferry's whole download against the plain stream", median(downloadWhole.mibs), "MiB/s", {
          label: "plain stream",
          value: plainMbs,
        });
      } finally {
        await peers.stop();
      }
    } finally {
      agent.destroy();
      agent4.destroy();
      await ferry.stop();
    }
  },
};
