/** The requesters feature: sender identities shown on recipient pages (spec: Requesters), `/v1/requester/`. */
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import { requestersRoutes } from "./requesters.routes.js";
import { RequestersService } from "./requesters.service.js";

export { presentRequester, type RequesterView } from "./requesters.presenter.js";
export type { RequesterRow } from "./requesters.repository.js";
export { RequesterSchema } from "./requesters.schemas.js";
export type { RequestersService } from "./requesters.service.js";

/** Builds the requesters feature. */
export function createRequestersFeature(deps: {
  database: Database;
  clock: Clock;
  audit: AuditWriter;
  publicBaseUrl: string;
}): Feature<RequestersService> {
  const service = new RequestersService(deps.database, deps.clock, deps.audit);
  return { service, routes: [requestersRoutes(service, deps.publicBaseUrl)] };
}
