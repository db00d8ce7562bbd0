/**
 * Integers in paths and query strings. Ids and counts are `integer` columns (32 bits on
 * PostgreSQL, which refuses a larger number in a query), so every path or query parameter a route's
 * schema declares an integer is checked against that range before validation and before any
 * handler reads it: 400 in the spec's validation shape naming the parameter (pages render their
 * 404 page for a path, their 400 page for a query). A path id declared as text (`INTEGER_ID`, read
 * by the handler so that a malformed id is not found) that is a number out of the range names no
 * row: 404, as any id that does not exist.
 */
import type { FastifyInstance, FastifyRequest, FastifySchema } from "fastify";
import { ValidationError } from "../shared/errors.js";
import { MAX_ROW_ID } from "../shared/ids.js";
import { INTEGER_ID } from "./openapi.js";

/** The range of the databases' `integer` columns. */
export const INTEGER_RANGE = { minimum: -MAX_ROW_ID - 1, maximum: MAX_ROW_ID } as const;

/** The 400 of an integer parameter outside INTEGER_RANGE; `part` says where it was. */
export class IntegerRangeError extends ValidationError {
  constructor(
    readonly field: string,
    readonly part: "params" | "querystring",
    message: string,
  ) {
    super({ [field]: [message] });
    this.name = "IntegerRangeError";
  }
}

/** An item id out of the integer range in a path: answered as the route's resource not found. */
export class IdOutOfRangeError extends Error {
  constructor(readonly field: string) {
    super(`path id ${field} is out of the integer range`);
    this.name = "IdOutOfRangeError";
  }
}

// biome-ignore lint/suspicious/noExplicitAny: JSON schemas are read as plain objects.
type Schema = Record<string, any>;

interface IntegerFields {
  params: string[];
  querystring: string[];
  /** Path ids read as text (described INTEGER_ID). */
  ids: string[];
}

/** True for a schema that allows an integer (directly or as one member of a union). */
function allowsInteger(schema: Schema | undefined): boolean {
  if (!schema || typeof schema !== "object") return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("integer")) return true;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some((s: Schema) => allowsInteger(s));
}

function integerNames(part: Schema | undefined): string[] {
  const properties = (part?.properties ?? {}) as Schema;
  return Object.keys(properties).filter((name) => allowsInteger(properties[name]));
}

function idNames(part: Schema | undefined): string[] {
  const properties = (part?.properties ?? {}) as Schema;
  return Object.keys(properties).filter((name) => properties[name]?.description === INTEGER_ID);
}

const NONE: IntegerFields = { params: [], querystring: [], ids: [] };
const cache = new WeakMap<object, IntegerFields>();

/** The integer path and query parameters a route's schema declares (read once per schema). */
function integerFieldsOf(schema: FastifySchema | undefined): IntegerFields {
  if (!schema) return NONE;
  let fields = cache.get(schema);
  if (!fields) {
    const s = schema as Schema;
    fields = {
      params: integerNames(s.params),
      querystring: integerNames(s.querystring),
      ids: idNames(s.params),
    };
    cache.set(schema, fields);
  }
  return fields;
}

/** The number `value` spells, or NaN (not a number at all: the route's validation or handler answers it). */
function numberOf(value: unknown): number {
  const text = typeof value === "string" ? value.trim() : typeof value === "number" ? String(value) : "";
  return text === "" ? Number.NaN : Number(text);
}

function outOfRange(n: number): boolean {
  return n > INTEGER_RANGE.maximum || n < INTEGER_RANGE.minimum;
}

/** Throws IntegerRangeError when `raw` (one value, or a repeated query value) is a number out of range. */
function checkRange(raw: unknown, field: string, part: "params" | "querystring"): void {
  for (const value of Array.isArray(raw) ? raw : [raw]) {
    const n = numberOf(value);
    if (Number.isNaN(n)) continue;
    if (n > INTEGER_RANGE.maximum)
      throw new IntegerRangeError(
        field,
        part,
        `Ensure this value is less than or equal to ${INTEGER_RANGE.maximum}.`,
      );
    if (n < INTEGER_RANGE.minimum)
      throw new IntegerRangeError(
        field,
        part,
        `Ensure this value is greater than or equal to ${INTEGER_RANGE.minimum}.`,
      );
  }
}

/** Checks the integer path and query parameters of every request, before validation. */
export function installIntegerRangeGuard(app: FastifyInstance): void {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    const fields = integerFieldsOf(request.routeOptions.schema);
    const params = (request.params ?? {}) as Record<string, unknown>;
    const query = (request.query ?? {}) as Record<string, unknown>;
    for (const name of fields.params) checkRange(params[name], name, "params");
    for (const name of fields.querystring) checkRange(query[name], name, "querystring");
    for (const name of fields.ids) if (outOfRange(numberOf(params[name]))) throw new IdOutOfRangeError(name);
  });
}
