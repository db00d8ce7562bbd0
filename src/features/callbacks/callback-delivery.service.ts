import { randomInt } from "node:crypto";
import {
  type HttpClient,
  type HttpResult,
  OutboundBlockedError,
  OutboundError,
  OutboundTimeoutError,
} from "../../adapters/http-client/http-client.js";
import { signWebhook } from "../../crypto/webhook-signature.js";
import type { Database } from "../../db/database.js";
import type { CallbackAttemptsTable, CallbackDeliveryStatus } from "../../db/schema.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { toTimestamp } from "../../shared/time.js";
import type { AccountsService } from "../auth/index.js";
import type { CallbackSecretService } from "./callback-secrets.service.js";
import { type CallbackSubjects, DeliverCallbackJob, type DeliverJobPayload } from "./callbacks.jobs.js";
import { type CallbackShape, shapeEventBody } from "./callbacks.presenter.js";
import {
  countStaleTry,
  type DeliveryWithEvent,
  findDeliveryForAttempt,
  insertAttempt,
  updateDeliveryAfterAttempt,
} from "./callbacks.repository.js";

/** The two outbound clients: any http(s) URL, and https-only for accounts with secure callbacks. */
export interface CallbackHttpClients {
  standard: HttpClient;
  secure: HttpClient;
}

/** Callback-related account settings (stored in `accounts.settings`). */
export interface CallbackAccountSettings {
  callback_shape: CallbackShape;
  secure_callbacks: boolean;
}

/** Reads the callback settings out of an account's settings object, with defaults. */
export function callbackSettingsFrom(settings: Record<string, unknown>): CallbackAccountSettings {
  return {
    callback_shape: settings.callback_shape === "flat" ? "flat" : "nested",
    secure_callbacks: settings.secure_callbacks === true,
  };
}

type Outcome = CallbackAttemptsTable["outcome"];

interface AttemptResult {
  outcome: Outcome;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  excerpt: string | null;
  /** Whether a later attempt may succeed. */
  retryable: boolean;
}

/**
 * Makes delivery attempts: signs the event per Standard Webhooks with every
 * signing secret, POSTs it through the SSRF-guarded client, records the attempt and schedules the
 * next one from CALLBACK_RETRY_SCHEDULE_SECONDS (+ up to 10% jitter), in one transaction.
 */
export class CallbackDeliveryService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly accounts: AccountsService,
    private readonly subjects: CallbackSubjects,
    private readonly secrets: CallbackSecretService,
    private readonly clients: CallbackHttpClients,
    private readonly retryScheduleSeconds: readonly number[],
  ) {}

  /**
   * Runs the attempt of job `jobId` for a delivery. Idempotent: returns without sending when the
   * delivery is gone, no longer pending, owned by another job, or this job already recorded its attempt.
   */
  async attempt(payload: DeliverJobPayload, jobId: number): Promise<void> {
    const delivery = await findDeliveryForAttempt(this.database.db, payload.delivery_id, jobId);
    if (
      delivery?.status !== "pending" ||
      delivery.job_id !== jobId ||
      delivery.recorded_attempt_id !== null
    ) {
      return;
    }
    const settings = callbackSettingsFrom(
      await this.accounts.settings(this.database.db, delivery.account_id),
    );
    const body = JSON.stringify(
      shapeEventBody(JSON.parse(delivery.payload) as Record<string, unknown>, settings.callback_shape),
    );
    const secrets = await this.secrets.signingSecrets(this.database.db, delivery.account_id);
    const attemptedAt = this.clock.now();
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    const headers = {
      "content-type": "application/json",
      "user-agent": "Ferry-Webhooks/1",
      "webhook-id": delivery.webhook_id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(secrets, delivery.webhook_id, timestamp, body),
    };
    const client = settings.secure_callbacks ? this.clients.secure : this.clients.standard;
    const result = await send(client, delivery.url, headers, body);
    await this.record(delivery, jobId, payload.trigger ?? "automatic", attemptedAt, result);
  }

  private async record(
    delivery: DeliveryWithEvent,
    jobId: number,
    trigger: "automatic" | "redelivery",
    attemptedAt: Date,
    result: AttemptResult,
  ): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const nowTs = toTimestamp(now);
      await insertAttempt(trx, {
        delivery_id: delivery.id,
        job_id: jobId,
        number: delivery.tries + 1,
        trigger,
        attempted_at: toTimestamp(attemptedAt),
        duration_ms: Math.round(result.durationMs),
        status_code: result.statusCode,
        outcome: result.outcome,
        error: result.error,
        response_excerpt: result.excerpt,
      });
      const roundAttempts = delivery.round_attempts + 1;
      let status: CallbackDeliveryStatus;
      let nextJobId: number | null = null;
      let nextAttemptAt: string | null = null;
      if (result.outcome === "success") status = "delivered";
      else if (result.outcome === "gone") status = "stopped";
      else if (result.retryable && roundAttempts <= this.retryScheduleSeconds.length) {
        status = "pending";
        const delay = this.retryScheduleSeconds[roundAttempts - 1] ?? 0;
        // Up to +10% jitter, in milliseconds, so receivers are not hit by synchronized retries.
        const runAt = new Date(now.getTime() + delay * 1000 + randomInt(0, Math.floor(delay * 100) + 1));
        nextAttemptAt = toTimestamp(runAt);
        const next: DeliverJobPayload = { delivery_id: delivery.id };
        nextJobId = await this.jobs.enqueue(trx, DeliverCallbackJob, next, { runAt });
      } else status = "failed";
      // Applied only while this job still owns the delivery: a redelivery may have taken it over
      // while this attempt ran (then the job queued above finds itself stale and does nothing).
      const owned = await updateDeliveryAfterAttempt(
        trx,
        delivery.id,
        jobId,
        {
          status,
          roundAttempts,
          jobId: nextJobId,
          nextAttemptAt,
          lastAttemptAt: toTimestamp(attemptedAt),
          lastStatusCode: result.statusCode,
          lastError: result.error,
          deliveredAt: status === "delivered" ? nowTs : null,
        },
        nowTs,
      );
      if (!owned) await countStaleTry(trx, delivery.id, toTimestamp(attemptedAt), nowTs);
      if (delivery.request_id !== null) {
        await this.subjects.recordCallbackState(trx, delivery.request_id, owned ? status : "pending", true);
      }
    });
  }
}

async function send(
  client: HttpClient,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptResult> {
  const started = performance.now();
  let res: HttpResult;
  try {
    res = await client.post(url, { headers, body });
  } catch (err) {
    const durationMs = performance.now() - started;
    if (!(err instanceof OutboundError)) throw err;
    if (err instanceof OutboundBlockedError) {
      // A name that does not resolve may resolve later; a refused address or scheme will not change.
      const retryable = err.reason === "dns";
      return {
        outcome: "blocked",
        statusCode: null,
        durationMs,
        error: err.message,
        excerpt: null,
        retryable,
      };
    }
    const outcome = err instanceof OutboundTimeoutError ? "timeout" : "network_error";
    return { outcome, statusCode: null, durationMs, error: err.message, excerpt: null, retryable: true };
  }
  const excerpt = res.bodyExcerpt === "" ? null : res.bodyExcerpt;
  if (res.status >= 200 && res.status < 300) {
    return {
      outcome: "success",
      statusCode: res.status,
      durationMs: res.durationMs,
      error: null,
      excerpt,
      retryable: false,
    };
  }
  if (res.status === 410) {
    return {
      outcome: "gone",
      statusCode: 410,
      durationMs: res.durationMs,
      error: "receiver answered 410 Gone: retries stopped",
      excerpt,
      retryable: false,
    };
  }
  return {
    outcome: "http_error",
    statusCode: res.status,
    durationMs: res.durationMs,
    error: `receiver answered HTTP ${res.status}`,
    excerpt,
    retryable: true,
  };
}
