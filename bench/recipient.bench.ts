/**
 * Recipient pages: push page responses per second (HTML rendered per call, audit entries
 * AAA-0011 and ABB-0020 written per call) as a ratio to the bare Fastify route, plus the page's
 * HTML size and the gzipped weight of the first-party JS and CSS.
 */
import { gzipSync } from "node:zlib";
import { type BenchModule, report, requestsPerSecond, startBenchFerry } from "./lib.js";

export const recipientBench: BenchModule = {
  name: "recipient",
  async run({ bareRps }) {
    const ferry = await startBenchFerry({
      RECIPIENT_RATE_LIMIT_PER_IP: "100000000",
      RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: "100000000",
    });
    try {
      const res = await fetch(`${ferry.base}/v1/request/`, {
        method: "POST",
        headers: { ...ferry.headers, "content-type": "application/json" },
        body: JSON.stringify({ type: "push", message: "Your documents are ready." }),
      });
      const { identifier } = (await res.json()) as { identifier: string };
      const url = `${ferry.base}/r/${identifier}/`;
      const html = await (await fetch(url)).text();
      report("push page HTML size", html.length / 1024, "KB (target < 30)");
      let gz = 0;
      for (const asset of ["/static/recipient.js", "/static/recipient.css"]) {
        gz += gzipSync(Buffer.from(await (await fetch(`${ferry.base}${asset}`)).arrayBuffer())).length;
      }
      report("first-party JS + CSS gzipped", gz / 1024, "KB (target < 150)");
      const rps = await requestsPerSecond(url);
      report("GET /r/<identifier>/ (push page)", rps, "req/s", { label: "bare route", value: bareRps });
    } finally {
      await ferry.stop();
    }
  },
};
