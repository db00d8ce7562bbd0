import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import {
  authErrors,
  errorResponses,
  IdParams,
  jwtSecurity,
  NoContent,
  PageQuery,
} from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import { Page } from "../containers/index.js";
import type { EnrichmentsService } from "./enrichments.service.js";
import { kindPath, kindSchemas } from "./kind-schemas.js";

const checkedByService = () => () => true;
const config = { scope: "containers" as const };
const tags = ["enrichments"];

/**
 * The generic routes of every registered kind: create, list, get, update (when the kind has update
 * fields) and delete under `/v1/module_container_<module>/<resource>/`, then the kind's own routes
 * and sandbox helpers.
 */
export function enrichmentRoutes(service: EnrichmentsService): RouteModule {
  return async (app) => {
    for (const kind of service.deps.kinds) {
      const path = kindPath(kind);
      const { object, input, update } = kindSchemas(kind);
      const name = kind.schemaName;
      app.post(
        path,
        {
          config,
          validatorCompiler: checkedByService,
          schema: {
            operationId: `create${name}`,
            tags,
            summary: `${kind.summary}: add the step to a container`,
            security: jwtSecurity,
            body: input,
            response: { 201: object, ...errorResponses(400, 415, 422), ...authErrors },
          },
        },
        async (request, reply) =>
          reply
            .code(201)
            .send(await service.create(requireAuth(request), kind.name, await readFormLikeBody(request))),
      );
      app.get(
        path,
        {
          config,
          schema: {
            operationId: `list${name}s`,
            tags,
            summary: `List ${kind.name} steps, oldest first`,
            security: jwtSecurity,
            querystring: Type.Object({
              ...PageQuery.properties,
              container: Type.Optional(Type.String({ description: "Only this container's steps." })),
            }),
            response: { 200: Page(object, `${name}Page`), ...errorResponses(400, 404), ...authErrors },
          },
        },
        async (request) =>
          service.list(requireAuth(request), kind.name, request.query as Record<string, unknown>, path),
      );
      app.get(
        `${path}:id/`,
        {
          config,
          schema: {
            operationId: `get${name}`,
            tags,
            summary: `Read a ${kind.name} step`,
            security: jwtSecurity,
            params: IdParams,
            response: { 200: object, ...errorResponses(404), ...authErrors },
          },
        },
        async (request) => service.get(requireAuth(request), kind.name, request.params.id),
      );
      if (update) {
        app.patch(
          `${path}:id/`,
          {
            config,
            validatorCompiler: checkedByService,
            schema: {
              operationId: `update${name}`,
              tags,
              summary: `Change a ${kind.name} step (422 once it left pending)`,
              security: jwtSecurity,
              params: IdParams,
              body: update,
              response: { 200: object, ...errorResponses(400, 404, 415, 422), ...authErrors },
            },
          },
          async (request) =>
            service.update(
              requireAuth(request),
              kind.name,
              request.params.id,
              await readFormLikeBody(request),
            ),
        );
      }
      app.delete(
        `${path}:id/`,
        {
          config,
          schema: {
            operationId: `delete${name}`,
            tags,
            summary: `Delete a ${kind.name} step (409 while a pending step waits for it)`,
            security: jwtSecurity,
            params: IdParams,
            response: { 204: NoContent, ...errorResponses(404, 409), ...authErrors },
          },
        },
        async (request, reply) => {
          await service.delete(requireAuth(request), kind.name, request.params.id);
          return reply.code(204).send(null);
        },
      );
      if (kind.routes) await kind.routes(service.kindApi(kind))(app);
      if (kind.sandboxRoutes) await kind.sandboxRoutes(service.kindApi(kind))(app);
    }
  };
}
