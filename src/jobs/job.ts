import type { Executor } from "../db/database.js";
import type { JobRow } from "./queue.js";

/**
 * A job kind and the type of its payload, defined once by the feature that handles it and imported
 * by every feature that enqueues it, so both sides agree on the name and the shape.
 */
export interface JobKind<P> {
  readonly kind: string;
  /** Never set: carries the payload type for the compiler only. */
  readonly payload?: P;
}

/** Defines a job kind: `export const DeleteBlobsJob = defineJob<{ blobs: BlobRef[] }>("blobs.delete")`. */
export function defineJob<P extends object>(kind: string): JobKind<P> {
  return { kind };
}

/** What the worker offers a running job besides its row. */
export interface JobContext {
  /**
   * Marks the job done inside `ex`, the transaction that records the job's result, so the result
   * and the completion commit together (one write transaction instead of two); the worker then does
   * not complete the job again, and on SQLite claims its next job in `ex` too. Without it, the worker
   * completes the job when the handler returns.
   */
  complete(ex: Executor): Promise<void>;
}

/** A job kind's handler, as the worker runs it. Handlers must be idempotent: a job may run twice. */
export interface JobHandler {
  readonly kind: string;
  run(payload: unknown, job: JobRow, context?: JobContext): Promise<void>;
}

/** Pairs a job kind with its typed handler. */
export function handleJob<P extends object>(
  job: JobKind<P>,
  run: (payload: P, job: JobRow, context?: JobContext) => Promise<void>,
): JobHandler {
  return { kind: job.kind, run: (payload, row, context) => run(payload as P, row, context) };
}

/** A job kind with nothing in its payload (recurring sweeps and cleanups). */
export type EmptyPayload = Record<string, never>;
