import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import { authErrors, errorResponses, IdParams, jwtSecurity, NoContent } from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import {
  ProviderConnectionInput,
  ProviderConnectionSchema,
  type ProviderConnections,
} from "./provider-connections.service.js";
import type { ProviderWebhooks } from "./provider-webhooks.service.js";

const PATH = "/v1/provider_connections/";
const config = { scope: "providers" as const };
const tags = ["providers"];

/** The account's provider connections (key scope `providers`). */
export function providerConnectionRoutes(connections: ProviderConnections): RouteModule {
  return async (app) => {
    app.post(
      PATH,
      {
        config,
        validatorCompiler: () => () => true,
        schema: {
          operationId: "createProviderConnection",
          tags,
          summary:
            "Choose the provider of an enrichment kind for this account (settings sealed, never returned)",
          security: jwtSecurity,
          body: ProviderConnectionInput,
          response: { 201: ProviderConnectionSchema, ...errorResponses(400, 415, 422), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await connections.create(requireAuth(request), await readFormLikeBody(request))),
    );
    app.get(
      PATH,
      {
        config,
        schema: {
          operationId: "listProviderConnections",
          tags,
          summary: "The account's provider connections",
          security: jwtSecurity,
          response: { 200: Type.Array(ProviderConnectionSchema), ...authErrors },
        },
      },
      async (request) => connections.list(requireAuth(request)),
    );
    app.get(
      `${PATH}:id/`,
      {
        config,
        schema: {
          operationId: "getProviderConnection",
          tags,
          summary: "Read a provider connection",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: ProviderConnectionSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => connections.get(requireAuth(request), request.params.id),
    );
    app.delete(
      `${PATH}:id/`,
      {
        config,
        schema: {
          operationId: "deleteProviderConnection",
          tags,
          summary: "Delete a provider connection (new steps of the kind use `local` again)",
          security: jwtSecurity,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await connections.delete(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/** Most bytes of one provider webhook. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** The provider webhook ingress: the raw body, verified by the provider before anything is stored. */
export function providerWebhookRoutes(webhooks: ProviderWebhooks, publicBaseUrl: string): RouteModule {
  return async (app) => {
    await app.register(async (scoped) => {
      scoped.removeAllContentTypeParsers();
      scoped.addContentTypeParser(
        "*",
        { parseAs: "buffer", bodyLimit: WEBHOOK_BODY_LIMIT },
        (_req, body, done) => done(null, body),
      );
      scoped.post(
        "/v1/providers/:provider/webhook/:secret/",
        {
          config: { public: true },
          bodyLimit: WEBHOOK_BODY_LIMIT,
          validatorCompiler: () => () => true,
          schema: {
            operationId: "receiveProviderWebhook",
            tags,
            summary: "Where a provider posts its events (verified with the provider's own scheme)",
            description:
              "The URL is the connection's `webhook_url`. A bad or missing signature answers 401 and nothing is stored; an event already received answers 200 and changes nothing.",
            params: Type.Object({ provider: Type.String(), secret: Type.String() }),
            response: {
              200: Type.Object(
                { received: Type.Integer(), new: Type.Integer() },
                { title: "ProviderWebhookReceipt" },
              ),
              ...errorResponses(401, 404, 413),
            },
          },
        },
        async (request) => {
          const headers: Record<string, string | undefined> = {};
          for (const [name, value] of Object.entries(request.headers))
            headers[name] = Array.isArray(value) ? value.join(", ") : value;
          const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          const params = request.params as { provider: string; secret: string };
          return webhooks.receive(params.provider, params.secret, {
            headers,
            body,
            url: `${publicBaseUrl}${request.url}`,
          });
        },
      );
    });
  };
}
