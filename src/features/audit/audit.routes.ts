import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, jwtSecurity } from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import { LogSearchQuerySchema, LogSearchResponseSchema } from "./audit.schemas.js";
import { type AuditService, checkSearchParameters } from "./audit.service.js";

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
          description:
            "Filters combine with AND; an empty value filters nothing. `relation_key` needs `related_model` (one entity's history); `since` (inclusive) and `until` (exclusive) bound the time. An unknown query parameter is 400 naming the allowed ones.",
          security: jwtSecurity,
          querystring: LogSearchQuerySchema,
          response: { 200: LogSearchResponseSchema, ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const { accountId } = requireAuth(request);
        const query = request.url.split("?")[1] ?? "";
        checkSearchParameters(new URLSearchParams(query).keys());
        return search.search(accountId, request.query);
      },
    );
  };
}
