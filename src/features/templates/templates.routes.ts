import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, jwtSecurity, PageQuery, PaginatedOf } from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import { paginate, parsePageRequest } from "../../shared/pagination.js";
import { EmailTemplateInput, EmailTemplateSchema, SlugParams } from "./templates.schemas.js";
import type { EmailTemplatesService } from "./templates.service.js";

// Bodies are checked by the service (field messages in the spec's shape); Ajv only documents them.
const checkedByService = () => () => true;

/** /v1/email_template/ routes: CRUD by slug (previews are the notifications feature's). */
export function emailTemplatesRoutes(
  emailTemplates: EmailTemplatesService,
  publicBaseUrl: string,
): RouteModule {
  return async (app) => {
    const common = { config: { scope: "templates" as const }, validatorCompiler: checkedByService };
    const tags = ["email templates"];
    const body = (b: unknown) =>
      b && typeof b === "object" && !Array.isArray(b) ? (b as Record<string, unknown>) : {};

    app.post(
      "/v1/email_template/",
      {
        ...common,
        schema: {
          operationId: "createEmailTemplate",
          tags,
          summary: "Create an email template (its syntax is checked; errors name the line)",
          security: jwtSecurity,
          body: EmailTemplateInput,
          response: { 201: EmailTemplateSchema, ...errorResponses(400, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await emailTemplates.create(requireAuth(request), body(request.body))),
    );

    app.get(
      "/v1/email_template/",
      {
        ...common,
        schema: {
          operationId: "listEmailTemplates",
          tags,
          summary: "List the account's email templates by slug",
          security: jwtSecurity,
          querystring: PageQuery,
          response: { 200: PaginatedOf(EmailTemplateSchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const query = request.query;
        const page = parsePageRequest(query);
        const { results, count } = await emailTemplates.list(requireAuth(request).accountId, page);
        return paginate(results, count, page, publicBaseUrl, "/v1/email_template/", query);
      },
    );

    app.get(
      "/v1/email_template/:slug/",
      {
        ...common,
        schema: {
          operationId: "getEmailTemplate",
          tags,
          summary: "Read an email template",
          security: jwtSecurity,
          params: SlugParams,
          response: { 200: EmailTemplateSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => emailTemplates.get(requireAuth(request).accountId, request.params.slug),
    );

    app.patch(
      "/v1/email_template/:slug/",
      {
        ...common,
        schema: {
          operationId: "updateEmailTemplate",
          tags,
          summary: "Update an email template's slug, subject or html",
          security: jwtSecurity,
          params: SlugParams,
          body: EmailTemplateInput,
          response: { 200: EmailTemplateSchema, ...errorResponses(400, 404, 415, 422), ...authErrors },
        },
      },
      async (request) => emailTemplates.update(requireAuth(request), request.params.slug, body(request.body)),
    );

    app.delete(
      "/v1/email_template/:slug/",
      {
        ...common,
        schema: {
          operationId: "deleteEmailTemplate",
          tags,
          summary: "Delete an email template (422 while an open request uses it)",
          security: jwtSecurity,
          params: SlugParams,
          response: { 204: { type: "null" }, ...errorResponses(404, 422), ...authErrors },
        },
      },
      async (request, reply) => {
        await emailTemplates.remove(requireAuth(request), request.params.slug);
        return reply.code(204).send(null);
      },
    );
  };
}
