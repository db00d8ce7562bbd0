import { type TSchema, Type } from "typebox";

/** `{"code": "...", "detail": "..."}`: every error other than validation (spec Errors table). */
export const ErrorBody = Type.Object(
  { code: Type.String({ examples: ["AUTHENTICATION_FAILURE"] }), detail: Type.String() },
  { description: "Error with a stable code name and a human-readable detail." },
);

/** `{"field": ["message"]}`: a validation failure (spec "Error body (validation)"). */
export const ValidationBody = Type.Record(Type.String(), Type.Array(Type.String()), {
  description: "Validation failure: each key names a field, each value lists messages.",
  examples: [{ email: ["Enter a valid email address."] }],
});

/** Standard error responses to spread into a route's `response` schema. */
export function errorResponses(
  ...statuses: (400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 416 | 422 | 429)[]
) {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = s === 400 ? ValidationBody : ErrorBody;
  return out;
}

/** Errors every authenticated route may return. */
export const authErrors = errorResponses(401, 403, 429);

/** Path parameter of item routes: the id as a string (non-numeric ids are 404). */
export const IdParams = Type.Object({ id: Type.String({ description: "Integer id.", examples: ["12"] }) });

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

/** The paginated envelope around a result schema. */
export function PaginatedOf(item: TSchema) {
  return Type.Object({
    links: Type.Object({
      previous: Type.Union([Type.String(), Type.Null()]),
      next: Type.Union([Type.String(), Type.Null()]),
    }),
    total_pages: Type.Integer(),
    count: Type.Integer(),
    results: Type.Array(item),
  });
}

/** Security requirement of authenticated routes in the OpenAPI document. */
export const jwtSecurity = [{ JWT: [] }];

/** 204 No Content: the answer of deletes (the route's 204 schema documents it as empty). */
export const NoContent = Type.Null({ description: "No content." });
