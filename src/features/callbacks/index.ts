/**
 * The callbacks feature: events recorded in the transaction of their cause, signed deliveries
 * (Standard Webhooks) with retries and attempts, secrets and settings (`/v1/callback*`).
 */
import { createHttpClient } from "../../adapters/http-client/http-client.js";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import { CallbackDeliveryService } from "./callback-delivery.service.js";
import { CallbackSecretService } from "./callback-secrets.service.js";
import { type CallbackSubjects, DeliverCallbackJob, RecordCallbackEventJob } from "./callbacks.jobs.js";
import { callbacksRoutes } from "./callbacks.routes.js";
import { CallbackService } from "./callbacks.service.js";

export { checkCallbackDestination, checkCallbackUrl } from "./callback-url.js";
export type { CallbackSubjects } from "./callbacks.jobs.js";
export type { CallbackEventInput, CallbackService } from "./callbacks.service.js";

/**
 * Builds the callbacks feature: the SSRF-guarded clients (private addresses only with
 * FERRY_ALLOW_PRIVATE_CALLBACKS, CALLBACK_TIMEOUT_MS), secrets, delivery and the event service.
 * `subjects` gives each request's callback_url and mirrors delivery states on it.
 */
export function createCallbacksFeature(deps: {
  config: Config;
  database: Database;
  clock: Clock;
  jobs: JobQueue;
  audit: AuditWriter;
  keyRing: KeyRing;
  accounts: AccountsService;
  subjects: CallbackSubjects;
}): Feature<CallbackService> {
  const { config, database, clock, jobs, audit, keyRing, accounts, subjects } = deps;
  const base = {
    allowPrivateAddresses: config.FERRY_ALLOW_PRIVATE_CALLBACKS,
    timeoutMs: config.CALLBACK_TIMEOUT_MS,
  };
  const clients = {
    standard: createHttpClient(base),
    secure: createHttpClient({ ...base, requireHttps: true }),
  };
  const secrets = new CallbackSecretService(
    database,
    clock,
    keyRing,
    audit,
    config.CALLBACK_SECRET_OVERLAP_HOURS,
  );
  const delivery = new CallbackDeliveryService(
    database,
    clock,
    jobs,
    accounts,
    subjects,
    secrets,
    clients,
    config.CALLBACK_RETRY_SCHEDULE_SECONDS,
  );
  const service = new CallbackService(
    database,
    clock,
    jobs,
    audit,
    accounts,
    subjects,
    config.publicBaseUrl,
    secrets,
    delivery,
  );
  return {
    service,
    routes: [callbacksRoutes(service)],
    jobs: [
      handleJob(RecordCallbackEventJob, (payload, job) => service.recordEventFromJob(payload, job.id)),
      handleJob(DeliverCallbackJob, (payload, job) => delivery.attempt(payload, job.id)),
    ],
  };
}
