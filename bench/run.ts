/**
 * `npm run bench [-- section ...]`: measures the ceilings of this machine first, then each section,
 * printing figures and ratios. BENCH_SECONDS sets the length of each load run.
 */
import { testDialect } from "../test/helpers/db.js";
import { auditBench } from "./audit.bench.js";
import { callbacksBench } from "./callbacks.bench.js";
import { clientsBench } from "./clients.bench.js";
import { containersBench } from "./containers.bench.js";
import { dashboardBench } from "./dashboard.bench.js";
import { foundationBench } from "./foundation.bench.js";
import { type BenchModule, report, requestsPerSecond, startBareServer } from "./lib.js";
import { listsBench } from "./lists.bench.js";
import { mediaBench } from "./media.bench.js";
import { mediaNodesBench } from "./media-nodes.bench.js";
import { notificationsBench } from "./notifications.bench.js";
import { recipientBench } from "./recipient.bench.js";
import { requestsBench } from "./requests.bench.js";
import { sdkBench } from "./sdk.bench.js";

const modules: BenchModule[] = [
  foundationBench,
  auditBench,
  requestsBench,
  listsBench,
  dashboardBench,
  notificationsBench,
  callbacksBench,
  recipientBench,
  containersBench,
  mediaBench,
  mediaNodesBench,
  clientsBench,
  sdkBench,
];

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const selected = wanted.length ? modules.filter((m) => wanted.includes(m.name)) : modules;
console.log(
  `Ferry benchmarks: dialect ${testDialect}, node ${process.version}, sections: ${selected.map((m) => m.name).join(", ")}`,
);

const bare = await startBareServer();
let bareRps: number;
try {
  bareRps = await requestsPerSecond(bare.url);
  report("ceiling: bare Fastify route GET /bare", bareRps, "req/s");
} finally {
  await bare.stop();
}
for (const m of selected) {
  console.log(`\n== ${m.name}`);
  await m.run({ bareRps });
}
process.exit(0);
