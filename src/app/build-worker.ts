import type { JobHandler } from "../jobs/job.js";
import { Worker } from "../jobs/worker.js";
import type { Ferry } from "./ferry.js";

/**
 * Builds a worker over the queue with every feature's job kinds (and `extraJobs`, for job kinds that
 * only tests define), and queues the features' recurring jobs.
 */
export async function buildWorker(ferry: Ferry, extraJobs: readonly JobHandler[] = []): Promise<Worker> {
  const { config } = ferry;
  await ferry.scheduleRecurringJobs();
  return new Worker(
    ferry.jobs,
    [...ferry.jobHandlers, ...extraJobs],
    {
      concurrency: config.JOB_CONCURRENCY,
      leaseMs: config.JOB_LEASE_SECONDS * 1000,
      pollIntervalMs: config.JOB_POLL_INTERVAL_MS,
      listenUrl: ferry.database.dialect === "postgres" ? config.DATABASE_URL : undefined,
      retentionMs: config.JOB_RETENTION_HOURS * 3600_000,
    },
    ferry.logger.child({ component: "worker" }),
  );
}
