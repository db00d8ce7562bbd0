import { randomInt } from "node:crypto";
import { type Selectable, sql } from "kysely";
import type { Database, Executor } from "../db/database.js";
import type { JobsTable } from "../db/schema.js";
import type { Clock } from "../shared/clock.js";
import { toTimestamp } from "../shared/time.js";
import type { EmptyPayload, JobKind } from "./job.js";

/** A claimed job as a handler sees it. */
export type JobRow = Selectable<JobsTable>;

/** Options of one enqueued job. */
export interface EnqueueOptions {
  /** Earliest time to run (default now). */
  runAt?: Date;
  /** Attempts before the job is marked dead (default from config). */
  maxAttempts?: number;
}

/** The PostgreSQL NOTIFY channel that wakes workers when jobs are committed. */
export const JOBS_CHANNEL = "ferry_jobs";

/** PostgreSQL: queues a NOTIFY of `kind` on the workers' channel, sent when the transaction commits. */
function notifyWorkers(kind: string) {
  return sql<string>`pg_notify(${JOBS_CHANNEL}, ${kind})`;
}

/**
 * The database-backed job queue (transactional outbox): jobs are rows written in the caller's
 * transaction, so they exist exactly when the change that caused them commits.
 */
export class JobQueue {
  private readonly localWakers = new Set<() => void>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly defaults: { maxAttempts: number; backoffBaseMs: number },
  ) {}

  /**
   * Adds a job inside `ex` (pass the transaction of the change that causes it). On PostgreSQL the
   * insert also queues a NOTIFY (in its RETURNING list: no statement of its own), delivered to
   * workers on commit.
   */
  async enqueue<P extends object>(
    ex: Executor,
    job: JobKind<P>,
    payload: P,
    options: EnqueueOptions = {},
  ): Promise<number> {
    const { kind } = job;
    const now = toTimestamp(this.clock.now());
    const row = await ex
      .insertInto("jobs")
      .values({
        kind,
        payload: JSON.stringify(payload),
        state: "queued",
        run_at: toTimestamp(options.runAt ?? this.clock.now()),
        attempts: 0,
        max_attempts: options.maxAttempts ?? this.defaults.maxAttempts,
        created: now,
        updated: now,
      })
      .returning("id")
      .$if(this.database.dialect === "postgres", (qb) => qb.returning(notifyWorkers(kind).as("notified")))
      .executeTakeFirstOrThrow();
    // In-process workers wake after the caller's commit (a microtask later is too early inside a transaction).
    setTimeout(() => this.wakeLocal(), 5).unref();
    return row.id;
  }

  /**
   * Queues a singleton job of `kind` at `runAt` unless a job of that kind is already queued or
   * running (other than `exceptJobId`: a recurring job scheduling its own next run). Atomic across
   * workers: one INSERT … WHERE NOT EXISTS, serialised per kind by an advisory lock on PostgreSQL
   * (SQLite serialises writers). Returns true when it queued a job.
   */
  async enqueueUnlessPending(
    ex: Executor,
    job: JobKind<EmptyPayload>,
    options: EnqueueOptions & { exceptJobId?: number } = {},
  ): Promise<boolean> {
    if (this.database.dialect === "postgres" && !ex.isTransaction) {
      return ex.transaction().execute((trx) => this.enqueueUnlessPending(trx, job, options));
    }
    const { kind } = job;
    if (this.database.dialect === "postgres") {
      await sql`select pg_advisory_xact_lock(hashtext(${`ferry-job:${kind}`}))`.execute(ex);
    }
    const now = toTimestamp(this.clock.now());
    const runAt = toTimestamp(options.runAt ?? this.clock.now());
    const maxAttempts = options.maxAttempts ?? this.defaults.maxAttempts;
    // On PostgreSQL the NOTIFY is queued only when a row is inserted (it is in the RETURNING list).
    const result = await sql`
      insert into jobs (kind, payload, state, run_at, attempts, max_attempts, created, updated)
      select ${kind}, '{}', 'queued', ${runAt}, 0, ${maxAttempts}, ${now}, ${now}
      where not exists (
        select 1 from jobs where kind = ${kind} and state in ('queued', 'running') and id <> ${options.exceptJobId ?? 0}
      )${this.database.dialect === "postgres" ? sql` returning ${notifyWorkers(kind)}` : sql``}`.execute(ex);
    const queued = Number(result.numAffectedRows ?? 0) > 0;
    if (queued) setTimeout(() => this.wakeLocal(), 5).unref();
    return queued;
  }

  /** Registers an in-process wake-up callback; returns a function that removes it. */
  onEnqueue(wake: () => void): () => void {
    this.localWakers.add(wake);
    return () => this.localWakers.delete(wake);
  }

  private wakeLocal(): void {
    for (const wake of this.localWakers) wake();
  }

  /**
   * Claims up to `limit` runnable jobs for `workerId`: queued jobs that are due, and running jobs
   * whose lease expired (their worker died). PostgreSQL uses FOR UPDATE SKIP LOCKED so workers never
   * take the same job; SQLite reads the ids, then updates only those whose state and time still match.
   * `expired: false` skips the expired leases (a worker looks for them once per poll interval);
   * `ex` claims inside that transaction (the claim takes effect when it commits).
   */
  async claim(
    workerId: string,
    limit: number,
    leaseMs: number,
    kinds?: string[],
    options: { expired?: boolean; ex?: Executor } = {},
  ): Promise<JobRow[]> {
    const ex = options.ex ?? this.database.db;
    const now = this.clock.now();
    const nowTs = toTimestamp(now);
    const leaseUntil = toTimestamp(new Date(now.getTime() + leaseMs));
    // Two index range scans instead of one sorted OR: jobs whose worker died first (rare), then
    // due jobs in run_at order. Each pick is claimed by its own UPDATE so SKIP LOCKED applies.
    const expired =
      options.expired === false
        ? []
        : await this.claimWhere(
            ex,
            workerId,
            limit,
            leaseUntil,
            nowTs,
            kinds,
            "running",
            "locked_until",
            "<",
          );
    if (expired.length >= limit) return expired;
    const due = await this.claimWhere(
      ex,
      workerId,
      limit - expired.length,
      leaseUntil,
      nowTs,
      kinds,
      "queued",
      "run_at",
      "<=",
    );
    return [...expired, ...due].sort((a, b) => a.id - b.id);
  }

  private async claimWhere(
    ex: Executor,
    workerId: string,
    limit: number,
    leaseUntil: string,
    nowTs: string,
    kinds: string[] | undefined,
    state: "queued" | "running",
    column: "run_at" | "locked_until",
    op: "<" | "<=",
  ): Promise<JobRow[]> {
    const pick = ex
      .selectFrom("jobs")
      .select("id")
      .where("state", "=", state)
      .where(column, op, nowTs)
      .$if(kinds !== undefined, (q) => q.where("kind", "in", kinds ?? []))
      .orderBy(column)
      .orderBy("id")
      .limit(limit)
      .$if(this.database.dialect === "postgres", (q) => q.forUpdate().skipLocked());
    const update = ex.updateTable("jobs").set((eb) => ({
      state: "running",
      locked_by: workerId,
      locked_until: leaseUntil,
      attempts: eb("attempts", "+", 1),
      updated: nowTs,
    }));
    if (this.database.dialect === "postgres") return update.where("id", "in", pick).returningAll().execute();
    // SQLite runs an UPDATE whose WHERE reads its own table in two passes, at about twice the cost
    // of reading the ids first and updating those. The UPDATE checks the pick's conditions again, so
    // a job another process claimed in between is left out; an empty queue costs no write at all.
    const ids = (await pick.execute()).map((row) => row.id);
    if (ids.length === 0) return [];
    return update
      .where("id", "in", ids)
      .where("state", "=", state)
      .where(column, op, nowTs)
      .returningAll()
      .execute();
  }

  /** Deletes finished jobs (done or dead) older than `olderThanMs`; returns how many. */
  async purgeFinished(olderThanMs: number): Promise<number> {
    const cutoff = toTimestamp(new Date(this.clock.now().getTime() - olderThanMs));
    const res = await this.database.db
      .deleteFrom("jobs")
      .where("state", "in", ["done", "dead"])
      .where("finished_at", "<", cutoff)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Extends the lease of a job this worker still holds; false when the lease was lost. */
  async heartbeat(jobId: number, workerId: string, leaseMs: number): Promise<boolean> {
    const until = toTimestamp(new Date(this.clock.now().getTime() + leaseMs));
    const res = await this.database.db
      .updateTable("jobs")
      .set({ locked_until: until })
      .where("id", "=", jobId)
      .where("locked_by", "=", workerId)
      .where("state", "=", "running")
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Marks a job done (only if this worker still holds it), in `ex` when given. */
  async complete(jobId: number, workerId: string, ex: Executor = this.database.db): Promise<void> {
    const now = toTimestamp(this.clock.now());
    await ex
      .updateTable("jobs")
      .set({ state: "done", finished_at: now, updated: now, locked_until: null, last_error: null })
      .where("id", "=", jobId)
      .where("locked_by", "=", workerId)
      .execute();
  }

  /**
   * Whether a finished job should claim the next one in the transaction that completes it. On
   * SQLite that spares a commit per job, written on the request thread. PostgreSQL commits on the
   * server, and there the claim inside the outcome's transaction made delivery slightly slower
   * (ADR 0049), so its workers claim from their loop.
   */
  get claimsOnCompletion(): boolean {
    return this.database.dialect === "sqlite";
  }

  /** Marks a job done and claims up to `limit` due jobs for the same worker in one transaction. */
  async completeAndClaim(
    jobId: number,
    workerId: string,
    claim: { limit: number; leaseMs: number; kinds?: string[] },
  ): Promise<JobRow[]> {
    return this.database.db.transaction().execute(async (trx) => {
      await this.complete(jobId, workerId, trx);
      return this.claim(workerId, claim.limit, claim.leaseMs, claim.kinds, { expired: false, ex: trx });
    });
  }

  /** Which of `jobIds` are running under `workerId`'s lease (after a transaction of unknown outcome). */
  async heldBy(jobIds: number[], workerId: string): Promise<JobRow[]> {
    if (jobIds.length === 0) return [];
    return this.database.db
      .selectFrom("jobs")
      .selectAll()
      .where("id", "in", jobIds)
      .where("locked_by", "=", workerId)
      .where("state", "=", "running")
      .execute();
  }

  /**
   * Records a failed attempt: back to queued with exponential backoff and jitter, or dead after
   * max_attempts (or at once when `permanent`). `retryAt` overrides the computed delay. A job
   * already done (its handler failed after its result committed) stays done.
   */
  async fail(
    job: JobRow,
    workerId: string,
    error: string,
    opts: { permanent?: boolean; retryAt?: Date } = {},
  ) {
    const now = this.clock.now();
    const dead = opts.permanent === true || job.attempts >= job.max_attempts;
    const delay = this.defaults.backoffBaseMs * 2 ** Math.max(0, job.attempts - 1);
    const jittered = delay / 2 + randomInt(0, Math.max(1, Math.floor(delay / 2)));
    const runAt = opts.retryAt ?? new Date(now.getTime() + jittered);
    await this.database.db
      .updateTable("jobs")
      .set({
        state: dead ? "dead" : "queued",
        run_at: dead ? job.run_at : toTimestamp(runAt),
        last_error: error.slice(0, 2000),
        locked_by: null,
        locked_until: null,
        finished_at: dead ? toTimestamp(now) : null,
        updated: toTimestamp(now),
      })
      .where("id", "=", job.id)
      .where("locked_by", "=", workerId)
      .where("state", "=", "running")
      .execute();
  }

  /** Gives a job back untouched (graceful shutdown): queued again, this attempt not counted. */
  async release(jobId: number, workerId: string): Promise<void> {
    await this.database.db
      .updateTable("jobs")
      .set((eb) => ({
        state: "queued",
        locked_by: null,
        locked_until: null,
        attempts: eb("attempts", "-", 1),
        updated: toTimestamp(this.clock.now()),
      }))
      .where("id", "=", jobId)
      .where("locked_by", "=", workerId)
      .where("state", "=", "running")
      .execute();
  }
}
