/**
 * The templates feature: the template engine (Liquid with Django-compatible filters), per-account
 * email templates (`/v1/email_template/`), and composition of request messages (SMS text, email
 * subject, HTML and text).
 */
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { TemplateRenderer } from "./render/renderer.js";
import { emailTemplatesRoutes } from "./templates.routes.js";
import { EmailTemplatesService, type TemplateUsage } from "./templates.service.js";

export type { TemplateEngine } from "./engine/template-engine.js";
export { TemplateError } from "./engine/template-error.js";
export {
  type ComposedEmail,
  composeEmail,
  composeLinkEmail,
  composeSms,
  generatedSubject,
  insertBeforeBodyEnd,
  type MessageInput,
  messageTranslator,
  SANDBOX_MARKER,
} from "./message-composer.js";
export { createRenderPool, type RenderPoolOptions } from "./render/render-pool.js";
export type { TemplateRenderer } from "./render/renderer.js";
export { RenderInput, RenderResponse } from "./templates.schemas.js";
export type { EmailTemplatesService, TemplateSource, TemplateUsage } from "./templates.service.js";

/** Builds the templates feature around `engine`. */
export function createTemplatesFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  renderer: TemplateRenderer;
  accounts: AccountsService;
  branding: BrandingService;
  usage: TemplateUsage;
}): Feature<EmailTemplatesService> {
  const service = new EmailTemplatesService(
    deps.database,
    deps.config,
    deps.clock,
    deps.audit,
    deps.renderer,
    deps.accounts,
    deps.branding,
    deps.usage,
  );
  return { service, routes: [emailTemplatesRoutes(service, deps.config.publicBaseUrl)] };
}
