/**
 * The branding feature: an account's white-label stylesheet, logo and custom recipient host
 * (`/v1/branding/`), and the one formula for recipient URLs.
 */
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import { brandingRoutes } from "./branding.routes.js";
import { BrandingService } from "./branding.service.js";

export type { BrandingFontRow, BrandingRow } from "./branding.repository.js";
export { type BrandingService, recipientUrl } from "./branding.service.js";

/** Builds the branding feature. */
export function createBrandingFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
}): Feature<BrandingService> {
  const service = new BrandingService(deps.database, deps.config, deps.clock, deps.audit);
  return { service, routes: [brandingRoutes(service)] };
}
