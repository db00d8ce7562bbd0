import type { Database, Executor } from "../../db/database.js";
import type { CallbackDeliveryStatus, CallbackEventType } from "../../db/schema.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, ValidationError } from "../../shared/errors.js";
import { parseId, randomId } from "../../shared/ids.js";
import { type Paginated, paginate, parsePageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { type AuditActor, AuditCode, type AuditWriter, actorFields } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import {
  type CallbackAccountSettings,
  type CallbackDeliveryService,
  callbackSettingsFrom,
} from "./callback-delivery.service.js";
import type { CallbackSecretService } from "./callback-secrets.service.js";
import {
  type CallbackEventJobPayload,
  type CallbackSubjects,
  DeliverCallbackJob,
  type DeliverJobPayload,
} from "./callbacks.jobs.js";
import {
  type AttemptView,
  type DeliveryView,
  presentAttempt,
  presentDelivery,
} from "./callbacks.presenter.js";
import {
  findAccountDelivery,
  insertDelivery,
  insertEvent,
  listAttemptRows,
  listDeliveryRows,
  setDeliveryJob,
} from "./callbacks.repository.js";

/** Every event type (spec: Events). */
export const CALLBACK_EVENT_TYPES: readonly CallbackEventType[] = [
  "request_complete",
  "contact_notification_send",
];
/** Every delivery status. */
export const DELIVERY_STATUSES: readonly CallbackDeliveryStatus[] = [
  "pending",
  "delivered",
  "failed",
  "stopped",
];

/** What emitCallbackEvent takes. */
export interface CallbackEventInput {
  accountId: number;
  requestId: number;
  type: CallbackEventType;
  /**
   * The complete nested event, e.g. `{ type: "request_complete", request: {...} }`; ids integers. A
   * function is called (in the same transaction) only when the request has a callback URL, so an
   * event nobody receives never loads what its body names.
   */
  body: Record<string, unknown> | (() => Promise<Record<string, unknown>>);
}

/** A delivery with its event body and attempts (`GET /v1/callback/{id}/`). */
export interface DeliveryDetailView extends DeliveryView {
  payload: unknown;
  attempts: AttemptView[];
}

/**
 * Callbacks (spec: Events): turns outbox events into deliveries, lists them with their
 * attempts, redelivers, and manages the account's callback settings. Signing secrets are in
 * `secrets`, attempts in `delivery`.
 */
export class CallbackService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly audit: AuditWriter,
    private readonly accounts: AccountsService,
    private readonly subjects: CallbackSubjects,
    private readonly publicBaseUrl: string,
    readonly secrets: CallbackSecretService,
    readonly delivery: CallbackDeliveryService,
  ) {}

  /**
   * Records an event in the caller's transaction `trx` (transactional outbox): when the request has a
   * callback_url, an event, its pending delivery and the first attempt's job are written; the worker
   * sends after commit. Returns the delivery id, or undefined when there is nothing to deliver.
   */
  async emitCallbackEvent(trx: Executor, input: CallbackEventInput): Promise<number | undefined> {
    return this.recordEvent(trx, input, null);
  }

  /** Records an event queued as a job by an earlier version (idempotent: a second run records nothing). */
  async recordEventFromJob(payload: CallbackEventJobPayload, jobId: number): Promise<void> {
    const accountId = parseId(payload.account_id);
    const requestId = parseId(payload.request_id);
    if (accountId === undefined || requestId === undefined || !CALLBACK_EVENT_TYPES.includes(payload.type))
      return;
    await this.database.db
      .transaction()
      .execute((trx) =>
        this.recordEvent(trx, { accountId, requestId, type: payload.type, body: payload.body ?? {} }, jobId),
      );
  }

  private async recordEvent(
    trx: Executor,
    input: CallbackEventInput,
    sourceJobId: number | null,
  ): Promise<number | undefined> {
    const url = await this.subjects.callbackUrl(trx, input.accountId, input.requestId);
    if (!url) return undefined;
    const now = toTimestamp(this.clock.now());
    const body = {
      ...(typeof input.body === "function" ? await input.body() : input.body),
      type: input.type,
    };
    const eventId = await insertEvent(trx, {
      accountId: input.accountId,
      requestId: input.requestId,
      type: input.type,
      payload: JSON.stringify(body),
      webhookId: `msg_${randomId(18)}`,
      sourceJobId,
      now,
    });
    if (eventId === undefined) return undefined;
    const deliveryId = await insertDelivery(trx, {
      accountId: input.accountId,
      eventId,
      requestId: input.requestId,
      type: input.type,
      url,
      now,
    });
    const job: DeliverJobPayload = { delivery_id: deliveryId };
    const jobId = await this.jobs.enqueue(trx, DeliverCallbackJob, job);
    await setDeliveryJob(trx, deliveryId, { jobId, nextAttemptAt: now, now });
    await this.subjects.recordCallbackState(trx, input.requestId, "pending", false);
    return deliveryId;
  }

  /**
   * One page of the account's deliveries, newest first. Filters: `request` (id), `type`, `status`;
   * bad values are 400 naming the field.
   */
  async listDeliveries(accountId: number, query: Record<string, unknown>): Promise<Paginated<DeliveryView>> {
    const page = parsePageRequest(query);
    const problems: Record<string, string[]> = {};
    let requestId: number | undefined;
    if (query.request !== undefined && query.request !== "") {
      requestId = parseId(query.request);
      if (requestId === undefined) problems.request = ["A valid integer is required."];
    }
    const type = optionalEnum(query.type, CALLBACK_EVENT_TYPES, "type", problems);
    const status = optionalEnum(query.status, DELIVERY_STATUSES, "status", problems);
    if (Object.keys(problems).length > 0) throw new ValidationError(problems);
    const { rows, count } = await listDeliveryRows(
      this.database.db,
      accountId,
      { requestId, type, status },
      { limit: page.pageSize, offset: page.offset },
    );
    return paginate(rows.map(presentDelivery), count, page, this.publicBaseUrl, "/v1/callback/", {
      request: query.request,
      type: query.type,
      status: query.status,
    });
  }

  /** A delivery with its payload and attempts; 404 for absent or foreign ids. */
  async getDelivery(accountId: number, id: number): Promise<DeliveryDetailView> {
    const { db } = this.database;
    const row = await findAccountDelivery(db, accountId, id);
    if (!row) throw notFound("Callback");
    const attempts = await listAttemptRows(db, id);
    return {
      ...presentDelivery(row),
      payload: JSON.parse(row.payload),
      attempts: attempts.map(presentAttempt),
    };
  }

  /**
   * Sends a delivery again (same webhook-id): it becomes pending, an attempt runs at once and
   * failures are retried on the normal schedule. Works in any status. Audited as ABA-0030.
   */
  async redeliver(
    accountId: number,
    id: number,
    applicationId: number | null,
    actor?: AuditActor,
  ): Promise<DeliveryDetailView> {
    await this.database.db.transaction().execute(async (trx) => {
      const row = await findAccountDelivery(trx, accountId, id);
      if (!row) throw notFound("Callback");
      const now = toTimestamp(this.clock.now());
      const job: DeliverJobPayload = { delivery_id: id, trigger: "redelivery" };
      const jobId = await this.jobs.enqueue(trx, DeliverCallbackJob, job);
      await setDeliveryJob(trx, id, { jobId, nextAttemptAt: now, now, restart: true });
      if (row.request_id !== null)
        await this.subjects.recordCallbackState(trx, row.request_id, "pending", false);
      await this.audit.write(trx, {
        accountId,
        code: AuditCode.ENTITY_UPDATED,
        apiKeyId: applicationId,
        relatedModel: "callback",
        relationKey: id,
        ...actorFields(actor, "redeliver"),
      });
    });
    return this.getDelivery(accountId, id);
  }

  /** The account's callback settings (`callback_shape`, `secure_callbacks`). */
  async getSettings(accountId: number): Promise<CallbackAccountSettings> {
    return callbackSettingsFrom(await this.accounts.settings(this.database.db, accountId));
  }

  /** Changes callback settings (only the fields given); audited as ABA-0030. */
  async updateSettings(
    accountId: number,
    patch: Partial<CallbackAccountSettings>,
    applicationId: number | null,
    actor?: AuditActor,
  ): Promise<CallbackAccountSettings> {
    const changes: Record<string, unknown> = {};
    if (patch.callback_shape !== undefined) changes.callback_shape = patch.callback_shape;
    if (patch.secure_callbacks !== undefined) changes.secure_callbacks = patch.secure_callbacks;
    const next = await this.database.db.transaction().execute(async (trx) => {
      const merged = await this.accounts.mergeSettings(
        trx,
        accountId,
        changes,
        toTimestamp(this.clock.now()),
      );
      await this.audit.write(trx, {
        accountId,
        code: AuditCode.ENTITY_UPDATED,
        apiKeyId: applicationId,
        relatedModel: "callback_settings",
        relationKey: accountId,
        ...actorFields(actor, JSON.stringify(changes)),
      });
      return merged;
    });
    return callbackSettingsFrom(next);
  }
}

function optionalEnum<T extends string>(
  raw: unknown,
  values: readonly T[],
  field: string,
  problems: Record<string, string[]>,
): T | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw === "string" && (values as readonly string[]).includes(raw)) return raw as T;
  problems[field] = [`Select a valid choice. ${String(raw)} is not one of ${values.join(", ")}.`];
  return undefined;
}
