/**
 * Resident memory of an idle `ferry serve` on its embedded defaults (SQLite and blobs in a fresh data
 * directory, the README's one-command start): starts the server, waits for /readyz and then 5 s,
 * reads VmRSS, RssAnon and RssFile from /proc/PID/status, stops it; 5 times (IDLE_RSS_RUNS), then
 * prints min / median / max in MiB. The compiled server is brought up to date first, so no measured start
 * builds it.
 *
 *   node bin/run-ts.mjs scripts/idle-rss.ts
 *
 * IDLE_RSS_NODE_ARGS adds node flags (the server then runs as `node <Ferry's flags> <these> bin/ferry.mjs`).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: a plain JavaScript module of the command-line entry, without type declarations.
import { compiledServer } from "../bin/compiled-server.mjs";
import { freePort, spawnFerry, waitForHttp } from "../test/helpers/process.js";

const runs = Number(process.env.IDLE_RSS_RUNS ?? 5);
const settleMs = Number(process.env.IDLE_RSS_SETTLE_MS ?? 5000);
const nodeArgs = (process.env.IDLE_RSS_NODE_ARGS ?? "").split(" ").filter(Boolean);
const fields = ["VmRSS", "RssAnon", "RssFile"] as const;
type Sample = Record<(typeof fields)[number], number>;

/** The process's resident sizes in MiB. */
async function sample(pid: number): Promise<Sample> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return Object.fromEntries(fields.map((f) => [f, kib(f) / 1024])) as Sample;
}

async function once(): Promise<Sample> {
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
    return await sample(proc.child.pid as number);
  } finally {
    proc.child.kill("SIGTERM");
    await proc.exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

// Build dist/ first if a source is newer, so no measured start compiles the bundle.
await (compiledServer as () => Promise<string>)();
const samples: Sample[] = [];
for (let i = 0; i < runs; i++) {
  const s = await once();
  samples.push(s);
  console.log(`run ${i + 1}: ${fields.map((f) => `${f} ${s[f].toFixed(1)}`).join("  ")} MiB`);
}
for (const f of fields) {
  const sorted = samples.map((s) => s[f]).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  console.log(
    `${f.padEnd(8)} min ${sorted[0]?.toFixed(1)}  median ${median.toFixed(1)}  max ${sorted.at(-1)?.toFixed(1)} MiB`,
  );
}
