import { type BenchModule, report, requestsPerSecond, startBenchFerry } from "./lib.js";

/** Foundation: authenticated GET (token verification, scope check, rate limit, audit write) vs the bare route. */
export const foundationBench: BenchModule = {
  name: "foundation",
  async run(ctx) {
    const ferry = await startBenchFerry();
    try {
      const rps = await requestsPerSecond(`${ferry.base}/v1/account/`, { headers: ferry.headers });
      report("authenticated GET /v1/account/ (with AAA-0010 audit write)", rps, "req/s", {
        label: "bare route",
        value: ctx.bareRps,
      });
      const health = await requestsPerSecond(`${ferry.base}/healthz`);
      report("unauthenticated GET /healthz (Ferry plugins, no auth)", health, "req/s", {
        label: "bare route",
        value: ctx.bareRps,
      });
    } finally {
      await ferry.stop();
    }
  },
};
