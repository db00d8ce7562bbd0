import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, IdParams, jwtSecurity } from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import type { Containers } from "../containers/index.js";
import { containerConsents } from "./consents.service.js";
import type { EnrichmentsService } from "./enrichments.service.js";

/** A consent record (the ledger allow-lists every field). */
export const ConsentSchema = Type.Object(
  {
    id: Type.Integer(),
    container: Type.Integer(),
    recipient: Type.Integer(),
    feature: Type.Union([Type.Integer(), Type.Null()], {
      description: "The step where it was accepted first.",
    }),
    disclosure_id: Type.String(),
    disclosure_version: Type.String(),
    text_sha256: Type.String({ description: "SHA-256 (hex) of the exact text shown." }),
    accepted_at: Type.String({ format: "date-time" }),
    ip: Type.String(),
    user_agent: Type.String(),
    auth_method: Type.String({
      description: "How the recipient was authenticated: `link`, `link+email_code`, `link+sms_code`.",
    }),
  },
  { title: "Consent" },
);

/** `GET /v1/module_container/container/{id}/consents/`: the container's consent ledger. */
export function consentRoutes(
  engine: EnrichmentsService,
  containers: Pick<Containers["containers"], "get">,
): RouteModule {
  return async (app) => {
    app.get(
      "/v1/module_container/container/:id/consents/",
      {
        config: { scope: "containers" as const },
        schema: {
          operationId: "listContainerConsents",
          tags: ["enrichments"],
          summary: "The disclosures the container's recipients accepted (the consent ledger)",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: Type.Array(ConsentSchema), ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => containerConsents(engine, containers, requireAuth(request), request.params.id),
    );
  };
}
