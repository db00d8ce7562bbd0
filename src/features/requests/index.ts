/**
 * The requests feature: push and pull requests with their contacts (spec: Requests, States and
 * transitions), `/v1/request/`. `RequestRecords` is the requests table's own state, built before
 * the features that need to peek at it (contacts, templates, media, callbacks) so that none of them
 * depends on the requests service.
 */
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { ContactsService } from "../contacts/index.js";
import type { MediaService } from "../media/index.js";
import type { RequestersService } from "../requesters/index.js";
import type { EmailTemplatesService } from "../templates/index.js";
import { RequestRecords } from "./request-records.js";
import { requestsRoutes } from "./requests.routes.js";
import { RequestsService } from "./requests.service.js";

export { RequestRecords } from "./request-records.js";
export type { RequestRow, RequestView } from "./requests.presenter.js";
export { RequestSchema } from "./requests.schemas.js";
export { DEFAULT_PUSH_EXPIRY_DAYS, type LoadedRequest, type RequestsService } from "./requests.service.js";

/** The requests table's state service (no dependencies: build it first). */
export function createRequestRecords(database: Database): RequestRecords {
  return new RequestRecords(database.dialect);
}

/** Builds the requests feature. */
export function createRequestsFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  accounts: AccountsService;
  contacts: ContactsService;
  requesters: RequestersService;
  branding: BrandingService;
  templates: EmailTemplatesService;
  media: MediaService;
}): Feature<RequestsService> {
  const service = new RequestsService(deps);
  return { service, routes: [requestsRoutes(service, deps.config.publicBaseUrl)] };
}
