/**
 * Resident memory of an idle `ferry serve` on its embedded defaults (SQLite and blobs in a fresh data
 * directory, the README's one-command start): starts the server, waits for /readyz, reads VmRSS,
 * RssAnon and RssFile from /proc/PID/status (and Children: the VmRSS of any process the server started,
 * which should be none) 5 s later (IDLE_RSS_SETTLE_MS) and again once settled,
 * 20 s after /readyz (IDLE_RSS_SETTLED_MS), stops it; 5 times (IDLE_RSS_RUNS), then prints min /
 * median / max in MiB of each. "Settled" is after V8's memory reducer, which runs its first
 * compacting collections about 8 s after a process starts and returns start-up's garbage. The
 * compiled server is brought up to date first, so no measured start builds it.
 *
 *   node bin/run-ts.mjs scripts/idle-rss.ts
 *
 * IDLE_RSS_NODE_ARGS adds node flags (the server then runs as `node <Ferry's flags> <these> bin/ferry.mjs`).
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: a plain JavaScript module of the command-line entry, without type declarations.
import { compiledServer } from "../bin/compiled-server.mjs";
import { freePort, spawnFerry, waitForHttp } from "../test/helpers/process.js";

const runs = Number(process.env.IDLE_RSS_RUNS ?? 5);
const settleMs = Number(process.env.IDLE_RSS_SETTLE_MS ?? 5000);
const settledMs = Math.max(settleMs, Number(process.env.IDLE_RSS_SETTLED_MS ?? 20000));
const nodeArgs = (process.env.IDLE_RSS_NODE_ARGS ?? "").split(" ").filter(Boolean);
const fields = ["VmRSS", "RssAnon", "RssFile", "Children"] as const;
type Sample = Record<(typeof fields)[number], number>;

/** Resident size in KiB of `field` in /proc/PID/status. */
async function statusKib(pid: string | number, field: string): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
}

/** PIDs of the processes `pid` started, and of theirs. */
async function descendants(pid: string | number): Promise<string[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => []);
  const children: string[] = [];
  for (const tid of tasks) {
    const list = await readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "");
    children.push(...list.split(" ").filter(Boolean));
  }
  const nested = await Promise.all(children.map(descendants));
  return [...children, ...nested.flat()];
}

/** The server's resident sizes in MiB, and the VmRSS of any process it started. */
async function sample(pid: number): Promise<Sample> {
  const [vm, anon, file] = await Promise.all(["VmRSS", "RssAnon", "RssFile"].map((f) => statusKib(pid, f)));
  const children = await Promise.all((await descendants(pid)).map((child) => statusKib(child, "VmRSS")));
  const total = children.reduce((sum, kib) => sum + kib, 0);
  return { VmRSS: vm! / 1024, RssAnon: anon! / 1024, RssFile: file! / 1024, Children: total / 1024 };
}

async function once(): Promise<[Sample, Sample]> {
  const dataDir = await mkdtemp(join(tmpdir(), "ferry-idle-rss-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proc = spawnFerry(
    ["serve"],
    { FERRY_DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", PUBLIC_BASE_URL: base },
    nodeArgs,
  );
  try {
    await waitForHttp(`${base}/readyz`, proc);
    await new Promise((r) => setTimeout(r, settleMs));
    const soon = await sample(proc.child.pid as number);
    await new Promise((r) => setTimeout(r, settledMs - settleMs));
    return [soon, await sample(proc.child.pid as number)];
  } finally {
    proc.child.kill("SIGTERM");
    await proc.exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

// Build dist/ first if a source is newer, so no measured start compiles the bundle.
await (compiledServer as () => Promise<string>)();
const soon: Sample[] = [];
const settled: Sample[] = [];
const line = (s: Sample) => fields.map((f) => `${f} ${s[f].toFixed(1)}`).join("  ");
for (let i = 0; i < runs; i++) {
  const [a, b] = await once();
  soon.push(a);
  settled.push(b);
  console.log(
    `run ${i + 1}: after ${settleMs / 1000} s: ${line(a)} MiB; after ${settledMs / 1000} s: ${line(b)} MiB`,
  );
}
for (const [label, samples] of [
  [`${settleMs / 1000} s after ready`, soon],
  [`settled, ${settledMs / 1000} s after ready`, settled],
] as const) {
  console.log(label);
  for (const f of fields) {
    const sorted = samples.map((s) => s[f]).sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    console.log(
      `  ${f.padEnd(8)} min ${sorted[0]?.toFixed(1)}  median ${median.toFixed(1)}  max ${sorted.at(-1)?.toFixed(1)} MiB`,
    );
  }
}
