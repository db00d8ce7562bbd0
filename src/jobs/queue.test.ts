import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createTestApp, type TestApp } from "../../test/helpers/app.js";
import { DiagnosticRecordJob, diagnosticRecordHandler } from "../../test/helpers/diagnostic-jobs.js";
import { eventually, type FerryProcess, spawnDiagnosticWorker } from "../../test/helpers/process.js";
import { buildWorker } from "../app/build-worker.js";
import { toTimestamp } from "../shared/time.js";
import { defineJob, type EmptyPayload, handleJob, type JobHandler } from "./job.js";
import { JobQueue } from "./queue.js";
import { PermanentJobError, Worker } from "./worker.js";

const PermanentJob = defineJob<EmptyPayload>("custom.permanent");
const DelaysJob = defineJob<EmptyPayload>("custom.delays");
const PurgeJob = defineJob<EmptyPayload>("custom.purge");
const SweepJob = defineJob<EmptyPayload>("custom.sweep");
const FlowJob = defineJob<{ n: number }>("custom.flow");
const InTransactionJob = defineJob<EmptyPayload>("custom.in-transaction");

/** Lines of a diagnostic.record file as [event, jobId, pid, ms]. */
function readRecord(file: string): { event: string; job: number; pid: number; at: number }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [event, job, pid, at] = line.split(" ");
      return { event: event ?? "", job: Number(job), pid: Number(pid), at: Number(at) };
    });
}

/** A worker of `handlers` on `queue` with a one-minute lease and quiet logs. */
function workerOn(
  queue: JobQueue,
  handlers: JobHandler[],
  options: { concurrency: number; pollIntervalMs: number },
): Worker {
  return new Worker(queue, handlers, { leaseMs: 60_000, ...options }, pino({ level: "silent" }));
}

describe("job queue", () => {
  let t: TestApp;
  let dir: string;
  const quiet = pino({ level: "silent" });

  beforeAll(async () => {
    t = await createTestApp({
      JOB_POLL_INTERVAL_MS: "50",
      JOB_BACKOFF_BASE_MS: "10",
    });
    dir = mkdtempSync(join(tmpdir(), "ferry-jobs-"));
  });
  afterAll(async () => t?.close());

  const worker = async (handlers?: JobHandler[]) =>
    handlers
      ? new Worker(t.ferry.jobs, handlers, { concurrency: 2, leaseMs: 5000, pollIntervalMs: 50 }, quiet)
      : buildWorker(t.ferry, [diagnosticRecordHandler]);

  it("runs a job committed with its transaction exactly once", async () => {
    const file = join(dir, "once.log");
    const { db } = t.ferry.database;
    const jobId = await db.transaction().execute(async (trx) => {
      await trx
        .insertInto("accounts")
        .values({ email: "job-owner@example.com", name: "", settings: "{}", created: "x", updated: "x" })
        .execute();
      return t.ferry.jobs.enqueue(trx, DiagnosticRecordJob, { file });
    });
    const w = await worker();
    await w.start();
    await eventually(
      async () =>
        (await db.selectFrom("jobs").select("state").where("id", "=", jobId).executeTakeFirst())?.state ===
        "done",
    );
    await new Promise((r) => setTimeout(r, 200));
    await w.stop();
    expect(readRecord(file).map((r) => `${r.event} ${r.job}`)).toEqual([`start ${jobId}`, `end ${jobId}`]);
  });

  it("leaves no job when the transaction rolls back", async () => {
    const { db } = t.ferry.database;
    const before = await db
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    await expect(
      db.transaction().execute(async (trx) => {
        await t.ferry.jobs.enqueue(trx, DiagnosticRecordJob, { file: join(dir, "never.log") });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    const after = await db
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    expect(existsSync(join(dir, "never.log"))).toBe(false);
  });

  it("retries failures with backoff, then succeeds; permanent failures and exhausted attempts go dead", async () => {
    const { db } = t.ferry.database;
    const file = join(dir, "retry.log");
    const retried = await t.ferry.jobs.enqueue(db, DiagnosticRecordJob, { file, failTimes: 2 });
    const exhausted = await t.ferry.jobs.enqueue(
      db,
      DiagnosticRecordJob,
      { file: join(dir, "x.log"), failTimes: 99 },
      { maxAttempts: 3 },
    );
    const w = await worker();
    await w.start();
    await eventually(async () => {
      // Retries are scheduled on the fixed clock: move it past each backoff.
      t.clock.advance(1000);
      const rows = await db
        .selectFrom("jobs")
        .select(["id", "state"])
        .where("id", "in", [retried, exhausted])
        .execute();
      return rows.every((r) => r.state === "done" || r.state === "dead");
    });
    await w.stop();
    const rows = await db
      .selectFrom("jobs")
      .selectAll()
      .where("id", "in", [retried, exhausted])
      .orderBy("id")
      .execute();
    expect(rows[0]).toMatchObject({ state: "done", attempts: 3 });
    expect(rows[1]).toMatchObject({ state: "dead", attempts: 3, last_error: "planned failure 3" });
    expect(readRecord(file).filter((r) => r.event === "end").length).toBe(1);

    const permanent = await t.ferry.jobs.enqueue(db, PermanentJob, {});
    const w2 = await worker([
      handleJob(PermanentJob, async () => {
        throw new PermanentJobError("cannot ever work");
      }),
    ]);
    await w2.start();
    await eventually(
      async () =>
        (await db.selectFrom("jobs").select("state").where("id", "=", permanent).executeTakeFirst())
          ?.state === "dead",
    );
    await w2.stop();
    const row = await db.selectFrom("jobs").selectAll().where("id", "=", permanent).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ attempts: 1, last_error: "cannot ever work" });
  });

  it("schedules retries with growing delays (fixed clock)", async () => {
    const { db } = t.ferry.database;
    const queue = new JobQueue(t.ferry.database, t.clock, { maxAttempts: 10, backoffBaseMs: 1000 });
    const id = await queue.enqueue(db, DelaysJob, {});
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const [job] = await queue.claim("w-test", 1, 60_000, ["custom.delays"]);
      expect(job?.id).toBe(id);
      await queue.fail(job!, "w-test", "boom");
      const row = await db.selectFrom("jobs").select("run_at").where("id", "=", id).executeTakeFirstOrThrow();
      delays.push(new Date(row.run_at).getTime() - t.clock.now().getTime());
      t.clock.set(row.run_at);
    }
    // base * 2^(n-1), jittered into [half, full]
    [1000, 2000, 4000, 8000].forEach((full, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(full / 2);
      expect(delays[i]).toBeLessThanOrEqual(full);
    });
  });
});

describe("job retention", () => {
  it("purges finished jobs after their retention, never queued or running ones", async () => {
    const t = await createTestApp();
    onTestFinished(() => t.close());
    const { db } = t.ferry.database;
    const queue = new JobQueue(t.ferry.database, t.clock, { maxAttempts: 1, backoffBaseMs: 1000 });
    const done = await queue.enqueue(db, PurgeJob, {});
    const dead = await queue.enqueue(db, PurgeJob, {});
    const [a, b] = await queue.claim("w-purge", 2, 60_000, ["custom.purge"]);
    await queue.complete(a!.id, "w-purge");
    await queue.fail(b!, "w-purge", "boom");
    t.clock.advance(3600_000);
    const waiting = await queue.enqueue(db, PurgeJob, {});
    const finishedRecently = await queue.enqueue(db, PurgeJob, {});
    const [c] = await queue.claim("w-purge", 1, 60_000, ["custom.purge"]);
    expect(c?.id).toBe(waiting);
    await queue.complete(c!.id, "w-purge");
    expect(await queue.purgeFinished(1800_000)).toBe(2);
    const left = await db
      .selectFrom("jobs")
      .select(["id", "state"])
      .where("kind", "=", "custom.purge")
      .orderBy("id")
      .execute();
    expect(left).toEqual([
      { id: waiting, state: "done" },
      { id: finishedRecently, state: "queued" },
    ]);
    expect([done, dead].every((id) => !left.some((r) => r.id === id))).toBe(true);
  });
});

describe("expired leases", () => {
  it("are taken over by a worker busy with a flow of new jobs; a claim may leave them for later", async () => {
    const t = await createTestApp();
    onTestFinished(() => t.close());
    const { db } = t.ferry.database;
    const queue = t.ferry.jobs;
    // A job whose worker died: still "running", its lease ended a minute ago.
    const orphanOf = async (n: number) => {
      const id = await queue.enqueue(db, FlowJob, { n });
      await db
        .updateTable("jobs")
        .set({
          state: "running",
          attempts: 1,
          locked_by: "dead-worker",
          locked_until: toTimestamp(new Date(t.clock.now().getTime() - 60_000)),
        })
        .where("id", "=", id)
        .execute();
      return id;
    };
    const orphan = await orphanOf(0);
    const fresh = await queue.enqueue(db, FlowJob, { n: 1 });
    const skipping = await queue.claim("w-skip", 5, 60_000, ["custom.flow"], { expired: false });
    expect(skipping.map((j) => j.id)).toEqual([fresh]);
    await queue.complete(fresh, "w-skip");

    const ran: number[] = [];
    const handler = handleJob(FlowJob, async ({ n }) => {
      ran.push(n);
    });
    const w = workerOn(queue, [handler], { concurrency: 2, pollIntervalMs: 50 });
    await w.start();
    try {
      await eventually(() => ran.includes(0));
      // A worker dies after this one started; jobs keep coming meanwhile: every one runs once.
      const late = await orphanOf(12);
      for (let n = 2; n < 12; n++) await queue.enqueue(db, FlowJob, { n });
      await eventually(() => ran.length === 12);
      expect(
        (await db.selectFrom("jobs").select("state").where("id", "=", late).executeTakeFirst())?.state,
      ).toBe("done");
    } finally {
      await w.stop();
    }
    expect([...ran].sort((a, b) => a - b)).toEqual([0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const row = await db.selectFrom("jobs").selectAll().where("id", "=", orphan).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: "done", attempts: 2 });
  });
});

describe("a job completed in its handler's transaction", () => {
  it("is done exactly when that transaction commits, and retried when it rolls back", async () => {
    const t = await createTestApp({ JOB_BACKOFF_BASE_MS: "1" });
    onTestFinished(() => t.close());
    const { db } = t.ferry.database;
    const results: string[] = [];
    const handler = handleJob(InTransactionJob, async (_payload, job, context) => {
      await db.transaction().execute(async (trx) => {
        await context?.complete(trx);
        if (job.attempts === 1) throw new Error("result not recorded");
        await trx
          .insertInto("accounts")
          .values({
            email: "in-transaction@example.com",
            name: "",
            settings: "{}",
            created: "x",
            updated: "x",
          })
          .execute();
      });
      results.push(`attempt ${job.attempts} recorded`);
    });
    const id = await t.ferry.jobs.enqueue(db, InTransactionJob, {});
    const w = workerOn(t.ferry.jobs, [handler], { concurrency: 1, pollIntervalMs: 10 });
    await w.start();
    try {
      await eventually(
        async () =>
          (await db.selectFrom("jobs").select("state").where("id", "=", id).executeTakeFirst())?.state ===
          "done",
      );
    } finally {
      await w.stop();
    }
    expect(results).toEqual(["attempt 2 recorded"]);
    const row = await db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: "done", attempts: 2, locked_until: null });
    const accounts = await db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", "in-transaction@example.com")
      .execute();
    expect(accounts).toHaveLength(1);
  });

  it("keeps a job done when its handler fails after its result committed, and runs the next job", async () => {
    const t = await createTestApp({ JOB_BACKOFF_BASE_MS: "1" });
    onTestFinished(() => t.close());
    const { db } = t.ferry.database;
    const ran: string[] = [];
    const handler = handleJob(InTransactionJob, async (_payload, job, context) => {
      await db.transaction().execute(async (trx) => {
        await context?.complete(trx);
      });
      ran.push(`job ${job.id} attempt ${job.attempts}`);
      if (ran.length === 1) throw new Error("failed after the result was recorded");
    });
    const first = await t.ferry.jobs.enqueue(db, InTransactionJob, {});
    const second = await t.ferry.jobs.enqueue(db, InTransactionJob, {});
    // A long lease: a job claimed in the failed handler's transaction and then forgotten would
    // wait a minute for it to expire.
    const w = workerOn(t.ferry.jobs, [handler], { concurrency: 1, pollIntervalMs: 60_000 });
    await w.start();
    try {
      await eventually(() => ran.length === 2);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await w.stop();
    }
    expect(ran).toEqual([`job ${first} attempt 1`, `job ${second} attempt 1`]);
    const rows = await db.selectFrom("jobs").select(["id", "state", "attempts"]).orderBy("id").execute();
    expect(rows.filter((r) => r.id === first || r.id === second)).toEqual([
      { id: first, state: "done", attempts: 1 },
      { id: second, state: "done", attempts: 1 },
    ]);
  });
});

describe("singleton jobs", () => {
  it("queues a recurring job only when none of its kind is pending, even when asked concurrently", async () => {
    const t = await createTestApp();
    onTestFinished(() => t.close());
    const { db } = t.ferry.database;
    const queue = t.ferry.jobs;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => queue.enqueueUnlessPending(db, SweepJob)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const [job] = await queue.claim("w-sweep", 1, 60_000, ["custom.sweep"]);
    // While it runs, nobody else may queue one; the run itself may queue its successor, once.
    expect(await queue.enqueueUnlessPending(db, SweepJob)).toBe(false);
    const next = new Date(t.clock.now().getTime() + 60_000);
    expect(await queue.enqueueUnlessPending(db, SweepJob, { runAt: next, exceptJobId: job!.id })).toBe(true);
    expect(await queue.enqueueUnlessPending(db, SweepJob, { runAt: next, exceptJobId: job!.id })).toBe(false);
    await queue.complete(job!.id, "w-sweep");
    const rows = await db
      .selectFrom("jobs")
      .select(["state", "run_at"])
      .where("kind", "=", "custom.sweep")
      .orderBy("id")
      .execute();
    expect(rows).toEqual([
      { state: "done", run_at: expect.any(String) },
      { state: "queued", run_at: "2026-01-15T10:01:00.000000Z" },
    ]);
  });
});

describe("job queue across worker processes", () => {
  let t: TestApp;
  let dir: string;
  const procs: FerryProcess[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), "ferry-jobs-"));
  });
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await t?.close();
  });

  const workerEnv = (extra: Record<string, string> = {}) => ({
    ...t.database.env,
    JOB_POLL_INTERVAL_MS: "100",
    JOB_CONCURRENCY: "2",
    ...extra,
  });

  it("a job whose worker is killed with SIGKILL runs again after its lease expires", async () => {
    const { db } = t.ferry.database;
    const file = join(dir, "killed.log");
    const jobId = await t.ferry.jobs.enqueue(db, DiagnosticRecordJob, { file, delayMs: 60_000 });
    const first = spawnDiagnosticWorker(workerEnv({ JOB_LEASE_SECONDS: "2" }));
    procs.push(first);
    await eventually(() => readRecord(file).some((r) => r.event === "start"), 30_000);
    first.child.kill("SIGKILL");
    await first.exited;
    const leased = await db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
    expect(leased.state).toBe("running");
    // The second worker finishes the job quickly this time.
    await db
      .updateTable("jobs")
      .set({ payload: JSON.stringify({ file, delayMs: 10 }) })
      .where("id", "=", jobId)
      .execute();
    const second = spawnDiagnosticWorker(workerEnv({ JOB_LEASE_SECONDS: "2" }));
    procs.push(second);
    await eventually(
      async () =>
        (await db.selectFrom("jobs").select("state").where("id", "=", jobId).executeTakeFirst())?.state ===
        "done",
      30_000,
    );
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const events = readRecord(file);
    expect(events.map((e) => e.event)).toEqual(["start", "start", "end"]);
    expect(events[0]?.pid).toBe(first.child.pid);
    expect(events[2]?.pid).toBe(second.child.pid);
    const done = await db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
    expect(done.attempts).toBe(2);
  });

  it("on SIGTERM a worker gives a running job back to the queue and exits 0", async () => {
    const { db } = t.ferry.database;
    const file = join(dir, "released.log");
    const jobId = await t.ferry.jobs.enqueue(db, DiagnosticRecordJob, { file, delayMs: 60_000 });
    const w = spawnDiagnosticWorker(workerEnv({ JOB_LEASE_SECONDS: "60", JOB_SHUTDOWN_GRACE_MS: "300" }));
    procs.push(w);
    await eventually(() => readRecord(file).some((r) => r.event === "start"), 30_000);
    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    const row = await db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
    // Released, not waiting for its 60 s lease: the next worker can take it at once, and the
    // interrupted attempt is not counted against max_attempts.
    expect(row).toMatchObject({ state: "queued", locked_by: null, locked_until: null, attempts: 0 });
    await db.deleteFrom("jobs").where("id", "=", jobId).execute();
  });

  it("two worker processes never run the same job, and every job runs once", async () => {
    const { db } = t.ferry.database;
    const file = join(dir, "shared.log");
    // Both workers are up before any job exists, so neither can drain the queue alone.
    const a = spawnDiagnosticWorker(workerEnv());
    const b = spawnDiagnosticWorker(workerEnv());
    procs.push(a, b);
    await eventually(() => a.stdout().includes("started") && b.stdout().includes("started"), 30_000);
    const ids: number[] = [];
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < 40; i++)
        ids.push(await t.ferry.jobs.enqueue(trx, DiagnosticRecordJob, { file, delayMs: 50 }));
    });
    await eventually(async () => {
      const rows = await db.selectFrom("jobs").select("state").where("id", "in", ids).execute();
      return rows.every((r) => r.state === "done");
    }, 60_000);
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    await Promise.all([a.exited, b.exited]);
    const events = readRecord(file);
    const starts = events.filter((e) => e.event === "start");
    expect(starts.map((e) => e.job).sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(starts.map((e) => e.pid)).size).toBe(2);
    // No job started twice, so no two runs of one job overlapped.
    for (const id of ids)
      expect(events.filter((e) => e.job === id).map((e) => e.event)).toEqual(["start", "end"]);
  });
});

describe("a worker with jobs waiting", () => {
  it("runs them in order, each once; on SQLite each completion claims the next job in its transaction", async () => {
    const statements: string[] = [];
    const t = await createTestApp({}, { onQuery: (sql) => statements.push(sql) });
    onTestFinished(() => t.close());
    const { db } = t.ferry.database;
    for (let n = 0; n < 4; n++) await t.ferry.jobs.enqueue(db, FlowJob, { n });
    const ran: number[] = [];
    const handler = handleJob(FlowJob, async ({ n }) => void ran.push(n));
    const w = workerOn(t.ferry.jobs, [handler], { concurrency: 1, pollIntervalMs: 60_000 });
    statements.length = 0;
    await w.start();
    try {
      await eventually(() => ran.length === 4);
      await eventually(async () => {
        const states = await db.selectFrom("jobs").select("state").where("kind", "=", FlowJob.kind).execute();
        return states.every((s) => s.state === "done");
      });
    } finally {
      await w.stop();
    }
    expect(ran).toEqual([0, 1, 2, 3]);
    if (t.ferry.database.dialect !== "sqlite") return;
    const isCompletion = (s: string) => /^update "jobs" set "state" = \S+, "finished_at"/.test(s);
    const isClaim = (s: string) => /from "jobs" where "state" = \S+ and "run_at" <=/.test(s);
    const completions = statements.flatMap((s, i) => (isCompletion(s) ? [i] : []));
    expect(completions).toHaveLength(4);
    // One write transaction per job: its completion, then the claim of the next job (the last
    // finds none), committed together.
    for (const i of completions) {
      expect(statements[i - 1]).toBe("begin");
      expect(isClaim(statements[i + 1] ?? "")).toBe(true);
    }
    expect(statements.filter((s) => s === "commit")).toHaveLength(4);
  });
});
