import type { FastifyInstance } from "fastify";
import { auditRoutes } from "../features/audit/audit.routes.js";
import { authRoutes } from "../features/auth/auth.routes.js";
import { brandingRoutes } from "../features/branding/branding.routes.js";
import { callbacksRoutes } from "../features/callbacks/callbacks.routes.js";
import { contactsRoutes } from "../features/contacts/contacts.routes.js";
import { containersRoutes } from "../features/containers/containers.routes.js";
import { mediaRoutes } from "../features/media/media.routes.js";
import { emailTemplatesRoutes } from "../features/notifications/email-templates.routes.js";
import { notificationsRoutes } from "../features/notifications/notifications.routes.js";
import { recipientRoutes } from "../features/recipient/recipient.routes.js";
import { sandboxRecipientRoutes } from "../features/recipient/sandbox.routes.js";
import { requestersRoutes } from "../features/requesters/requesters.routes.js";
import { requestsRoutes } from "../features/requests/requests.routes.js";
import { webStaticRoutes } from "../web/static.routes.js";
import type { Container } from "./container.js";

/** A feature's route plugin. */
export type RoutePlugin = (app: FastifyInstance, opts: { container: Container }) => Promise<void>;

/** Every feature's routes, registered by build-server in this order. Add new features here. */
export const featureRoutes: RoutePlugin[] = [
  authRoutes,
  auditRoutes,
  contactsRoutes,
  requestersRoutes,
  requestsRoutes,
  callbacksRoutes,
  notificationsRoutes,
  emailTemplatesRoutes,
  brandingRoutes,
  webStaticRoutes,
  recipientRoutes,
  sandboxRecipientRoutes,
  mediaRoutes,
  containersRoutes,
];
