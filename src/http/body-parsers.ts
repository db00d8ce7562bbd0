import formbody from "@fastify/formbody";
import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../shared/errors.js";

/**
 * Registers the body parsers: JSON (an empty body is `{}`, any charset of ASCII-compatible text),
 * form-urlencoded, and multipart (streamed: routes read parts themselves). Anything else is 415.
 */
export async function registerBodyParsers(app: FastifyInstance, maxJsonBytes: number): Promise<void> {
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i,
    { parseAs: "buffer", bodyLimit: maxJsonBytes },
    (_request, body: Buffer, done) => {
      // Plain-ASCII bodies declared ISO-8859-1 decode the same as UTF-8 (compat item 5).
      const text = body.toString("utf8");
      if (text.trim() === "") return done(null, {});
      try {
        done(null, JSON.parse(text, rejectProtoKeys));
      } catch {
        done(new AppError("INVALID_REQUEST", "JSON parse error: the body is not valid JSON."), undefined);
      }
    },
  );
  await app.register(formbody, { bodyLimit: maxJsonBytes });
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
