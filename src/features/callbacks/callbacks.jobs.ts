import type { Executor } from "../../db/database.js";
import type { CallbackDeliveryStatus, CallbackEventType } from "../../db/schema.js";
import { defineJob } from "../../jobs/job.js";

/** Payload of a delivery attempt job. */
export interface DeliverJobPayload {
  delivery_id: number;
  trigger?: "automatic" | "redelivery";
}

/** One delivery attempt of a callback. */
export const DeliverCallbackJob = defineJob<DeliverJobPayload>("callbacks.deliver");

/** Payload of an event recorded by a job: `body` is the complete nested event (`{type, request, ...}`). */
export interface CallbackEventJobPayload {
  account_id: number;
  request_id: number;
  type: CallbackEventType;
  body: Record<string, unknown>;
}

/**
 * Records an event from a job instead of the transaction of its cause. Nothing enqueues it any
 * more (events are emitted in the transaction of their cause); it is still handled so that jobs
 * queued by earlier versions of Ferry are delivered after an upgrade.
 */
export const RecordCallbackEventJob = defineJob<CallbackEventJobPayload>("callbacks.event");

/**
 * What callbacks need from the feature that owns the events' subjects (the requests feature
 * answers): the subject's `callback_url`, and a place to mirror the state of its latest delivery.
 */
export interface CallbackSubjects {
  /** The callback_url of the account's request; undefined when the request is absent or foreign. */
  callbackUrl(ex: Executor, accountId: number, requestId: number): Promise<string | null | undefined>;
  /** Mirrors a delivery outcome on its request (`callback_status`, and `callback_tries` when `countTry`). */
  recordCallbackState(
    ex: Executor,
    requestId: number,
    status: CallbackDeliveryStatus,
    countTry: boolean,
  ): Promise<void>;
}
