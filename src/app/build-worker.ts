import { Worker } from "../jobs/worker.js";
import type { Container } from "./container.js";
import { buildJobHandlers } from "./jobs.js";

/** Builds a worker over the container's queue with every registered job kind. */
export function buildWorker(container: Container): Worker {
  const { config } = container;
  return new Worker(
    container.jobs,
    buildJobHandlers(container),
    {
      concurrency: config.JOB_CONCURRENCY,
      leaseMs: config.JOB_LEASE_SECONDS * 1000,
      pollIntervalMs: config.JOB_POLL_INTERVAL_MS,
      listenUrl: container.database.dialect === "postgres" ? config.DATABASE_URL : undefined,
      retentionMs: config.JOB_RETENTION_HOURS * 3600_000,
    },
    container.logger.child({ component: "worker" }),
  );
}
