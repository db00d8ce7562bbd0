/**
 * Totals a V8 CPU profile (`node --cpu-prof`, or a bench server with BENCH_CPU_PROF_DIR): self time
 * per function, and time per file or package counting each sample once per stack (inclusive).
 * Run: `node bin/run-ts.mjs scripts/cpuprofile-totals.ts FILE.cpuprofile [TOP]`.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: cpuprofile-totals.ts FILE.cpuprofile [TOP]");
  process.exit(2);
}
const top = Number(topArg ?? 40);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);

// Microseconds per node: a sample's time is the delta to the next sample.
const perNode = new Map<number, number>();
profile.samples.forEach((id, i) => {
  perNode.set(id, (perNode.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
});

/** The package (`pkg:name`), source file or node internal a frame belongs to. */
function fileOf(url: string): string {
  const i = url.lastIndexOf("node_modules/");
  if (i >= 0) {
    const parts = url.slice(i + "node_modules/".length).split("/");
    return `pkg:${parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  return url.replace(/^.*\//, "");
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
for (const [id, us] of perNode) {
  total += us;
  const frame = nodes.get(id)?.callFrame;
  if (!frame) continue;
  const key = `${frame.functionName || "(anonymous)"} ${fileOf(frame.url)}:${frame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parents.get(cur)) {
    const url = nodes.get(cur)?.callFrame.url ?? "";
    const f = url ? fileOf(url) : "";
    if (f && !seen.has(f)) {
      seen.add(f);
      inclusive.set(f, (inclusive.get(f) ?? 0) + us);
    }
  }
}

const print = (title: string, totals: Map<string, number>) => {
  console.log(`--- ${title}`);
  for (const [key, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`,
    );
  }
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
print("self time per function", self);
print("time per file or package (inclusive)", inclusive);
