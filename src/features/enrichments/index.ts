/**
 * Session enrichments (ADR 0063): feature kinds beyond push and pull, each a folder under `kinds/`
 * registered in `kinds.ts`. The engine plugs into the containers through their FeatureExtensions
 * port; the session pages show each kind's step through `EnrichmentSteps`.
 */
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { Containers } from "../containers/index.js";
import type { EnrichmentKind } from "./enrichment-kind.js";
import { enrichmentRoutes } from "./enrichments.routes.js";
import { EnrichmentsService } from "./enrichments.service.js";
import { ENRICHMENT_KINDS } from "./kinds.js";

export type { EnrichmentKind, EnrichmentView } from "./enrichment-kind.js";
export { EnrichmentsService } from "./enrichments.service.js";

/** What the enrichments module offers. */
export interface Enrichments {
  readonly engine: EnrichmentsService;
}

/** Builds the enrichments over the containers and plugs them into the containers' extension slot. */
export function createEnrichmentsFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  containers: Containers;
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
    lifecycle: deps.containers.lifecycle,
    kinds: deps.kinds ?? ENRICHMENT_KINDS,
  });
  deps.containers.extensions.set(engine);
  return { service: { engine }, routes: [enrichmentRoutes(engine)] };
}
