import { parse as parseQueryString } from "node:querystring";
import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../shared/errors.js";
import { refuseNul } from "./nul-bytes.js";

/** True when a body sent as a form (or without a type) is really JSON text: it starts with { or [. */
export function looksLikeJson(body: string | Buffer): boolean {
  const text = typeof body === "string" ? body : body.subarray(0, 64).toString("latin1");
  return /^\s*[[{]/.test(text);
}

/** 415 for JSON text sent under another content type: never read as something else, never ignored. */
export function jsonUnderWrongType(sentAs: string): AppError {
  return new AppError(
    "UNSUPPORTED_MEDIA_TYPE",
    `The body is JSON but was sent as ${sentAs}. Send it with Content-Type: application/json.`,
  );
}

/**
 * Registers the body parsers: JSON (an empty body is `{}`, any charset of ASCII-compatible text),
 * form-urlencoded (JSON text under it is 415), and multipart (streamed: routes read parts
 * themselves). Anything else is 415. A write with neither a body nor a content type reads as `{}`.
 */
export async function registerBodyParsers(app: FastifyInstance, maxJsonBytes: number): Promise<void> {
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i,
    { parseAs: "buffer", bodyLimit: maxJsonBytes },
    (_request, body: Buffer, done) => {
      // Plain-ASCII bodies declared ISO-8859-1 decode the same as UTF-8 (some clients declare ISO-8859-1).
      const text = body.toString("utf8");
      if (text.trim() === "") return done(null, {});
      try {
        done(null, JSON.parse(text, rejectProtoKeys));
      } catch {
        done(new AppError("INVALID_REQUEST", "JSON parse error: the body is not valid JSON."), undefined);
      }
    },
  );
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: maxJsonBytes },
    (_request, body: string, done) => {
      if (looksLikeJson(body))
        return done(jsonUnderWrongType("application/x-www-form-urlencoded"), undefined);
      done(null, { ...parseQueryString(body) });
    },
  );
  app.addHook("preValidation", async (request) => {
    if (request.body === undefined && hasNoBody(request)) request.body = {};
  });
  await app.register(multipart, {
    limits: {
      fieldNameSize: 200,
      fieldSize: maxJsonBytes,
      fields: 100,
      files: 10,
      headerPairs: 200,
      parts: 120,
    },
  });
}

/** A request that carries no body at all: no content type, no length (or 0), no chunked encoding. */
function hasNoBody(request: FastifyRequest): boolean {
  const { headers } = request;
  if (headers["content-type"] !== undefined || headers["transfer-encoding"] !== undefined) return false;
  return headers["content-length"] === undefined || headers["content-length"] === "0";
}

function rejectProtoKeys(key: string, value: unknown): unknown {
  if (key === "__proto__" || key === "constructor") return undefined;
  return value;
}

/**
 * Reads every field of a multipart body into a plain object (file parts are read as UTF-8 text,
 * up to the parser's limits). For small forms such as get_token; media routes stream instead.
 */
export async function readMultipartFields(request: FastifyRequest): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === "file") out[part.fieldname] = (await part.toBuffer()).toString("utf8");
      else out[part.fieldname] = String(part.value);
      refuseNul(part.fieldname, "non_field_errors");
      refuseNul(out[part.fieldname], part.fieldname);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as { code?: string }).code ?? "";
    if (/LIMIT|TOO_LARGE/.test(code))
      throw new AppError("PAYLOAD_TOO_LARGE", "Request body is too large for this route.");
    throw new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
  }
  return out;
}

/** Reads a body that may be JSON, form-urlencoded or multipart into a flat object of fields. */
export async function readFormLikeBody(request: FastifyRequest): Promise<Record<string, unknown>> {
  if (request.isMultipart()) return readMultipartFields(request);
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("INVALID_REQUEST", "The body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}
