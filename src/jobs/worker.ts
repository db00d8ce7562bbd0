import { hostname } from "node:os";
import type pg from "pg";
import type { Logger } from "pino";
import { loadPg } from "../db/database.js";
import { randomId } from "../shared/ids.js";
import type { JobHandler } from "./job.js";
import { JOBS_CHANNEL, type JobQueue, type JobRow } from "./queue.js";

/** What a job handler may tell the worker besides success (return) or a retryable failure (throw). */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentJobError";
  }
}

/** Worker options from config. */
export interface WorkerOptions {
  concurrency: number;
  leaseMs: number;
  pollIntervalMs: number;
  /** PostgreSQL URL to LISTEN for wake-ups; undefined on SQLite. */
  listenUrl?: string | undefined;
  /** Finished jobs older than this are deleted (checked every 10 minutes); undefined keeps them. */
  retentionMs?: number | undefined;
}

const PURGE_EVERY_MS = 10 * 60_000;

/** What a finished job leaves its slot to: the jobs claimed with its completion, if any. */
interface HandOff {
  next: JobRow[];
  /** The claim with its completion found no due job. */
  queueEmpty: boolean;
}

/**
 * Runs jobs from the queue: claims up to `concurrency` at a time, heartbeats their leases, retries
 * failures with backoff, wakes on NOTIFY (PostgreSQL) or in-process enqueue, and polls otherwise.
 */
export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomId(4)}`;
  private readonly running = new Map<number, Promise<void>>();
  private readonly handlers = new Map<string, JobHandler>();
  private readonly kinds: string[];
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Set by a wake-up that arrives while the loop is claiming, so it is not lost. */
  private wakeRequested = false;
  private listener: pg.Client | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly queue: JobQueue,
    handlers: readonly JobHandler[],
    private readonly options: WorkerOptions,
    private readonly logger: Logger,
  ) {
    for (const handler of handlers) {
      if (this.handlers.has(handler.kind)) throw new Error(`Two handlers for job kind ${handler.kind}`);
      this.handlers.set(handler.kind, handler);
    }
    this.kinds = [...this.handlers.keys()];
  }

  /** Starts the claim loop (and the PostgreSQL listener). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.queue.onEnqueue(() => this.requestWake());
    if (this.options.listenUrl) await this.listen(this.options.listenUrl);
    this.loop = this.run();
  }

  private async listen(url: string): Promise<void> {
    const client = new (loadPg().Client)({ connectionString: url });
    client.on("error", (err) => this.logger.warn({ err: err.message }, "job listener connection lost"));
    client.on("notification", () => this.requestWake());
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
      this.listener = client;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "job listener unavailable; polling only");
      await client.end().catch(() => {});
    }
  }

  private requestWake(): void {
    this.wakeRequested = true;
    this.wake?.();
  }

  private lastPurge = 0;
  private lastExpiredScan = 0;

  private purgeIfDue(): void {
    const retention = this.options.retentionMs;
    if (retention === undefined || Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    // Idempotent: several workers purging at once delete the same rows once.
    void this.queue
      .purgeFinished(retention)
      .catch((err: Error) => this.logger.warn({ err: err.message }, "could not purge finished jobs"));
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.wakeRequested = false;
      this.purgeIfDue();
      const free = this.options.concurrency - this.running.size;
      let claimed: JobRow[] = [];
      if (free > 0) {
        try {
          // Expired leases (a worker died) are rare and wait a lease anyway: looking for them once
          // per poll interval, not at every claim, spares a statement per job while jobs flow.
          const expired = Date.now() - this.lastExpiredScan >= this.options.pollIntervalMs;
          if (expired) this.lastExpiredScan = Date.now();
          claimed = await this.queue.claim(this.id, free, this.options.leaseMs, this.kinds, { expired });
        } catch (err) {
          this.logger.error({ err: (err as Error).message }, "job claim failed");
        }
      }
      for (const job of claimed) this.begin(job);
      if ((claimed.length === free && free > 0) || this.wakeRequested) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollIntervalMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  /** Runs a claimed job in a slot of its own, then starts what it handed over or wakes the loop. */
  private begin(job: JobRow): void {
    const p = this.execute(job).then(async ({ next, queueEmpty }) => {
      this.running.delete(job.id);
      if (this.stopped) {
        // Claimed as the worker began to stop: given back for another worker to take at once.
        for (const row of next) await this.queue.release(row.id, this.id).catch(() => {});
        return;
      }
      for (const row of next) this.begin(row);
      // A hand-off that found the queue empty needs no claim: new jobs wake the loop themselves.
      if (!queueEmpty) this.requestWake();
    });
    this.running.set(job.id, p);
  }

  /**
   * Runs one job. On SQLite a job that succeeds hands its slot over: the transaction that marks it
   * done also claims the next due job, so a worker with jobs waiting commits once per job, not twice.
   */
  private async execute(job: JobRow): Promise<HandOff> {
    const handler = this.handlers.get(job.kind);
    const log = this.logger.child({ job: job.id, kind: job.kind, attempt: job.attempts });
    const beat = setInterval(
      () => void this.queue.heartbeat(job.id, this.id, this.options.leaseMs).catch(() => {}),
      Math.max(200, Math.floor(this.options.leaseMs / 3)),
    );
    const claim = { limit: 1, leaseMs: this.options.leaseMs, kinds: this.kinds };
    let handOff: HandOff = { next: [], queueEmpty: false };
    try {
      if (!handler) throw new PermanentJobError(`No handler for job kind ${job.kind}`);
      let completed = false;
      await handler.run(JSON.parse(job.payload), job, {
        complete: async (ex) => {
          await this.queue.complete(job.id, this.id, ex);
          completed = true;
          if (this.stopped || !this.queue.claimsOnCompletion) return;
          const next = await this.queue.claim(this.id, claim.limit, claim.leaseMs, claim.kinds, {
            expired: false,
            ex,
          });
          handOff = { next, queueEmpty: next.length === 0 };
        },
      });
      if (!completed) {
        if (this.stopped && this.aborted.has(job.id)) return handOff;
        if (this.stopped || !this.queue.claimsOnCompletion) await this.queue.complete(job.id, this.id);
        else {
          const next = await this.queue.completeAndClaim(job.id, this.id, claim);
          handOff = { next, queueEmpty: next.length === 0 };
        }
      }
      log.debug("job done");
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const permanent = err instanceof PermanentJobError;
      log.warn({ err: message, permanent }, "job failed");
      // The handler failed after completing in its own transaction: whether that transaction (and
      // the claim in it) committed is unknown, so only jobs still leased to this worker are run.
      const ids = handOff.next.map((row) => row.id);
      handOff = { next: await this.queue.heldBy(ids, this.id).catch(() => []), queueEmpty: false };
      await this.queue.fail(job, this.id, message, { permanent }).catch((e) => {
        log.error({ err: (e as Error).message }, "could not record job failure");
      });
    } finally {
      clearInterval(beat);
    }
    return handOff;
  }

  private readonly aborted = new Set<number>();

  /**
   * Stops claiming, waits up to `graceMs` for running jobs, then releases the ones still running
   * so another worker takes them at once.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.wake?.();
    await this.loop;
    const pending = [...this.running.entries()];
    const all = Promise.allSettled(pending.map(([, p]) => p));
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref()),
    ]);
    if (timedOut) {
      for (const [id] of this.running) {
        this.aborted.add(id);
        await this.queue.release(id, this.id).catch(() => {});
      }
    }
    await this.listener?.end().catch(() => {});
  }

  /** Jobs currently running in this worker. */
  get activeCount(): number {
    return this.running.size;
  }
}
