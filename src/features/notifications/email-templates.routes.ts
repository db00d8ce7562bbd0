import type { FastifyInstance } from "fastify";
import type { Container } from "../../app/container.js";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, jwtSecurity, PageQuery, PaginatedOf } from "../../http/openapi.js";
import { paginate, parsePageRequest } from "../../shared/pagination.js";
import {
  EmailTemplateInput,
  EmailTemplateSchema,
  RenderInput,
  RenderResponse,
  SlugParams,
} from "./notifications.schemas.js";

// Bodies are checked by the service (field messages in the spec's shape); Ajv only documents them.
const checkedByService = () => () => true;

/** /v1/email_template/ routes: CRUD by slug and previews (issue 5 §6). */
export async function emailTemplatesRoutes(
  app: FastifyInstance,
  { container }: { container: Container },
): Promise<void> {
  const { emailTemplates, config } = container;
  const common = { config: { scope: "templates" as const }, validatorCompiler: checkedByService };
  const tags = ["email templates"];
  const body = (b: unknown) =>
    b && typeof b === "object" && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
  const slugOf = (p: unknown) => (p as { slug: string }).slug;

  app.post(
    "/v1/email_template/",
    {
      ...common,
      schema: {
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
        tags,
        summary: "List the account's email templates by slug",
        security: jwtSecurity,
        querystring: PageQuery,
        response: { 200: PaginatedOf(EmailTemplateSchema), ...errorResponses(400, 404), ...authErrors },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      const page = parsePageRequest(query);
      const { results, count } = await emailTemplates.list(requireAuth(request).accountId, page);
      return paginate(results, count, page, config.publicBaseUrl, "/v1/email_template/", query);
    },
  );

  app.post(
    "/v1/email_template/render/",
    {
      ...common,
      schema: {
        tags,
        summary: "Preview: render a template (slug or html) against a request or sample data",
        security: jwtSecurity,
        body: RenderInput,
        response: { 200: RenderResponse, ...errorResponses(400, 404, 415, 422), ...authErrors },
      },
    },
    async (request) => emailTemplates.render(requireAuth(request).accountId, body(request.body)),
  );

  app.get(
    "/v1/email_template/:slug/",
    {
      ...common,
      schema: {
        tags,
        summary: "Read an email template",
        security: jwtSecurity,
        params: SlugParams,
        response: { 200: EmailTemplateSchema, ...errorResponses(404), ...authErrors },
      },
    },
    async (request) => emailTemplates.get(requireAuth(request).accountId, slugOf(request.params)),
  );

  app.patch(
    "/v1/email_template/:slug/",
    {
      ...common,
      schema: {
        tags,
        summary: "Update an email template's slug, subject or html",
        security: jwtSecurity,
        params: SlugParams,
        body: EmailTemplateInput,
        response: { 200: EmailTemplateSchema, ...errorResponses(400, 404, 415, 422), ...authErrors },
      },
    },
    async (request) =>
      emailTemplates.update(requireAuth(request), slugOf(request.params), body(request.body)),
  );

  app.delete(
    "/v1/email_template/:slug/",
    {
      ...common,
      schema: {
        tags,
        summary: "Delete an email template (422 while an open request uses it)",
        security: jwtSecurity,
        params: SlugParams,
        response: { 204: { type: "null" }, ...errorResponses(404, 422), ...authErrors },
      },
    },
    async (request, reply) => {
      await emailTemplates.remove(requireAuth(request), slugOf(request.params));
      return reply.code(204).send();
    },
  );
}
