/**
 * The owner pages built on the other features' services (templates, branding, requests and
 * containers with their deliveries, audit log, sandbox outbox). They are composed after those
 * features exist (src/app/ferry.ts), through the dashboard kit of the dashboard feature.
 */
import type { RouteModule } from "../../shared/feature.js";
import type { AuditLog } from "../audit/index.js";
import type { BrandingService } from "../branding/index.js";
import type { CallbackService } from "../callbacks/index.js";
import type { Containers } from "../containers/index.js";
import type { Enrichments } from "../enrichments/index.js";
import type { MediaService } from "../media/index.js";
import type { CapturedOutbox, Notifications } from "../notifications/index.js";
import type { RequestsService } from "../requests/index.js";
import type { EmailTemplatesService } from "../templates/index.js";
import type { DashboardKit } from "./dashboard-kit.js";
import { auditPages } from "./pages/audit.pages.js";
import { brandingPages } from "./pages/branding.pages.js";
import { outboxPages } from "./pages/outbox.pages.js";
import { requestPages } from "./pages/requests.pages.js";
import { templatePages } from "./pages/templates.pages.js";

/** What the owner pages use. */
export interface OwnerPagesDeps {
  kit: DashboardKit;
  sandbox: boolean;
  outbox: CapturedOutbox;
  audit: AuditLog;
  requests: RequestsService;
  containers: Containers;
  enrichments: Enrichments;
  callbacks: CallbackService;
  notificationLog: Notifications["log"];
  media: MediaService;
  templates: EmailTemplatesService;
  preview: Notifications["preview"];
  branding: BrandingService;
  publicBaseUrl: string;
}

/** The owner pages' route modules, in registration order: add new page groups here. */
export function dashboardOwnerPages(deps: OwnerPagesDeps): RouteModule[] {
  const { kit } = deps;
  return [
    outboxPages({ kit, outbox: deps.outbox, sandbox: deps.sandbox }),
    templatePages({ kit, templates: deps.templates, preview: deps.preview }),
    brandingPages({ kit, branding: deps.branding, publicBaseUrl: deps.publicBaseUrl, sandbox: deps.sandbox }),
    auditPages({ kit, audit: deps.audit }),
    requestPages({
      kit,
      requests: deps.requests,
      containers: deps.containers,
      enrichments: deps.enrichments,
      callbacks: deps.callbacks,
      notificationLog: deps.notificationLog,
      media: deps.media,
    }),
  ];
}
