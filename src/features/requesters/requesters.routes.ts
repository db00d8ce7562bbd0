import { requireAuth } from "../../http/auth.js";
import {
  authErrors,
  errorResponses,
  IdParams,
  jwtSecurity,
  NoContent,
  PageQuery,
  PaginatedOf,
} from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import { paginate, parsePageRequest } from "../../shared/pagination.js";
import { RequesterInput, RequesterPatch, RequesterSchema } from "./requesters.schemas.js";
import type { RequestersService } from "./requesters.service.js";

/** Body limit of requester writes: a 1 MB avatar is about 1.4 MB of base64. */
export const REQUESTER_BODY_LIMIT = 1_600_000;

const checkedByService = () => () => true;

/** /v1/requester/ routes (spec: Requesters). */
export function requestersRoutes(requesters: RequestersService, publicBaseUrl: string): RouteModule {
  return async (app) => {
    const common = { config: { scope: "requesters" as const }, validatorCompiler: checkedByService };
    const tags = ["requesters"];

    app.post(
      "/v1/requester/",
      {
        ...common,
        bodyLimit: REQUESTER_BODY_LIMIT,
        schema: {
          operationId: "createRequester",
          tags,
          summary: "Create a requester (first_name, last_name and email required)",
          security: jwtSecurity,
          body: RequesterInput,
          response: { 201: RequesterSchema, ...errorResponses(400, 413, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await requesters.create(requireAuth(request), request.body)),
    );

    app.get(
      "/v1/requester/",
      {
        ...common,
        schema: {
          operationId: "listRequesters",
          tags,
          summary: "List the account's requesters, newest first",
          security: jwtSecurity,
          querystring: PageQuery,
          response: { 200: PaginatedOf(RequesterSchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const query = request.query;
        const page = parsePageRequest(query);
        const { results, count } = await requesters.list(requireAuth(request), page);
        return paginate(results, count, page, publicBaseUrl, "/v1/requester/", query);
      },
    );

    app.get(
      "/v1/requester/:id/",
      {
        ...common,
        schema: {
          operationId: "getRequester",
          tags,
          summary: "Read a requester",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: RequesterSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => requesters.get(requireAuth(request), request.params.id),
    );

    app.patch(
      "/v1/requester/:id/",
      {
        ...common,
        bodyLimit: REQUESTER_BODY_LIMIT,
        schema: {
          operationId: "updateRequester",
          tags,
          summary: "Partially update a requester",
          security: jwtSecurity,
          params: IdParams,
          body: RequesterPatch,
          response: { 200: RequesterSchema, ...errorResponses(400, 404, 413, 415), ...authErrors },
        },
      },
      async (request) => requesters.update(requireAuth(request), request.params.id, request.body, "patch"),
    );

    app.put(
      "/v1/requester/:id/",
      {
        ...common,
        bodyLimit: REQUESTER_BODY_LIMIT,
        schema: {
          operationId: "replaceRequester",
          tags,
          summary:
            "Replace a requester (first_name, last_name and email required; omitted fields are cleared)",
          security: jwtSecurity,
          params: IdParams,
          body: RequesterInput,
          response: { 200: RequesterSchema, ...errorResponses(400, 404, 413, 415), ...authErrors },
        },
      },
      async (request) => requesters.update(requireAuth(request), request.params.id, request.body, "replace"),
    );

    app.delete(
      "/v1/requester/:id/",
      {
        ...common,
        schema: {
          operationId: "deleteRequester",
          tags,
          summary: "Delete a requester; requests naming it fall back to the owner's profile",
          security: jwtSecurity,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await requesters.delete(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
