import { appendFile } from "node:fs/promises";
import { AUDIT_RETENTION_JOB } from "../features/audit/audit-retention.service.js";
import { callbackJobHandlers } from "../features/callbacks/callbacks.job.js";
import { lifecycleJobHandlers } from "../features/lifecycle/lifecycle.job.js";
import { mediaJobHandlers } from "../features/media/media.job.js";
import { notificationJobHandlers } from "../features/notifications/notifications.job.js";
import type { JobHandler } from "../jobs/worker.js";
import type { Container } from "./container.js";

/**
 * Every job kind and its handler. Features add their kinds here. The `diagnostic.*` kinds exist
 * only when FERRY_TEST_JOBS=true: Ferry's own tests use them to prove the queue.
 */
export function buildJobHandlers(container: Container): Map<string, JobHandler> {
  const handlers = new Map<string, JobHandler>();
  // Audit retention (issue 8): prunes, then queues its next run; the first run is queued here when
  // a worker is built (no-op while AUDIT_RETENTION_DAYS is 0).
  handlers.set(AUDIT_RETENTION_JOB, (_payload, job) => container.auditRetention.runJob(job.id));
  container.auditRetention
    .ensureScheduled()
    .catch((err: Error) => container.logger.warn({ err: err.message }, "could not schedule audit retention"));
  // Callbacks (issue 6): outbox events → deliveries, one job per delivery attempt.
  for (const [kind, handler] of callbackJobHandlers(container.callbacks)) handlers.set(kind, handler);
  // Push expiry (issue 6): a recurring sweep, first queued here when a worker is built.
  for (const [kind, handler] of lifecycleJobHandlers(container.lifecycle, (err) =>
    container.logger.warn({ err: err.message }, "could not schedule the expiry sweep"),
  ))
    handlers.set(kind, handler);
  for (const [kind, handler] of notificationJobHandlers(container)) handlers.set(kind, handler);
  // Media (issue 4): blob deletion for every feature, and the recurring storage cleanup.
  for (const [kind, handler] of mediaJobHandlers(container.media, (err) =>
    container.logger.warn({ err: err.message }, "could not schedule the storage cleanup"),
  ))
    handlers.set(kind, handler);
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
