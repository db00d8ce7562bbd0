/**
 * Session enrichments (ADR 0063): feature kinds beyond push and pull, each a folder under `kinds/`
 * registered in `kinds.ts`. The engine plugs into the containers through their FeatureExtensions
 * port; the session pages show each kind's step through `EnrichmentSteps`.
 */
import type { Logger } from "pino";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { PdfEngine } from "../../pdf/index.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { Containers } from "../containers/index.js";
import type { FeatureFilesService } from "../media/index.js";
import { consentRoutes } from "./consents.routes.js";
import {
  EnrichmentPurgeJob,
  ProviderCancelJob,
  ProviderReconcileJob,
  ProviderWebhookJob,
} from "./enrichment-jobs.js";
import type { EnrichmentKind } from "./enrichment-kind.js";
import { EnrichmentSteps } from "./enrichment-steps.service.js";
import { enrichmentRoutes } from "./enrichments.routes.js";
import { EnrichmentsService } from "./enrichments.service.js";
import { ENRICHMENT_KINDS } from "./kinds.js";
import { ProviderConnections } from "./provider-connections.service.js";
import { ProviderWebhooks } from "./provider-webhooks.service.js";
import { providerConnectionRoutes, providerWebhookRoutes } from "./providers.routes.js";

export { presentConsent } from "./consents.service.js";
export type { EnrichmentKind, EnrichmentView, KindMedia } from "./enrichment-kind.js";
export type { StepCard, StepCookie, StepInput } from "./enrichment-steps.service.js";
export { EnrichmentSteps } from "./enrichment-steps.service.js";
export { EnrichmentsService } from "./enrichments.service.js";
export { ProviderConnections } from "./provider-connections.service.js";
export { ProviderWebhooks } from "./provider-webhooks.service.js";

/** What the enrichments module offers. */
export interface Enrichments {
  readonly engine: EnrichmentsService;
  /** The recipient's steps: cards, pages, acts, return links. */
  readonly steps: EnrichmentSteps;
  readonly connections: ProviderConnections;
  readonly webhooks: ProviderWebhooks;
}

/** Builds the enrichments over the containers and plugs them into the containers' extension slot. */
export function createEnrichmentsFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  jobs: JobQueue;
  logger: Logger;
  containers: Containers;
  /** The media feature's whole-file reads and stores (`media.files`). */
  files: Pick<FeatureFilesService, "read" | "store" | "destroyOfFeature">;
  /** The PDF engine (esign documents and seals). */
  pdf: PdfEngine;
  /** The kinds to serve (tests add a test kind); default: every registered kind. */
  kinds?: readonly EnrichmentKind[];
}): Feature<Enrichments> {
  const engine = new EnrichmentsService({
    database: deps.database,
    config: deps.config,
    clock: deps.clock,
    keyRing: deps.keyRing,
    audit: deps.audit,
    features: deps.containers.features,
    containers: deps.containers.containers,
    lifecycle: deps.containers.lifecycle,
    kinds: deps.kinds ?? ENRICHMENT_KINDS,
    jobs: deps.jobs,
    files: deps.files,
    pdf: deps.pdf,
  });
  deps.containers.extensions.set(engine);
  const connections = new ProviderConnections(engine);
  engine.useProviders(connections);
  const webhooks = new ProviderWebhooks(engine, connections, deps.jobs, deps.logger);
  const steps = new EnrichmentSteps(engine, connections);
  const kindJobs = engine.deps.kinds.flatMap((kind) => kind.jobs?.(engine.kindApi(kind)) ?? []);
  return {
    service: { engine, steps, connections, webhooks },
    routes: [
      enrichmentRoutes(engine),
      consentRoutes(engine, deps.containers.containers),
      providerConnectionRoutes(connections),
      providerWebhookRoutes(webhooks, deps.config.publicBaseUrl),
    ],
    jobs: [
      handleJob(ProviderWebhookJob, (payload) => webhooks.apply(payload.event)),
      handleJob(ProviderCancelJob, (payload) => webhooks.cancel(payload)),
      handleJob(ProviderReconcileJob, (_payload, job) => webhooks.runRecurring(ProviderReconcileJob, job.id)),
      handleJob(EnrichmentPurgeJob, (_payload, job) => webhooks.runRecurring(EnrichmentPurgeJob, job.id)),
      ...kindJobs,
    ],
    scheduleRecurringJobs: () => webhooks.ensureScheduled(),
  };
}
