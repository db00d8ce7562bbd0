/** The contacts feature: contacts and their contact methods (spec: Contacts), `/v1/contact/`. */
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import { contactsRoutes } from "./contacts.routes.js";
import { ContactsService, type ContactUsage } from "./contacts.service.js";

export { type ContactView, presentContactWithMethods } from "./contacts.presenter.js";
export type { ContactWithMethods } from "./contacts.repository.js";
export { ContactInput as ContactInputSchema, ContactSchema } from "./contacts.schemas.js";
export {
  type ContactInput,
  type ContactsService,
  type ContactUsage,
  contactFields,
  parseContactInput,
} from "./contacts.service.js";
export { checkMethodValue, INTERFACE_CLASSES, type InterfaceClass } from "./contacts.validation.js";

/** Builds the contacts feature; `usage` answers whether a contact is still needed by a request. */
export function createContactsFeature(deps: {
  database: Database;
  clock: Clock;
  audit: AuditWriter;
  usage: ContactUsage;
  publicBaseUrl: string;
}): Feature<ContactsService> {
  const service = new ContactsService(deps.database, deps.clock, deps.audit, deps.usage);
  return { service, routes: [contactsRoutes(service, deps.publicBaseUrl)] };
}
