import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../../config/config.js";
import { requireAuth } from "../../http/auth.js";
import {
  authErrors,
  binaryResponse,
  errorResponses,
  IdParams,
  INTEGER_ID,
  jwtSecurity,
  NoContent,
  PaginatedOf,
} from "../../http/openapi.js";
import { notFound } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { parseId } from "../../shared/ids.js";
import { paginate, parsePageRequest } from "../../shared/pagination.js";
import { RenderInput, RenderResponse } from "../templates/index.js";
import type { CapturedOutbox } from "./captured-outbox.service.js";
import type { NotificationDelivery } from "./deliver-notification.service.js";
import type { MessagePreview } from "./message-preview.service.js";
import type { NotificationLog } from "./notification-log.service.js";
import { presentCapturedMessage } from "./notifications.presenter.js";
import type { CapturedFilter } from "./notifications.repository.js";
import {
  CapturedMessageSchema,
  CapturedQuery,
  NotificationListQuery,
  NotificationRecordSchema,
  SendNotificationResponse,
  SmtpSettingsInput,
  SmtpSettingsSchema,
} from "./notifications.schemas.js";
import type { NotificationSender } from "./send-notification.service.js";
import type { SmtpSettingsService } from "./smtp-settings.service.js";

// A transparent 1x1 GIF.
const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
const checkedByService = () => () => true;

/** The services behind the notification routes. */
export interface NotificationRouteDeps {
  sender: NotificationSender;
  delivery: NotificationDelivery;
  outbox: CapturedOutbox;
  preview: MessagePreview;
  smtpSettings: SmtpSettingsService;
  log: NotificationLog;
  config: Config;
}

/**
 * send_notification (POST, GET alias), email previews, the email open-tracking pixel, the sandbox
 * outbox and the account's custom SMTP settings.
 */
export function notificationsRoutes(deps: NotificationRouteDeps): RouteModule {
  return async (app) => {
    const { sender, delivery, outbox, preview, smtpSettings, log, config } = deps;

    app.get(
      "/v1/notification/",
      {
        config: { scope: "notifications" },
        schema: {
          operationId: "listNotifications",
          tags: ["notifications"],
          summary: "List the account's notifications with their delivery state, newest first",
          description:
            "Filter with `request`, `container` (ids) and `state` (queued, sent, failed). Each send_notification call adds one notification per contact method.",
          security: jwtSecurity,
          querystring: NotificationListQuery,
          response: {
            200: PaginatedOf(NotificationRecordSchema),
            ...errorResponses(400, 404),
            ...authErrors,
          },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const query = request.query;
        const page = parsePageRequest(query);
        const { results, count } = await log.list(auth.accountId, query, page);
        return paginate(results, count, page, config.publicBaseUrl, "/v1/notification/", query);
      },
    );

    app.get(
      "/v1/notification/:id/",
      {
        config: { scope: "notifications" },
        schema: {
          operationId: "getNotification",
          tags: ["notifications"],
          summary: "Read one notification: channel, destination, state, error, sent and opened times",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: NotificationRecordSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => log.get(requireAuth(request).accountId, request.params.id),
    );

    const sendNotification = async (request: FastifyRequest<{ Params: { id: string } }>) => {
      const id = parseId(request.params.id);
      if (id === undefined) throw notFound("Request");
      return sender.send(requireAuth(request), id);
    };
    const sendSchema = (method: string) => ({
      operationId: method === "POST" ? "sendRequestNotification" : "sendRequestNotificationAlias",
      tags: ["requests"],
      summary:
        method === "POST"
          ? "Notify every contact method of a sent request (again: a reminder)"
          : "Alias of POST send_notification for clients that use GET (it sends: keys need the `notifications` scope, not `notifications:read`)",
      description:
        "Validates each contact method, records a notification per method and queues its delivery. The request must be sent (not a draft), not complete and not expired (422). Each delivery outcome becomes a `contact_notification_send` callback.",
      security: jwtSecurity,
      params: Type.Object({ id: Type.String({ description: INTEGER_ID, examples: ["42"] }) }),
      response: { 200: SendNotificationResponse, ...errorResponses(404, 415, 422), ...authErrors },
    });
    app.post(
      "/v1/request/:id/send_notification/",
      { config: { scope: "notifications" }, validatorCompiler: checkedByService, schema: sendSchema("POST") },
      sendNotification,
    );
    // It sends: the write scope, and no HEAD (which would run it too).
    app.get(
      "/v1/request/:id/send_notification/",
      {
        config: { scope: "notifications", writes: true },
        exposeHeadRoute: false,
        schema: sendSchema("GET"),
      },
      sendNotification,
    );

    app.get(
      "/t/o/:file",
      {
        config: { public: true },
        schema: {
          operationId: "trackEmailOpen",
          tags: ["notifications"],
          summary: "Email open-tracking pixel (records ABD-0010 on the first open)",
          params: Type.Object({ file: Type.String({ description: "<token>.gif" }) }),
          response: { 200: binaryResponse("A 1x1 transparent GIF.", "image/gif") },
        },
      },
      async (request, reply) => {
        const { file } = request.params;
        if (file.endsWith(".gif")) {
          try {
            await delivery.recordOpen(file.slice(0, -4), request.ip);
          } catch (err) {
            // The image is shown whatever happens; a lost open is logged, not shown to the reader.
            request.log.error({ err }, "could not record email open");
          }
        }
        return reply
          .header("content-type", "image/gif")
          .header("cache-control", "no-store, no-cache, must-revalidate, private")
          .header("referrer-policy", "no-referrer")
          .send(PIXEL);
      },
    );

    app.get(
      "/v1/sandbox/messages/",
      {
        config: { scope: "sandbox" },
        schema: {
          operationId: "listSandboxMessages",
          tags: ["notifications"],
          summary: "Sandbox outbox: the account's captured emails and SMS, newest first (404 in live)",
          security: jwtSecurity,
          querystring: CapturedQuery,
          response: { 200: PaginatedOf(CapturedMessageSchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        if (!config.isSandbox) throw notFound("Sandbox outbox");
        const auth = requireAuth(request);
        const query = request.query;
        const page = parsePageRequest(query);
        const filter: CapturedFilter = {
          channel: query.channel === "email" || query.channel === "sms" ? query.channel : undefined,
          // A `+` left unencoded in a query string arrives as a space: "+1415…" is meant.
          to: typeof query.to === "string" && query.to !== "" ? query.to.replace(/^ (?=\d)/, "+") : undefined,
        };
        const { rows, count } = await outbox.list(auth.accountId, filter, page);
        return paginate(
          rows.map(presentCapturedMessage),
          count,
          page,
          config.publicBaseUrl,
          "/v1/sandbox/messages/",
          query,
        );
      },
    );

    app.post(
      "/v1/email_template/render/",
      {
        config: { scope: "templates" },
        validatorCompiler: checkedByService,
        schema: {
          operationId: "renderEmailTemplate",
          tags: ["email templates"],
          summary: "Preview: render a template (slug or html) against a request or sample data",
          security: jwtSecurity,
          body: RenderInput,
          response: { 200: RenderResponse, ...errorResponses(400, 404, 415, 422), ...authErrors },
        },
      },
      async (request) => {
        const body = request.body;
        return preview.render(
          requireAuth(request).accountId,
          body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {},
        );
      },
    );

    const smtpCommon = { config: { scope: "notifications" as const }, validatorCompiler: checkedByService };
    app.get(
      "/v1/settings/smtp/",
      {
        ...smtpCommon,
        schema: {
          operationId: "getSmtpSettings",
          tags: ["notifications"],
          summary: "The account's custom SMTP settings (404 when none)",
          security: jwtSecurity,
          response: { 200: SmtpSettingsSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => smtpSettings.get(requireAuth(request).accountId),
    );
    app.put(
      "/v1/settings/smtp/",
      {
        ...smtpCommon,
        schema: {
          operationId: "replaceSmtpSettings",
          tags: ["notifications"],
          summary:
            "Set the account's own SMTP server (custom sender domain); the password is stored encrypted",
          security: jwtSecurity,
          body: SmtpSettingsInput,
          response: { 200: SmtpSettingsSchema, ...errorResponses(400, 415), ...authErrors },
        },
      },
      async (request) =>
        smtpSettings.put(requireAuth(request), (request.body ?? {}) as Record<string, unknown>),
    );
    app.delete(
      "/v1/settings/smtp/",
      {
        ...smtpCommon,
        schema: {
          operationId: "deleteSmtpSettings",
          tags: ["notifications"],
          summary: "Remove the account's SMTP settings (the deployment's mailer is used again)",
          security: jwtSecurity,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await smtpSettings.remove(requireAuth(request));
        return reply.code(204).send(null);
      },
    );
  };
}
