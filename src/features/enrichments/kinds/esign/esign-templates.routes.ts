/**
 * Signing templates (ADR 0071): `/v1/module_container_esign/template/` create, list, get, delete.
 * A template names a PDF media object of the account (checked by the PDF engine, as a step's
 * document is), its roles and the fields of each role; a step created with `template` takes them.
 */
import { Type } from "typebox";
import { requireAuth } from "../../../../http/auth.js";
import { readFormLikeBody } from "../../../../http/body-parsers.js";
import {
  authErrors,
  errorResponses,
  IdParams,
  jwtSecurity,
  NoContent,
  PageQuery,
} from "../../../../http/openapi.js";
import { notFound, ValidationError } from "../../../../shared/errors.js";
import type { RouteModule } from "../../../../shared/feature.js";
import { parseId } from "../../../../shared/ids.js";
import { paginate, parsePageRequest } from "../../../../shared/pagination.js";
import { requireObjectBody } from "../../../../shared/validation.js";
import type { KindApi } from "../../enrichment-kind.js";
import { checkDocument } from "./esign.document.js";
import { checkRoles, type EsignField, readFields } from "./esign.model.js";
import { EsignField as FieldSchema } from "./esign.schemas.js";
import {
  deleteTemplate,
  type EsignTemplateRow,
  findTemplate,
  insertTemplate,
  listTemplates,
} from "./esign-templates.repository.js";

const PATH = "/v1/module_container_esign/template/";
const config = { scope: "containers" as const };
const tags = ["enrichments"];
const checked = () => () => true;

const Template = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    document: Type.Integer({ description: "The media id of the template's PDF." }),
    document_sha256: Type.String({ description: "SHA-256 of the PDF when the template was made." }),
    pages: Type.Integer({ description: "How many pages the PDF has." }),
    roles: Type.Array(Type.String()),
    fields: Type.Array(FieldSchema),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  { title: "EsignTemplate" },
);

const TemplateInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    document: Type.Integer({ description: "The media id of a PDF of the account." }),
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 20 }),
    fields: Type.Array(FieldSchema, { minItems: 1, maxItems: 500 }),
  },
  { title: "EsignTemplateInput", additionalProperties: false },
);

const TemplatePage = Type.Object(
  {
    links: Type.Object({
      previous: Type.Union([Type.String(), Type.Null()]),
      next: Type.Union([Type.String(), Type.Null()]),
    }),
    total_pages: Type.Integer(),
    count: Type.Integer(),
    page_size: Type.Integer(),
    results: Type.Array(Template),
  },
  { title: "EsignTemplatePage" },
);

/** The API object of a template (allow-listed). */
export function presentTemplate(row: EsignTemplateRow) {
  return {
    id: row.id,
    name: row.name,
    document: row.document,
    document_sha256: row.document_sha256,
    pages: (JSON.parse(row.pages) as unknown[]).length,
    roles: JSON.parse(row.roles) as string[],
    fields: JSON.parse(row.fields) as EsignField[],
    created: row.created,
    updated: row.updated,
  };
}

function readRoles(raw: unknown): string[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 20)
    throw ValidationError.field("roles", "Give 1 to 20 roles.");
  const roles = raw.map((r) => {
    if (typeof r !== "string" || r.trim() === "" || r.length > 64)
      throw ValidationError.field("roles", "A role is a name of 1 to 64 characters.");
    return r.trim();
  });
  if (new Set(roles).size !== roles.length) throw ValidationError.field("roles", "Roles are unique.");
  return roles;
}

/** Reads and checks a template body (400 shape, 422 rules and the PDF); nothing is stored. */
async function readTemplate(api: KindApi, accountId: number, raw: unknown) {
  const body = requireObjectBody(raw);
  const unknown = Object.keys(body).filter((k) => !["name", "document", "roles", "fields"].includes(k));
  if (unknown.length)
    throw new ValidationError(Object.fromEntries(unknown.map((k) => [k, ["Unknown field."]])));
  const name = typeof body.name === "string" ? body.name.trim() : "";
  if (!name || name.length > 200)
    throw ValidationError.field("name", "A name of 1 to 200 characters is required.");
  const document = body.document;
  if (typeof document !== "number" || !Number.isInteger(document) || document < 1)
    throw ValidationError.field("document", "The media id of a PDF is required.");
  const roles = readRoles(body.roles);
  if (!Array.isArray(body.fields) || body.fields.length === 0)
    throw ValidationError.field("fields", "Give 1 to 500 fields.");
  const fields = readFields(body.fields, new Set(roles));
  checkRoles(fields, new Set(roles));
  const doc = await checkDocument(api.media, api.pdf, accountId, document, fields);
  return { name, document, roles, fields, doc };
}

/** The template routes, over the engine's kind API. */
export function esignTemplateRoutes(api: KindApi): RouteModule {
  return async (app) => {
    app.post(
      PATH,
      {
        config,
        validatorCompiler: checked,
        schema: {
          operationId: "createEsignTemplate",
          tags,
          summary: "Make a signing template: a PDF of the account with named fields per role",
          security: jwtSecurity,
          body: TemplateInput,
          response: { 201: Template, ...errorResponses(400, 415, 422), ...authErrors },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const t = await readTemplate(api, auth.accountId, await readFormLikeBody(request));
        const now = api.now();
        const row = await insertTemplate(api.db, {
          account_id: auth.accountId,
          name: t.name,
          document: t.document,
          document_sha256: t.doc.sha256,
          pages: JSON.stringify(t.doc.pages),
          roles: JSON.stringify(t.roles),
          fields: JSON.stringify(t.fields),
          created: now,
          updated: now,
        });
        return reply.code(201).send(presentTemplate(row));
      },
    );
    app.get(
      PATH,
      {
        config,
        schema: {
          operationId: "listEsignTemplates",
          tags,
          summary: "List the account's signing templates, oldest first",
          security: jwtSecurity,
          querystring: PageQuery,
          response: { 200: TemplatePage, ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const query = request.query as Record<string, unknown>;
        const page = parsePageRequest(query);
        const { rows, count } = await listTemplates(api.db, auth.accountId, {
          offset: page.offset,
          limit: page.pageSize,
        });
        return paginate(rows.map(presentTemplate), count, page, api.config.publicBaseUrl, PATH, query);
      },
    );
    app.get(
      `${PATH}:id/`,
      {
        config,
        schema: {
          operationId: "getEsignTemplate",
          tags,
          summary: "Read a signing template",
          security: jwtSecurity,
          params: IdParams,
          response: { 200: Template, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const id = parseId(request.params.id);
        const row = id === undefined ? undefined : await findTemplate(api.db, auth.accountId, id);
        if (!row) throw notFound("Template");
        return presentTemplate(row);
      },
    );
    app.delete(
      `${PATH}:id/`,
      {
        config,
        schema: {
          operationId: "deleteEsignTemplate",
          tags,
          summary: "Delete a signing template (steps made from it keep their document and fields)",
          security: jwtSecurity,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const id = parseId(request.params.id);
        if (id === undefined || !(await deleteTemplate(api.db, auth.accountId, id)))
          throw notFound("Template");
        return reply.code(204).send(null);
      },
    );
  };
}
