import type { FastifyRequest } from "fastify";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, jwtSecurity, PaginatedOf } from "../../http/openapi.js";
import { notFound } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { parseId } from "../../shared/ids.js";
import type { CallbackAccountSettings } from "./callback-delivery.service.js";
import {
  CallbackIdParams,
  CallbackSecretSchema,
  CallbackSettingsPatch,
  CallbackSettingsSchema,
  DeliveryDetailSchema,
  DeliveryListQuery,
  DeliverySchema,
} from "./callbacks.schemas.js";
import type { CallbackService } from "./callbacks.service.js";

function deliveryId(request: FastifyRequest<{ Params: { id: string } }>): number {
  const id = parseId(request.params.id);
  if (id === undefined) throw notFound("Callback");
  return id;
}

/**
 * Callback routes (scope "callbacks"): the signing secret and its rotation, the account's callback
 * settings, and the deliveries with their attempts (docs/callbacks.md).
 */
export function callbacksRoutes(callbacks: CallbackService): RouteModule {
  return async (app) => {
    const config = { scope: "callbacks" as const };
    const tags = ["callbacks"];

    app.get(
      "/v1/callback_secret/",
      {
        config,
        schema: {
          operationId: "getCallbackSecret",
          tags,
          summary: "The account's callback signing secret (created on first use)",
          security: jwtSecurity,
          response: { 200: CallbackSecretSchema, ...authErrors },
        },
      },
      async (request) => callbacks.secrets.getSecret(requireAuth(request).accountId),
    );

    app.post(
      "/v1/callback_secret/rotate/",
      {
        config,
        schema: {
          operationId: "rotateCallbackSecret",
          tags,
          summary: "Create a new signing secret; the previous one keeps signing for the configured overlap",
          security: jwtSecurity,
          response: { 200: CallbackSecretSchema, ...errorResponses(409), ...authErrors },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        return callbacks.secrets.rotate(auth.accountId, auth.applicationId);
      },
    );

    app.get(
      "/v1/callback_settings/",
      {
        config,
        schema: {
          operationId: "getCallbackSettings",
          tags,
          summary: "The account's callback settings: payload shape and secure callbacks (Ferry extension)",
          security: jwtSecurity,
          response: { 200: CallbackSettingsSchema, ...authErrors },
        },
      },
      async (request) => callbacks.getSettings(requireAuth(request).accountId),
    );

    app.patch(
      "/v1/callback_settings/",
      {
        config,
        schema: {
          operationId: "updateCallbackSettings",
          tags,
          summary: "Change the payload shape or secure callbacks (Ferry extension)",
          security: jwtSecurity,
          body: CallbackSettingsPatch,
          response: { 200: CallbackSettingsSchema, ...errorResponses(400, 415), ...authErrors },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        return callbacks.updateSettings(
          auth.accountId,
          (request.body ?? {}) as Partial<CallbackAccountSettings>,
          auth.applicationId,
        );
      },
    );

    app.get(
      "/v1/callback/",
      {
        config,
        schema: {
          operationId: "listCallbacks",
          tags,
          summary: "List callback deliveries, newest first (filters: request, type, status)",
          security: jwtSecurity,
          querystring: DeliveryListQuery,
          response: { 200: PaginatedOf(DeliverySchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => callbacks.listDeliveries(requireAuth(request).accountId, request.query),
    );

    app.get(
      "/v1/callback/:id/",
      {
        config,
        schema: {
          operationId: "getCallback",
          tags,
          summary: "A callback delivery with its payload and every attempt",
          security: jwtSecurity,
          params: CallbackIdParams,
          response: { 200: DeliveryDetailSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => callbacks.getDelivery(requireAuth(request).accountId, deliveryId(request)),
    );

    app.post(
      "/v1/callback/:id/redeliver/",
      {
        config,
        schema: {
          operationId: "redeliverCallback",
          tags,
          summary: "Send a delivery again now (same webhook-id); failures are retried on the normal schedule",
          security: jwtSecurity,
          params: CallbackIdParams,
          response: { 202: DeliveryDetailSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const view = await callbacks.redeliver(auth.accountId, deliveryId(request), auth.applicationId);
        return reply.code(202).send(view);
      },
    );
  };
}
