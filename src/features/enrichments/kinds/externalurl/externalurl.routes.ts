import { requireAuth } from "../../../../http/auth.js";
import { authErrors, errorResponses, IdParams, jwtSecurity } from "../../../../http/openapi.js";
import { notFound } from "../../../../shared/errors.js";
import type { RouteModule } from "../../../../shared/feature.js";
import type { KindApi } from "../../enrichment-kind.js";

/** The owner completes an externalurl step (status `completed`): `POST .../externalurl/{id}/complete/`. */
export function externalUrlRoutes(api: KindApi): RouteModule {
  return async (app) => {
    app.post(
      "/v1/module_container_externalurl/externalurl/:id/complete/",
      {
        config: { scope: "containers" as const },
        validatorCompiler: () => () => true,
        schema: {
          operationId: "completeExternalUrl",
          tags: ["enrichments"],
          summary:
            "Complete an externalurl step yourself (status `completed`; 409 while it waits, 422 once done)",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: api.schema, ...errorResponses(404, 409, 422), ...authErrors },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const view = await api.get(auth.accountId, request.params.id);
        const done = await api.setStatus(auth, view.id, "completed", {
          result: { ...(view.result ?? {}), completed_at: api.now() },
          auditValue: "externalurl completed by the owner",
        });
        return api.present(done);
      },
    );
  };
}

/** The sandbox helper that returns as the recipient would: `POST /v1/sandbox/externalurl/{id}/return/`. */
export function externalUrlSandboxRoutes(api: KindApi): RouteModule {
  return async (app) => {
    app.post(
      "/v1/sandbox/externalurl/:id/return/",
      {
        config: { scope: "sandbox" as const },
        validatorCompiler: () => () => true,
        schema: {
          operationId: "sandboxReturnExternalUrl",
          tags: ["sandbox"],
          summary: "Come back from the external URL as the recipient would (status `returned`; sandbox only)",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: api.schema, ...errorResponses(404, 409, 422), ...authErrors },
        },
      },
      async (request) => {
        if (!api.config.isSandbox) throw notFound("Sandbox helper");
        const auth = requireAuth(request);
        const view = await api.get(auth.accountId, request.params.id);
        const done = await api.setStatus({ ...auth, sandbox: true }, view.id, "returned", {
          result: { ...(view.result ?? {}), returned_at: api.now() },
          auditValue: "externalurl returned (sandbox)",
        });
        return api.present(done);
      },
    );
  };
}
