import type { Logger } from "pino";
import type { Database, Executor } from "../../db/database.js";
import { defineJob, type EmptyPayload } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { CallbackService } from "../callbacks/index.js";
import type { MediaService } from "../media/index.js";
import type { RequestRecords, RequestsService, RequestView } from "../requests/index.js";

/** The recurring job that expires push requests. */
export const ExpirySweepJob = defineJob<EmptyPayload>("lifecycle.sweep");

/** Longest receiver_message accepted, in characters. */
export const MAX_RECEIVER_MESSAGE = 10_000;

/**
 * Request lifecycle transitions (spec: States and transitions): push expiry by a
 * recurring worker job, pull completion by the recipient. Each transition, its audit entry, the
 * destruction of files and the `request_complete` event are one transaction.
 */
export class LifecycleService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly audit: AuditWriter,
    private readonly callbacks: Pick<CallbackService, "emitCallbackEvent">,
    private readonly records: RequestRecords,
    private readonly requests: Pick<RequestsService, "getRequestView">,
    private readonly media: Pick<MediaService, "removeAllOfRequest">,
    private readonly logger: Logger,
    private readonly sweepIntervalSeconds: number,
  ) {}

  /**
   * Completes a pull request for the recipient: `complete: true`, `receiver_message`, completed_at,
   * and `request_complete` in one transaction. 404 for absent or foreign ids; 422 when it is not a
   * pull request, still a draft, already complete, or expired; 400 when the message is too long.
   */
  async completePullRequest(
    accountId: number,
    requestId: number,
    opts: { receiverMessage?: string | null } = {},
  ): Promise<RequestView> {
    const message = opts.receiverMessage ?? null;
    if (message !== null && message.length > MAX_RECEIVER_MESSAGE) {
      throw ValidationError.field(
        "receiver_message",
        `Ensure this field has no more than ${MAX_RECEIVER_MESSAGE} characters.`,
      );
    }
    return this.database.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const nowTs = toTimestamp(now);
      const row = await this.records.find(trx, accountId, requestId);
      if (!row) throw notFound("Request");
      if (row.type !== "pull") throw unprocessable("Only a pull request is completed by its recipient.");
      if (row.is_draft === 1) throw unprocessable("The request has not been sent.");
      if (row.complete === 1) throw unprocessable("The request is already complete.");
      if (row.is_expired === 1 || (row.expires_at !== null && row.expires_at <= nowTs)) {
        throw unprocessable("The request has expired.");
      }
      if (!(await this.records.markPullComplete(trx, requestId, message, nowTs))) {
        throw unprocessable("The request is already complete.");
      }
      await this.audit.write(trx, {
        accountId,
        code: AuditCode.ENTITY_UPDATED,
        relatedModel: "request",
        relationKey: requestId,
        value: "complete",
      });
      return this.emitComplete(trx, accountId, requestId);
    });
  }

  /**
   * Expires an open, sent push request now (sandbox helpers, owner action): the same transition
   * as expiry at `expires_at`. 404 for absent or foreign ids; 422 when it is not a sent, open push.
   */
  async expirePushRequestNow(accountId: number, requestId: number): Promise<RequestView> {
    return this.database.db.transaction().execute(async (trx) => {
      const row = await this.records.find(trx, accountId, requestId);
      if (!row) throw notFound("Request");
      if (row.type !== "push") throw unprocessable("Only a push request expires.");
      if (row.is_draft === 1) throw unprocessable("The request has not been sent.");
      if (row.complete === 1) throw unprocessable("The request is already complete.");
      const view = await this.expireInTransaction(trx, accountId, requestId, true);
      if (!view) throw unprocessable("The request is already complete.");
      return view;
    });
  }

  /**
   * Expires every sent push request whose expires_at has passed, one transaction each; returns how
   * many it expired. Safe to run concurrently: each request is taken by one transaction only.
   */
  async expireDuePushRequests(batchSize = 100): Promise<number> {
    let expired = 0;
    for (;;) {
      const due = await this.records.duePushExpiries(
        this.database.db,
        toTimestamp(this.clock.now()),
        batchSize,
      );
      let progressed = false;
      for (const { id, account_id } of due) {
        try {
          const done = await this.database.db
            .transaction()
            .execute((trx) => this.expireInTransaction(trx, account_id, id, false));
          if (done) {
            expired += 1;
            progressed = true;
          }
        } catch (err) {
          this.logger.error({ err: (err as Error).message, request: id }, "push expiry failed");
        }
      }
      if (due.length < batchSize || !progressed) return expired;
    }
  }

  /** Queues the first sweep if none is pending (called when a worker is built). */
  async ensureSweepScheduled(): Promise<void> {
    await this.jobs.enqueueUnlessPending(this.database.db, ExpirySweepJob, { maxAttempts: 1_000_000 });
  }

  /** The sweep job: queues its next run (unless another sweep is pending), then expires what is due. */
  async runSweepJob(jobId: number): Promise<void> {
    const runAt = new Date(this.clock.now().getTime() + this.sweepIntervalSeconds * 1000);
    await this.jobs.enqueueUnlessPending(this.database.db, ExpirySweepJob, {
      runAt,
      maxAttempts: 1_000_000,
      exceptJobId: jobId,
    });
    await this.expireDuePushRequests();
  }

  private async expireInTransaction(
    trx: Executor,
    accountId: number,
    requestId: number,
    force: boolean,
  ): Promise<RequestView | undefined> {
    const nowTs = toTimestamp(this.clock.now());
    if (!(await this.records.markPushExpired(trx, requestId, nowTs, force))) return undefined;
    await this.media.removeAllOfRequest(trx, requestId, nowTs);
    await this.audit.write(trx, {
      accountId,
      code: AuditCode.ENTITY_UPDATED,
      relatedModel: "request",
      relationKey: requestId,
      value: "expired",
    });
    return this.emitComplete(trx, accountId, requestId);
  }

  private async emitComplete(trx: Executor, accountId: number, requestId: number): Promise<RequestView> {
    const request = await this.requests.getRequestView(trx, accountId, requestId);
    await this.callbacks.emitCallbackEvent(trx, {
      accountId,
      requestId,
      type: "request_complete",
      body: { type: "request_complete", request },
    });
    return request;
  }
}
