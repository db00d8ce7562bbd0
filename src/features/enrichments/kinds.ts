/**
 * Every enrichment kind, one line each (ADR 0063). The engine, the generic routes, the session page
 * and the dashboard take the kinds from here; nothing else names a kind.
 */
import type { EnrichmentKind } from "./enrichment-kind.js";
import { esignKind } from "./kinds/esign/esign.kind.js";
import { externalUrlKind } from "./kinds/externalurl/externalurl.kind.js";

/** The registered kinds, in the order the API reference lists them. */
export const ENRICHMENT_KINDS: readonly EnrichmentKind[] = [
  esignKind as unknown as EnrichmentKind,
  externalUrlKind,
];
