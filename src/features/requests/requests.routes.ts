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
import { CounterSchema, RequestInput, RequestSchema } from "./requests.schemas.js";
import type { RequestsService } from "./requests.service.js";

const checkedByService = () => () => true;

/** /v1/request/ routes (spec: Requests), except send_notification (notifications feature). */
export function requestsRoutes(requests: RequestsService, publicBaseUrl: string): RouteModule {
  return async (app) => {
    const common = { config: { scope: "requests" as const }, validatorCompiler: checkedByService };
    const tags = ["requests"];

    app.post(
      "/v1/request/",
      {
        ...common,
        schema: {
          operationId: "createRequest",
          tags,
          summary: "Create a request (push or pull), optionally as a draft",
          description:
            "Every field is optional; `type` defaults to pull. Accepts the aliases `contact_method`, `requestor_privatenotes` and `is_sending`.",
          security: jwtSecurity,
          body: RequestInput,
          response: { 201: RequestSchema, ...errorResponses(400, 413, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await requests.create(requireAuth(request), request.body)),
    );

    app.get(
      "/v1/request/",
      {
        ...common,
        schema: {
          operationId: "listRequests",
          tags,
          summary: "List the account's requests, newest first",
          security: jwtSecurity,
          querystring: PageQuery,
          response: { 200: PaginatedOf(RequestSchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const query = request.query;
        const page = parsePageRequest(query);
        const { results, count } = await requests.list(requireAuth(request), page);
        return paginate(results, count, page, publicBaseUrl, "/v1/request/", query);
      },
    );

    app.get(
      "/v1/request/counter/",
      {
        ...common,
        schema: {
          operationId: "countRequests",
          tags,
          summary: "Number of requests sent (not drafts) by the account",
          security: jwtSecurity,
          response: { 200: CounterSchema, ...authErrors },
        },
      },
      async (request) => requests.counter(requireAuth(request)),
    );

    app.get(
      "/v1/request/:id/",
      {
        ...common,
        schema: {
          operationId: "getRequest",
          tags,
          summary: "Read a request with its media",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: RequestSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => requests.get(requireAuth(request), request.params.id),
    );

    app.patch(
      "/v1/request/:id/",
      {
        ...common,
        schema: {
          operationId: "updateRequest",
          tags,
          summary: "Update a request; `is_draft: false` sends a draft",
          description:
            "422 when the request is complete, when a sent request would become a draft or change type, and when sending while media are uploading. A given `contact` list replaces the contacts.",
          security: jwtSecurity,
          params: IdParams,
          body: RequestInput,
          response: { 200: RequestSchema, ...errorResponses(400, 404, 413, 415, 422), ...authErrors },
        },
      },
      async (request) => requests.update(requireAuth(request), request.params.id, request.body),
    );

    app.delete(
      "/v1/request/:id/",
      {
        ...common,
        schema: {
          operationId: "deleteRequest",
          tags,
          summary: "Delete a request with its media (files are destroyed)",
          security: jwtSecurity,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await requests.delete(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
