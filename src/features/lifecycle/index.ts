/**
 * The lifecycle feature: request state transitions with their effects (spec: States and
 * transitions) — push expiry by a recurring sweep (files destroyed) and pull completion by the
 * recipient — each with its audit entry and `request_complete` callback in one transaction.
 */
import type { Logger } from "pino";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { CallbackService } from "../callbacks/index.js";
import type { MediaService } from "../media/index.js";
import type { RequestRecords, RequestsService } from "../requests/index.js";
import { ExpirySweepJob, LifecycleService } from "./lifecycle.service.js";

export { type LifecycleService, MAX_RECEIVER_MESSAGE } from "./lifecycle.service.js";

/** Builds the lifecycle feature. */
export function createLifecycleFeature(deps: {
  database: Database;
  clock: Clock;
  logger: Logger;
  jobs: JobQueue;
  audit: AuditWriter;
  callbacks: CallbackService;
  records: RequestRecords;
  requests: RequestsService;
  media: MediaService;
  sweepIntervalSeconds: number;
}): Feature<LifecycleService> {
  const service = new LifecycleService(
    deps.database,
    deps.clock,
    deps.jobs,
    deps.audit,
    deps.callbacks,
    deps.records,
    deps.requests,
    deps.media,
    deps.logger,
    deps.sweepIntervalSeconds,
  );
  return {
    service,
    jobs: [handleJob(ExpirySweepJob, (_payload, job) => service.runSweepJob(job.id))],
    scheduleRecurringJobs: () => service.ensureSweepScheduled(),
  };
}
