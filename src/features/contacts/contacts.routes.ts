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
import { ContactInput, ContactSchema } from "./contacts.schemas.js";
import type { ContactsService } from "./contacts.service.js";

// Bodies are checked by the service (aliases, numeric strings, field paths in messages), so Ajv
// only documents them here.
const checkedByService = () => () => true;

/** /v1/contact/ routes (spec: Contacts). */
export function contactsRoutes(contacts: ContactsService, publicBaseUrl: string): RouteModule {
  return async (app) => {
    const common = { config: { scope: "contacts" as const }, validatorCompiler: checkedByService };
    const tags = ["contacts"];

    app.post(
      "/v1/contact/",
      {
        ...common,
        schema: {
          operationId: "createContact",
          tags,
          summary: "Create a contact with its contact methods",
          security: jwtSecurity,
          body: ContactInput,
          response: { 201: ContactSchema, ...errorResponses(400, 413, 415), ...authErrors },
        },
      },
      async (request, reply) => {
        const view = await contacts.create(requireAuth(request), request.body);
        return reply.code(201).send(view);
      },
    );

    app.get(
      "/v1/contact/",
      {
        ...common,
        schema: {
          operationId: "listContacts",
          tags,
          summary: "List the account's contacts, newest first",
          security: jwtSecurity,
          querystring: PageQuery,
          response: { 200: PaginatedOf(ContactSchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const query = request.query;
        const page = parsePageRequest(query);
        const { results, count } = await contacts.list(requireAuth(request), page);
        return paginate(results, count, page, publicBaseUrl, "/v1/contact/", query);
      },
    );

    app.get(
      "/v1/contact/:id/",
      {
        ...common,
        schema: {
          operationId: "getContact",
          tags,
          summary: "Read a contact",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: ContactSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => contacts.get(requireAuth(request), request.params.id),
    );

    app.patch(
      "/v1/contact/:id/",
      {
        ...common,
        schema: {
          operationId: "updateContact",
          tags,
          summary: "Update a contact; a given contactmethod list replaces the methods",
          description:
            "Partial update. Items of `contactmethod` carrying the `id` of one of the contact's methods update it; items without `id` are added; methods left out are deleted. Answers 200.",
          security: jwtSecurity,
          params: IdParams,
          body: ContactInput,
          response: { 200: ContactSchema, ...errorResponses(400, 404, 413, 415), ...authErrors },
        },
      },
      async (request) => contacts.update(requireAuth(request), request.params.id, request.body),
    );

    app.delete(
      "/v1/contact/:id/",
      {
        ...common,
        schema: {
          operationId: "deleteContact",
          tags,
          summary: "Delete a contact (422 while it belongs to an open sent request)",
          security: jwtSecurity,
          params: IdParams,
          response: {
            204: NoContent,
            ...errorResponses(404, 422),
            ...authErrors,
          },
        },
      },
      async (request, reply) => {
        await contacts.delete(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
