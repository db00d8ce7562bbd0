import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type {
  CallbackAttemptsTable,
  CallbackDeliveriesTable,
  CallbackDeliveryStatus,
  CallbackEventType,
  CallbackSecretsTable,
} from "../../db/schema.js";

/** A callback secret row. */
export type CallbackSecretRow = Selectable<CallbackSecretsTable>;
/** A delivery row. */
export type CallbackDeliveryRow = Selectable<CallbackDeliveriesTable>;
/** An attempt row. */
export type CallbackAttemptRow = Selectable<CallbackAttemptsTable>;

/** A delivery with what an attempt needs: its event's payload and webhook-id. */
export interface DeliveryWithEvent extends CallbackDeliveryRow {
  payload: string;
  webhook_id: string;
}

// ---------------------------------------------------------------------------------------------
// secrets

/** Every secret generation of an account, newest first. */
export async function listSecretRows(ex: Executor, accountId: number): Promise<CallbackSecretRow[]> {
  return ex
    .selectFrom("callback_secrets")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("generation", "desc")
    .execute();
}

/** Inserts a secret generation; false when that generation already exists (a concurrent writer won). */
export async function insertSecretRow(
  ex: Executor,
  v: { accountId: number; generation: number; wrapped: string; now: string },
): Promise<boolean> {
  const row = await ex
    .insertInto("callback_secrets")
    .values({
      account_id: v.accountId,
      generation: v.generation,
      wrapped_secret: v.wrapped,
      expires_at: null,
      created: v.now,
    })
    .onConflict((oc) => oc.columns(["account_id", "generation"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

/** Sets when a replaced secret stops signing. */
export async function expireSecretRow(ex: Executor, id: number, expiresAt: string): Promise<void> {
  await ex.updateTable("callback_secrets").set({ expires_at: expiresAt }).where("id", "=", id).execute();
}

/** Deletes secret generations that stopped signing before `now` (housekeeping at rotation). */
export async function deleteExpiredSecretRows(ex: Executor, accountId: number, now: string): Promise<void> {
  await ex
    .deleteFrom("callback_secrets")
    .where("account_id", "=", accountId)
    .where("expires_at", "is not", null)
    .where("expires_at", "<=", now)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// events and deliveries

/** Inserts an event; undefined when `sourceJobId` already recorded one (the job ran twice). */
export async function insertEvent(
  ex: Executor,
  v: {
    accountId: number;
    requestId: number;
    type: CallbackEventType;
    payload: string;
    webhookId: string;
    sourceJobId: number | null;
    now: string;
  },
): Promise<number | undefined> {
  const row = await ex
    .insertInto("callback_events")
    .values({
      account_id: v.accountId,
      request_id: v.requestId,
      type: v.type,
      payload: v.payload,
      webhook_id: v.webhookId,
      source_job_id: v.sourceJobId,
      created: v.now,
    })
    .onConflict((oc) => oc.column("source_job_id").doNothing())
    .returning("id")
    .executeTakeFirst();
  return row?.id;
}

/** Inserts a pending delivery of an event. */
export async function insertDelivery(
  ex: Executor,
  v: {
    accountId: number;
    eventId: number;
    requestId: number;
    type: CallbackEventType;
    url: string;
    now: string;
  },
): Promise<number> {
  const row = await ex
    .insertInto("callback_deliveries")
    .values({
      account_id: v.accountId,
      event_id: v.eventId,
      request_id: v.requestId,
      type: v.type,
      url: v.url,
      status: "pending",
      tries: 0,
      round_attempts: 0,
      next_attempt_at: v.now,
      created: v.now,
      updated: v.now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Points a delivery at the job that makes its next attempt. */
export async function setDeliveryJob(
  ex: Executor,
  deliveryId: number,
  v: { jobId: number; nextAttemptAt: string; now: string; restart?: boolean },
): Promise<void> {
  await ex
    .updateTable("callback_deliveries")
    .set({
      job_id: v.jobId,
      next_attempt_at: v.nextAttemptAt,
      updated: v.now,
      ...(v.restart ? { status: "pending" as const, round_attempts: 0 } : {}),
    })
    .where("id", "=", deliveryId)
    .execute();
}

/** What one attempt needs, read in one query: the delivery, its event, the account settings. */
export interface DeliveryForAttempt extends DeliveryWithEvent {
  /** Id of the attempt `jobId` already recorded (it runs again after a crash), else null. */
  recorded_attempt_id: number | null;
}

/** Loads a delivery for the attempt of job `jobId` (undefined when the delivery is gone). */
export async function findDeliveryForAttempt(
  ex: Executor,
  deliveryId: number,
  jobId: number,
): Promise<DeliveryForAttempt | undefined> {
  return ex
    .selectFrom("callback_deliveries as d")
    .innerJoin("callback_events as e", "e.id", "d.event_id")
    .leftJoin("callback_attempts as t", (join) => join.on("t.job_id", "=", jobId))
    .selectAll("d")
    .select(["e.payload", "e.webhook_id", "t.id as recorded_attempt_id"])
    .where("d.id", "=", deliveryId)
    .executeTakeFirst();
}

/** Records one attempt. */
export async function insertAttempt(ex: Executor, v: Omit<CallbackAttemptRow, "id">): Promise<void> {
  await ex.insertInto("callback_attempts").values(v).execute();
}

/** What an attempt changes on its delivery. */
export interface DeliveryOutcomeUpdate {
  status: CallbackDeliveryStatus;
  roundAttempts: number;
  jobId: number | null;
  nextAttemptAt: string | null;
  lastAttemptAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
}

/** Applies an attempt's outcome if `ownerJobId` still owns the delivery; false otherwise. */
export async function updateDeliveryAfterAttempt(
  ex: Executor,
  deliveryId: number,
  ownerJobId: number,
  u: DeliveryOutcomeUpdate,
  now: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("callback_deliveries")
    .set((eb) => ({
      status: u.status,
      tries: eb("tries", "+", 1),
      round_attempts: u.roundAttempts,
      job_id: u.jobId,
      next_attempt_at: u.nextAttemptAt,
      last_attempt_at: u.lastAttemptAt,
      last_status_code: u.lastStatusCode,
      last_error: u.lastError,
      delivered_at: u.deliveredAt,
      updated: now,
    }))
    .where("id", "=", deliveryId)
    .where("job_id", "=", ownerJobId)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Counts an attempt of a job that no longer owns its delivery (status untouched); returns false. */
export async function countStaleTry(
  ex: Executor,
  deliveryId: number,
  attemptedAt: string,
  now: string,
): Promise<false> {
  await ex
    .updateTable("callback_deliveries")
    .set((eb) => ({ tries: eb("tries", "+", 1), last_attempt_at: attemptedAt, updated: now }))
    .where("id", "=", deliveryId)
    .execute();
  return false;
}

/** Filters of the delivery list. */
export interface DeliveryFilters {
  requestId?: number | undefined;
  type?: CallbackEventType | undefined;
  status?: CallbackDeliveryStatus | undefined;
}

/** One page of an account's deliveries (newest first, with their webhook-id) and the total matching. */
export async function listDeliveryRows(
  ex: Executor,
  accountId: number,
  filters: DeliveryFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: (CallbackDeliveryRow & { webhook_id: string })[]; count: number }> {
  let q = ex
    .selectFrom("callback_deliveries as d")
    .innerJoin("callback_events as e", "e.id", "d.event_id")
    .where("d.account_id", "=", accountId);
  if (filters.requestId !== undefined) q = q.where("d.request_id", "=", filters.requestId);
  if (filters.type !== undefined) q = q.where("d.type", "=", filters.type);
  if (filters.status !== undefined) q = q.where("d.status", "=", filters.status);
  const rows = await q
    .selectAll("d")
    .select("e.webhook_id")
    .orderBy("d.id", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const total = await q.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { rows, count: Number(total.n) };
}

/** A delivery of the account with its event (undefined for absent or foreign ids). */
export async function findAccountDelivery(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<DeliveryWithEvent | undefined> {
  return ex
    .selectFrom("callback_deliveries as d")
    .innerJoin("callback_events as e", "e.id", "d.event_id")
    .selectAll("d")
    .select(["e.payload", "e.webhook_id"])
    .where("d.account_id", "=", accountId)
    .where("d.id", "=", id)
    .executeTakeFirst();
}

/** Every attempt of a delivery, oldest first. */
export async function listAttemptRows(ex: Executor, deliveryId: number): Promise<CallbackAttemptRow[]> {
  return ex
    .selectFrom("callback_attempts")
    .selectAll()
    .where("delivery_id", "=", deliveryId)
    .orderBy("id")
    .execute();
}
