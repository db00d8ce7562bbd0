import type { JobHandler } from "../../jobs/worker.js";
import { type LifecycleService, SWEEP_JOB } from "./lifecycle.service.js";

/**
 * The lifecycle job kinds: `lifecycle.sweep` (expires due push requests, then queues itself again
 * LIFECYCLE_SWEEP_INTERVAL_SECONDS later). Also queues the first sweep when a worker is built.
 */
export function lifecycleJobHandlers(
  lifecycle: LifecycleService,
  onError: (err: Error) => void,
): [string, JobHandler][] {
  lifecycle.ensureSweepScheduled().catch(onError);
  return [[SWEEP_JOB, (_payload: unknown, job) => lifecycle.runSweepJob(job.id)]];
}
