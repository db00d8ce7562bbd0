import type { Database } from "../../db/database.js";
import { defineJob, type EmptyPayload } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { toTimestamp } from "../../shared/time.js";
import { accountsWithEntriesBefore, deleteThroughSeq, entriesInChainOrder } from "./audit.repository.js";

/** The recurring retention run. */
export const AuditRetentionJob = defineJob<EmptyPayload>("audit.retention");

/** How often the retention job runs. */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

const BATCH = 5000;

/**
 * Deletes audit entries older than AUDIT_RETENTION_DAYS (0 keeps everything). Only a prefix of
 * each account's chain is deleted, and the last deleted entry becomes the account's checkpoint,
 * so `ferry audit verify` still verifies what remains.
 */
export class AuditRetentionService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly retentionDays: number,
  ) {}

  /** True when retention is configured (days > 0). */
  get enabled(): boolean {
    return this.retentionDays > 0;
  }

  /**
   * Deletes, per account, the oldest entries whose Timestamp is before now − retention, stopping
   * at the first entry that is not (a contiguous prefix). Idempotent. Returns what it deleted.
   */
  async prune(): Promise<{ accounts: number; deleted: number }> {
    if (!this.enabled) return { accounts: 0, deleted: 0 };
    const now = this.clock.now();
    const cutoff = toTimestamp(new Date(now.getTime() - this.retentionDays * 86_400_000));
    const { db } = this.database;
    let deleted = 0;
    const accounts = await accountsWithEntriesBefore(db, cutoff);
    for (const accountId of accounts) {
      for (;;) {
        const rows = await entriesInChainOrder(db, accountId, undefined, BATCH);
        let last = -1;
        while (last + 1 < rows.length && (rows[last + 1]?.timestamp ?? "") < cutoff) last++;
        const through = rows[last];
        if (!through) break;
        deleted += await db
          .transaction()
          .execute((trx) =>
            deleteThroughSeq(
              trx,
              accountId,
              { seq: Number(through.seq), hash: through.hash, timestamp: through.timestamp },
              toTimestamp(now),
            ),
          );
        if (last + 1 < rows.length || rows.length < BATCH) break;
      }
    }
    return { accounts: accounts.length, deleted };
  }

  /**
   * Queues a retention run `delayMs` from now unless one is pending (no-op when retention is off);
   * `exceptJobId` is the run that schedules its successor.
   */
  async ensureScheduled(delayMs = 0, exceptJobId?: number): Promise<void> {
    if (!this.enabled) return;
    await this.jobs.enqueueUnlessPending(this.database.db, AuditRetentionJob, {
      runAt: new Date(this.clock.now().getTime() + delayMs),
      ...(exceptJobId === undefined ? {} : { exceptJobId }),
    });
  }

  /** The job: prune, then queue the next run an interval later. */
  async runJob(jobId: number): Promise<void> {
    await this.prune();
    await this.ensureScheduled(RETENTION_INTERVAL_MS, jobId);
  }
}
