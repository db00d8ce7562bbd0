import type { JobHandler } from "../../jobs/worker.js";
import { DELIVER_JOB, type DeliverJobPayload } from "./callback-delivery.service.js";
import { type CallbackEventJobPayload, type CallbackService, EVENT_JOB } from "./callbacks.service.js";

/**
 * The callback job kinds: `callbacks.event` (outbox event → event + delivery rows) and
 * `callbacks.deliver` (one delivery attempt). Both are idempotent.
 */
export function callbackJobHandlers(callbacks: CallbackService): [string, JobHandler][] {
  return [
    [EVENT_JOB, (payload: CallbackEventJobPayload, job) => callbacks.recordEventFromJob(payload, job.id)],
    [DELIVER_JOB, (payload: DeliverJobPayload, job) => callbacks.delivery.attempt(payload, job.id)],
  ];
}
