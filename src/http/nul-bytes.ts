/**
 * NUL characters (U+0000) in request input. PostgreSQL text cannot hold them and SQLite truncates
 * at them in places, so they are refused before any route reads its input: 400 in the spec's
 * validation shape naming the field (ADR 0028). Checked centrally for JSON and form bodies, query
 * strings and path parameters; multipart readers call `refuseNulFields` on each text field.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ValidationError } from "../shared/errors.js";

export const NUL_MESSAGE = "Null characters are not allowed.";

/** The 400 of a NUL character in `field`; recipient and session pages render it as a page. */
export class NulCharacterError extends ValidationError {
  constructor(readonly field: string) {
    super({ [field]: [NUL_MESSAGE] });
    this.name = "NulCharacterError";
  }
}

const MAX_DEPTH = 64;

/** The dotted path of the first string (value or key) holding U+0000 in `value`, or undefined. */
export function findNul(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path || "non_field_errors" : undefined;
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return undefined;
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], path ? `${path}.${i}` : String(i), depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const child = path ? `${path}.${key}` : key;
    if (key.includes("\u0000")) return path || key.replaceAll("\u0000", "") || "non_field_errors";
    const found = findNul(item, child, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Throws the 400 when `value` (a field's text, or an object of fields) holds U+0000. */
export function refuseNul(value: unknown, field = ""): void {
  const found = findNul(value, field);
  if (found) throw new NulCharacterError(found);
}

/** Path parameters, query string and parsed body of every request, before validation. */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    refuseNul(request.params);
    refuseNul(request.query);
    refuseNul(request.body);
  });
}
