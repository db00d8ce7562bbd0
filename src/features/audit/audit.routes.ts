import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, jwtSecurity } from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import { LogSearchQuerySchema, LogSearchResponseSchema } from "./audit.schemas.js";
import type { AuditService } from "./audit.service.js";

/** GET /v1/logentry/search/ (spec: Log endpoint), scope "audit". */
export function auditRoutes(search: AuditService): RouteModule {
  return async (app) => {
    app.get(
      "/v1/logentry/search/",
      {
        config: { scope: "audit" },
        schema: {
          operationId: "searchAuditLog",
          tags: ["audit"],
          summary: "Search the account's audit log, newest first, with exact filters and marker pagination",
          security: jwtSecurity,
          querystring: LogSearchQuerySchema,
          response: { 200: LogSearchResponseSchema, ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const { accountId } = requireAuth(request);
        return search.search(accountId, request.query);
      },
    );
  };
}
