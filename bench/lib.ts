/**
 * Benchmark helpers: servers in child processes, load from this process with autocannon, results
 * printed as figures and ratios against ceilings measured in the same run.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import autocannon from "autocannon";
import { CompiledQuery } from "kysely";
import type { Database } from "../src/db/database.js";
import { createTestDatabase, type TestDatabase } from "../test/helpers/db.js";
import {
  type FerryProcess,
  freePort,
  repoRoot,
  runFerry,
  spawnFerry,
  waitForHttp,
} from "../test/helpers/process.js";

/** Seconds each throughput measurement runs (BENCH_SECONDS, default 5). */
export const benchSeconds = Number(process.env.BENCH_SECONDS ?? 5);

/** A running Ferry server for benchmarks, with an owner's token. */
export interface BenchFerry {
  base: string;
  env: Record<string, string>;
  database: TestDatabase;
  process: FerryProcess;
  token: string;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts `ferry serve` on a fresh database of the current dialect with one account and a token. */
export async function startBenchFerry(extraEnv: Record<string, string> = {}): Promise<BenchFerry> {
  const database = await createTestDatabase();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...database.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_APPLICATION: "100000000",
    RATE_LIMIT_PER_IP: "100000000",
    ...extraEnv,
  };
  await runFerry(["admin", "create-account", "--email", "bench@example.com", "--json"], env);
  const app = JSON.parse(
    (
      await runFerry(
        ["admin", "create-app", "--email", "bench@example.com", "--name", "bench", "--json"],
        env,
      )
    ).stdout,
  );
  // BENCH_CPU_PROF_DIR: the server writes a V8 CPU profile there when it stops.
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const proc = spawnFerry(["serve"], env, profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []);
  let stopping = false;
  void proc.exited.then((code) => {
    if (!stopping) console.error(`ferry serve exited (${code}) during the bench:\n${proc.stderr()}`);
  });
  await waitForHttp(`${base}/readyz`, proc);
  const res = await fetch(`${base}/v1/auth/get_token/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: app.api_key, email: "bench@example.com" }),
  });
  const { token } = (await res.json()) as { token: string };
  return {
    base,
    env,
    database,
    process: proc,
    token,
    headers: { authorization: `JWT ${token}` },
    async stop() {
      stopping = true;
      proc.child.kill("SIGTERM");
      await proc.exited;
      await database.drop();
    },
  };
}

/** Starts the bare Fastify ceiling server; returns its URL and a stop function. */
export async function startBareServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [resolve(repoRoot, "bin/run-ts.mjs"), resolve(repoRoot, "bench/bare-server.ts")],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const port = await new Promise<number>((res, rej) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) res(Number(m[1]));
    });
    child.on("exit", () => rej(new Error("bare server exited")));
  });
  return {
    url: `http://127.0.0.1:${port}/bare`,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.on("exit", r));
    },
  };
}

/** Options of one load run. */
export interface LoadOptions {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  seconds?: number;
}

/** Requests per second (mean) of `url` under load; throws if any request failed or was non-2xx. */
export async function requestsPerSecond(url: string, opts: LoadOptions = {}): Promise<number> {
  const result = await autocannon({
    url,
    method: opts.method ?? "GET",
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 10,
    duration: opts.seconds ?? benchSeconds,
  });
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers under load`);
  }
  return result.requests.average;
}

/** Prints one figure line. */
export function report(
  label: string,
  value: number,
  unit: string,
  ratioTo?: { label: string; value: number },
): void {
  const ratio = ratioTo ? `   ratio to ${ratioTo.label}: ${(value / ratioTo.value).toFixed(3)}` : "";
  console.log(`${label.padEnd(58)} ${value.toFixed(value >= 100 ? 0 : 2).padStart(10)} ${unit}${ratio}`);
}

/** Context handed to each bench module: the shared ceilings of this run. */
export interface BenchContext {
  /** Requests/s of the bare Fastify route measured in this run. */
  bareRps: number;
}

/** A section of `npm run bench`. */
export interface BenchModule {
  name: string;
  run(ctx: BenchContext): Promise<void>;
}

/** Prints the engine's plan of a compiled query (EXPLAIN QUERY PLAN on SQLite, EXPLAIN ANALYZE on PostgreSQL). */
export async function printPlan(
  database: Database,
  label: string,
  query: { sql: string; parameters: readonly unknown[] },
): Promise<void> {
  const prefix =
    database.dialect === "sqlite" ? "EXPLAIN QUERY PLAN " : "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ";
  const res = await database.db.executeQuery(CompiledQuery.raw(prefix + query.sql, [...query.parameters]));
  const lines = (res.rows as Record<string, unknown>[]).map((r) =>
    database.dialect === "sqlite" ? String(r.detail) : String(r["QUERY PLAN"]),
  );
  console.log(`   plan (${label}):\n${lines.map((l) => `      ${l}`).join("\n")}`);
}

/** The median of a list of numbers (NaN when empty). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** The `p`th percentile (nearest rank, 0 < p ≤ 100) of a list of numbers (NaN when empty). */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

/** CPU seconds (user + system, every thread) the process `pid` has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
