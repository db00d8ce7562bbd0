import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, IdParams, jwtSecurity, NoContent } from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import type { AccountApplications } from "./account-applications.service.js";

const ApplicationSchema = Type.Object(
  {
    id: Type.Integer({ examples: [7] }),
    name: Type.String({ examples: ["CI deploys"] }),
    key_prefix: Type.String({
      description: "The first 12 characters of the key.",
      examples: ["fry_live_Q2x"],
    }),
    scopes: Type.String({
      description: '"*" or space-separated areas, each optionally `:read`.',
      examples: ["requests media:read"],
    }),
    active: Type.Boolean(),
    revoked_at: Type.Union([Type.String(), Type.Null()]),
    last_used_at: Type.Union([Type.String(), Type.Null()], {
      description: "When a token was last issued for the key.",
    }),
    created: Type.String(),
  },
  { title: "Application" },
);

const ApplicationList = Type.Object({ results: Type.Array(ApplicationSchema) }, { title: "ApplicationList" });

const ApplicationInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, examples: ["CI deploys"] }),
    scopes: Type.Optional(
      Type.Union([Type.Array(Type.String()), Type.String()], {
        description: 'Areas the key may use ("requests", "media:read", ...); omitted or "*": everything.',
        examples: [["requests", "media:read"]],
      }),
    ),
  },
  { title: "ApplicationInput" },
);

const CreatedApplication = Type.Object(
  {
    application: ApplicationSchema,
    api_key: Type.String({ description: "The new API key: shown this once, store it now." }),
  },
  { title: "CreatedApplication" },
);

const checkedByService = () => () => true;
const tags = ["applications"];

/**
 * /v1/application/ (Ferry extension): list, create and revoke the account's applications, so
 * automation can rotate keys. Only a key with every scope ("*") may call them.
 */
export function applicationsRoutes(applications: AccountApplications): RouteModule {
  return async (app) => {
    const actor = (request: FastifyRequest) => {
      const auth = requireAuth(request);
      return {
        accountId: auth.accountId,
        applicationId: auth.applicationId,
        ip: request.ip,
        method: request.method,
        path: request.url.split("?")[0] ?? "",
      };
    };

    app.get(
      "/v1/application/",
      {
        schema: {
          operationId: "listApplications",
          tags,
          summary:
            "List the account's applications, newest first (never their keys; needs a key with scope *)",
          security: jwtSecurity,
          response: { 200: ApplicationList, ...authErrors },
        },
      },
      async (request) => ({ results: await applications.list(requireAuth(request).accountId) }),
    );

    app.post(
      "/v1/application/",
      {
        validatorCompiler: checkedByService,
        schema: {
          operationId: "createApplication",
          tags,
          summary: "Create an application; its API key is in the answer, once (needs a key with scope *)",
          security: jwtSecurity,
          body: ApplicationInput,
          response: { 201: CreatedApplication, ...errorResponses(400, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await applications.create(actor(request), (request.body ?? {}) as Record<string, unknown>)),
    );

    app.get(
      "/v1/application/:id/",
      {
        schema: {
          operationId: "getApplication",
          tags,
          summary: "Read an application of the account (needs a key with scope *)",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: ApplicationSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => applications.get(requireAuth(request).accountId, Number(request.params.id)),
    );

    app.delete(
      "/v1/application/:id/",
      {
        schema: {
          operationId: "revokeApplication",
          tags,
          summary:
            "Revoke an application: its key and tokens stop working at once (needs a key with scope *)",
          security: jwtSecurity,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await applications.revoke(actor(request), Number(request.params.id));
        return reply.code(204).send(null);
      },
    );
  };
}
