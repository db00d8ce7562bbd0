import { type TSchema, Type } from "typebox";
import { errorStatus } from "../shared/errors.js";

/** `{"code": "...", "detail": "..."}`: every error other than validation (spec Errors table). */
export const ErrorBody = Type.Object(
  {
    code: Type.String({
      enum: Object.keys(errorStatus),
      description: "Stable code name; each code has one HTTP status (README, Errors).",
      examples: ["AUTHENTICATION_FAILURE"],
    }),
    detail: Type.String({ description: "Human-readable; may change between versions." }),
  },
  { title: "Error", description: "Error with a stable code name and a human-readable detail." },
);

/** `{"field": ["message"]}`: a validation failure (spec "Error body (validation)"). */
export const ValidationBody = Type.Record(Type.String(), Type.Array(Type.String()), {
  title: "ValidationError",
  description: "Validation failure: each key names a field, each value lists messages.",
  examples: [{ email: ["Enter a valid email address."] }],
});

/** A 400: field messages, or `{"code": "INVALID_REQUEST", ...}` for a body that cannot be read at all. */
const BadRequestBody = Type.Union([ValidationBody, ErrorBody], {
  description:
    "Field messages (`ValidationError`), or an `Error` with code INVALID_REQUEST when the body cannot be parsed.",
});

/** Standard error responses to spread into a route's `response` schema. */
export function errorResponses(
  ...statuses: (400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 416 | 422 | 429 | 503)[]
) {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = s === 400 ? BadRequestBody : ErrorBody;
  return out;
}

/**
 * Errors every authenticated route may return. 503: the call could not be recorded in the audit
 * log (a read is then not answered; docs/audit.md), or the server is stopping; retry after
 * `Retry-After`.
 */
export const authErrors = errorResponses(401, 403, 429, 503);

/** Description of integer path ids; the OpenAPI document types such parameters as integers. */
export const INTEGER_ID = "Integer id.";

/**
 * Path parameter of item routes: read as a string (non-numeric ids are 404, not 400), documented
 * as an integer (see `finishOpenApiDocument`).
 */
export const IdParams = Type.Object({ id: Type.String({ description: INTEGER_ID, examples: ["12"] }) });

/** Pagination query shared by list routes. */
export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: "1-based page number." })),
  page_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: 10,
      description: "Items per page; values above 100 are clamped to 100.",
    }),
  ),
});

/** The paginated envelope around a result schema: named `<Item>Page` in the OpenAPI document. */
export function PaginatedOf(
  item: TSchema,
  title = `${String((item as { title?: string }).title ?? "Item")}Page`,
) {
  return Type.Object(
    {
      links: Type.Object({
        previous: Type.Union([Type.String(), Type.Null()]),
        next: Type.Union([Type.String(), Type.Null()]),
      }),
      total_pages: Type.Integer(),
      count: Type.Integer(),
      page_size: Type.Integer({
        description:
          "Items per page used for this answer: the page_size asked for, or 100 when more was asked.",
      }),
      results: Type.Array(item),
    },
    { title },
  );
}

/** Security requirement of authenticated routes in the OpenAPI document. */
export const jwtSecurity = [{ JWT: [] }];

/** A binary answer (downloads): documented with its own content type, never as JSON. */
export function binaryResponse(description: string, contentType = "application/octet-stream") {
  const bytes = Type.Unsafe<Uint8Array | string>({ type: "string", format: "binary" });
  return { description, content: { [contentType]: { schema: bytes } } };
}

/** 204 No Content: the answer of deletes (the route's 204 schema documents it as empty). */
export const NoContent = Type.Null({ description: "No content." });

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * @fastify/swagger `transform`: public routes (`config.public`) get `security: []`, every other
 * documented route the JWT requirement, so each operation states how it authenticates.
 */
export function transformRouteSchema(input: {
  schema: JsonObject;
  url: string;
  route: { config?: unknown };
}): { schema: JsonObject; url: string } {
  const { schema, url, route } = input;
  if (!schema || schema.hide || schema.security) return { schema, url };
  const isPublic = isObject(route.config) && route.config.public === true;
  return { schema: { ...schema, security: isPublic ? [] : jwtSecurity }, url };
}

/**
 * Final pass over the generated document (ADR 0024): every schema with a `title` becomes a named
 * entry of `components.schemas` referenced by `$ref` (so generated clients get `Request`,
 * `Media`, ... types), and path ids described as INTEGER_ID are typed as integers. Two different
 * schemas with one title are a programming error and throw.
 */
export function finishOpenApiDocument<T extends JsonObject>(document: T): T {
  const components = (isObject(document.components) ? document.components : {}) as JsonObject;
  const named = (isObject(components.schemas) ? components.schemas : {}) as JsonObject;
  const seen = new Map<string, string>();

  const hoist = (node: unknown, inExample: boolean): unknown => {
    if (Array.isArray(node)) return node.map((v) => hoist(v, inExample));
    if (!isObject(node) || inExample) return node;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(node)) out[k] = hoist(v, k === "examples" || k === "example");
    const title = out.title;
    const isSchema = "type" in out || "properties" in out || "anyOf" in out || "oneOf" in out;
    if (typeof title !== "string" || !isSchema) return out;
    // A use may describe the schema in its own words (`{...Contact, description}`), and
    // @fastify/swagger moves a response's top-level examples to the media type: same type.
    const { description, examples, example, ...shape } = out;
    const text = JSON.stringify(shape);
    const previous = seen.get(title);
    if (previous !== undefined && previous !== text)
      throw new Error(`Two different OpenAPI schemas are titled ${title}:\n${previous}\n${text}`);
    const ref: JsonObject = { $ref: `#/components/schemas/${title}` };
    const entry = (named[title] ?? out) as JsonObject;
    if (previous === undefined) {
      seen.set(title, text);
      named[title] = out;
    } else if (description !== undefined && description !== entry.description) {
      ref.description = description;
    }
    if (entry.examples === undefined && examples !== undefined) entry.examples = examples;
    return ref;
  };

  const paths = hoist(document.paths, false) as JsonObject;
  for (const operations of Object.values(paths)) {
    if (!isObject(operations)) continue;
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || !Array.isArray(operation.parameters)) continue;
      for (const p of operation.parameters as JsonObject[]) {
        // @fastify/swagger lifts a parameter's description out of its schema.
        const schema = p.schema;
        if (p.in === "path" && isObject(schema) && (p.description ?? schema.description) === INTEGER_ID) {
          p.schema = { type: "integer", minimum: 1 };
          p.description = INTEGER_ID;
          if (p.example !== undefined) p.example = Number(p.example);
        }
      }
    }
  }
  undefaultRequestBodies(paths, named);
  const sorted = Object.fromEntries(Object.entries(named).sort(([a], [b]) => a.localeCompare(b)));
  return { ...document, paths, components: { ...components, schemas: sorted } };
}

/**
 * Request bodies state a field's server-side default in words, not with `default` (ADR 0079):
 * openapi-typescript 7 types every property with a `default` as present, so a body that omits a
 * defaulted field (`is_draft`, `type`, `display_chat`) would not compile in a client although the
 * server accepts it. Walks each request body's schema, and the components it references, in place.
 */
function undefaultRequestBodies(paths: JsonObject, named: JsonObject): void {
  // Components may be the very objects route validation uses: change copies.
  for (const [name, schema] of Object.entries(named)) named[name] = structuredClone(schema);
  const done = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const v of node) visit(v);
      return;
    }
    if (!isObject(node) || done.has(node)) return;
    done.add(node);
    if (typeof node.$ref === "string" && node.$ref.startsWith("#/components/schemas/"))
      visit(named[node.$ref.slice("#/components/schemas/".length)]);
    if ("default" in node) {
      const said = `Default when omitted: \`${JSON.stringify(node.default)}\`.`;
      node.description = typeof node.description === "string" ? `${node.description} ${said}` : said;
      delete node.default;
    }
    for (const key of ["properties", "patternProperties", "$defs"] as const)
      if (isObject(node[key])) for (const v of Object.values(node[key])) visit(v);
    for (const key of ["items", "additionalProperties", "anyOf", "oneOf", "allOf", "not"] as const)
      visit(node[key]);
  };
  for (const operations of Object.values(paths)) {
    if (!isObject(operations)) continue;
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || !isObject(operation.requestBody)) continue;
      const content = operation.requestBody.content;
      if (!isObject(content)) continue;
      for (const media of Object.values(content)) if (isObject(media)) visit(media.schema);
    }
  }
}
