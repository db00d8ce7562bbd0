import { appendFile } from "node:fs/promises";
import type { JobHandler } from "../jobs/worker.js";
import type { Container } from "./container.js";

/**
 * Every job kind and its handler. Features add their kinds here. The `diagnostic.*` kinds exist
 * only when FERRY_TEST_JOBS=true: Ferry's own tests use them to prove the queue.
 */
export function buildJobHandlers(container: Container): Map<string, JobHandler> {
  const handlers = new Map<string, JobHandler>();
  if (container.config.FERRY_TEST_JOBS) {
    // Appends "start <id>" and "end <id>" lines to a file, with a pause between, so tests can see
    // which jobs ran, how often and whether two ever overlapped.
    handlers.set(
      "diagnostic.record",
      async (payload: { file: string; delayMs?: number; failTimes?: number }, job) => {
        await appendFile(payload.file, `start ${job.id} ${process.pid} ${Date.now()}\n`);
        if (payload.delayMs) await new Promise((r) => setTimeout(r, payload.delayMs));
        if (payload.failTimes && job.attempts <= payload.failTimes)
          throw new Error(`planned failure ${job.attempts}`);
        await appendFile(payload.file, `end ${job.id} ${process.pid} ${Date.now()}\n`);
      },
    );
  }
  return handlers;
}
