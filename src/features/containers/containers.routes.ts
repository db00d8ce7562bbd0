/**
 * `POST /v1/module_container/container/`: the spec names this path and nothing else (no body, no
 * response, no fields), so Ferry cannot implement it. It answers a clear 404 instead of the generic
 * "not found" a typo gets, so an integrator learns at once that containers are missing, not misspelt.
 */
import type { FastifyInstance } from "fastify";
import type { Container } from "../../app/container.js";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, jwtSecurity } from "../../http/openapi.js";
import { AppError } from "../../shared/errors.js";

export async function containersRoutes(app: FastifyInstance, _opts: { container: Container }): Promise<void> {
  app.post(
    "/v1/module_container/container/",
    {
      schema: {
        tags: ["containers"],
        summary: "Not available in Ferry: always 404",
        description:
          "The Secure File Exchange API names this path but documents no operation, body or fields for it, so Ferry does not offer containers. Authenticated calls get 404 RESOURCE_NOT_FOUND saying so.",
        security: jwtSecurity,
        response: { ...errorResponses(404), ...authErrors },
      },
    },
    async (request) => {
      requireAuth(request);
      throw new AppError(
        "RESOURCE_NOT_FOUND",
        "Containers (/v1/module_container/) are not available in Ferry: the API documents no operations or fields for them.",
      );
    },
  );
}
