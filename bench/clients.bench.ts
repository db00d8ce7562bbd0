/**
 * Clients: CLIENTS_BENCH_CLIENTS (default 20) clients at once, each uploading its own
 * CLIENTS_BENCH_MB (default 50) MiB file in 4 MiB chunks, one chunk in flight per client, each
 * through a keep-alive agent of its own: through Ferry (one draft push request per client; every
 * media is read back and must be `available` with all its bytes), then through `@tus/server` with
 * its file store (fsynced, bench/peers/tus-server.mjs) driven by the same client loop. The two
 * alternate for CLIENTS_BENCH_ROUNDS (default 1) rounds. Printed: the aggregate MiB/s of each and
 * Ferry's ratio to tus, the latency of every chunk (request sent to answer received) at p50 and
 * p99, each server's CPU seconds per GiB and its peak resident memory during its run, and whether
 * the targets (≥ 1.0 of tus, chunk p99 under 500 ms, peak RSS ≤ 200 MiB) are met. Ferry's chunks
 * after the first are raw application/octet-stream bodies, as the SDK sends them (ADR 0041);
 * CLIENTS_BENCH_BODY=multipart sends them as multipart forms instead. The run prints which.
 */
import { rm } from "node:fs/promises";
import { Agent } from "node:http";
import { join } from "node:path";
import { type BenchModule, median, percentile, report, startBenchFerry } from "./lib.js";
import {
  CHUNK,
  createDraftRequest,
  MiB,
  startPeers,
  tusUpload,
  uploadInChunks,
  watchServer,
} from "./media.bench.js";

const CLIENTS = Number(process.env.CLIENTS_BENCH_CLIENTS ?? 20);
const SIZE = Number(process.env.CLIENTS_BENCH_MB ?? 50) * MiB;
const ROUNDS = Number(process.env.CLIENTS_BENCH_ROUNDS ?? 1);
const RAW = (process.env.CLIENTS_BENCH_BODY ?? "raw") !== "multipart";
const GiB = 1024 * MiB;
const TARGET_RATIO = 1.0;
const TARGET_P99_MS = 500;
const TARGET_RSS_MIB = 200;

/** One round of one server: what the clients saw and what the server used. */
interface Round {
  mibs: number;
  p50: number;
  p99: number;
  cpuPerGiB: number;
  peakRss: number;
}

/**
 * Runs `upload` for every client at once, each with a keep-alive agent of its own holding one
 * socket, while watching the server process `pid`. `upload` pushes each chunk's latency (ms).
 */
async function allClients(
  pid: number,
  upload: (client: number, agent: Agent, latencies: number[]) => Promise<void>,
): Promise<Round> {
  const agents = Array.from({ length: CLIENTS }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  const latencies: number[] = [];
  try {
    const watched = await watchServer(pid, async () => {
      const started = performance.now();
      await Promise.all(agents.map((agent, client) => upload(client, agent, latencies)));
      return (performance.now() - started) / 1000;
    });
    const bytes = CLIENTS * SIZE;
    return {
      mibs: bytes / MiB / watched.result,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpuPerGiB: watched.cpu / (bytes / GiB),
      peakRss: watched.peakRss,
    };
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

function printRound(label: string, r: Round): void {
  console.log(
    `  ${label.padEnd(18)} ${r.mibs.toFixed(1).padStart(7)} MiB/s  chunk p50 ${r.p50.toFixed(0)} ms` +
      `  p99 ${r.p99.toFixed(0)} ms  ${r.cpuPerGiB.toFixed(2)} CPU-s/GiB  peak RSS ${r.peakRss.toFixed(0)} MiB`,
  );
}

/** Prints one server's figures: medians over the rounds, the peak RSS over all of them. */
function summary(name: string, rounds: Round[]): Round {
  const of = (pick: (r: Round) => number) => median(rounds.map(pick));
  const m: Round = {
    mibs: of((r) => r.mibs),
    p50: of((r) => r.p50),
    p99: of((r) => r.p99),
    cpuPerGiB: of((r) => r.cpuPerGiB),
    peakRss: Math.max(...rounds.map((r) => r.peakRss)),
  };
  const suffix = rounds.length > 1 ? `, median of ${rounds.length}` : "";
  report(`${name}, ${CLIENTS} clients × ${SIZE / MiB} MiB${suffix}`, m.mibs, "MiB/s");
  report(`  chunk latency p50${suffix}`, m.p50, "ms");
  report(`  chunk latency p99${suffix}`, m.p99, "ms");
  report(`  server CPU per GiB${suffix}`, m.cpuPerGiB, "s");
  report("  server peak RSS during the uploads", m.peakRss, "MiB");
  return m;
}

export const clientsBench: BenchModule = {
  name: "clients",
  async run() {
    const ferry = await startBenchFerry();
    const peers = await startPeers(ferry.database.dataDir);
    const pid = ferry.process.child.pid!;
    const chunks = Math.ceil(SIZE / CHUNK);
    console.log(
      `  ${CLIENTS} clients, each ${SIZE / MiB} MiB in ${chunks} chunks of 4 MiB, one in flight per client`,
    );
    console.log(
      `  Ferry's chunk PUTs: ${RAW ? "raw application/octet-stream bodies (as the SDK)" : "multipart/form-data"}`,
    );
    try {
      const ferryRounds: Round[] = [];
      const tusRounds: Round[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const requests = await Promise.all(Array.from({ length: CLIENTS }, () => createDraftRequest(ferry)));
        const mediaIds: number[] = [];
        const ferryRound = await allClients(pid, async (client, agent, latencies) => {
          const done = await uploadInChunks(agent, ferry, requests[client]!, {
            size: SIZE,
            latencies,
            raw: RAW,
          });
          mediaIds.push(done.id);
        });
        for (const id of mediaIds) {
          const res = await fetch(`${ferry.base}/v1/media/${id}/`, { headers: ferry.headers });
          const media = (await res.json()) as { state: string; bytes: number };
          if (media.state !== "available" || media.bytes !== SIZE)
            throw new Error(`media ${id} ended ${media.state} with ${media.bytes} bytes`);
        }
        printRound(`round ${round} Ferry`, ferryRound);
        ferryRounds.push(ferryRound);

        const tusIds: string[] = [];
        const tusRound = await allClients(peers.pid, async (_client, agent, latencies) => {
          tusIds.push(await tusUpload(agent, peers.base, SIZE, latencies));
        });
        printRound(`round ${round} tus`, tusRound);
        tusRounds.push(tusRound);
        for (const id of tusIds) {
          await rm(join(peers.directory, id), { force: true });
          await rm(join(peers.directory, `${id}.json`), { force: true });
        }
      }
      const f = summary("Ferry", ferryRounds);
      const t = summary("tus (file store, fsync)", tusRounds);
      report("Ferry against tus, aggregate MiB/s", f.mibs, "MiB/s", { label: "tus", value: t.mibs });
      const met = f.mibs / t.mibs >= TARGET_RATIO && f.p99 < TARGET_P99_MS && f.peakRss <= TARGET_RSS_MIB;
      console.log(
        `target (≥ ${TARGET_RATIO.toFixed(1)} of tus, chunk p99 < ${TARGET_P99_MS} ms, peak RSS ≤ ${TARGET_RSS_MIB} MiB): ${met ? "met" : "NOT met"}`,
      );
    } finally {
      await peers.stop();
      await ferry.stop();
    }
  },
};
