import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { BlobStoreUnavailableError } from "../adapters/blob-store/blob-validation.js";
import { isDatabaseUnavailable, isNoRowError } from "../db/database.js";
import {
  AppError,
  databaseUnavailable,
  type ErrorCode,
  errorStatus,
  notFound,
  storageUnavailable,
  ValidationError,
} from "../shared/errors.js";
import { IdOutOfRangeError, IntegerRangeError } from "./integer-range.js";
import { NulCharacterError } from "./nul-bytes.js";
import type { RouteRegistry } from "./route-registry.js";

/** The API versions this server speaks. */
export const SUPPORTED_VERSIONS = ["v1"] as const;

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Turns Ajv schema errors into the spec's `{"field": ["message"]}` shape with DRF-like wording. */
export function validationFields(errors: AjvError[], context?: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of errors) {
    const path = (e.instancePath ?? "").split("/").filter(Boolean);
    const missing = typeof e.params?.missingProperty === "string" ? e.params.missingProperty : undefined;
    const field = missing
      ? [...path, missing].join(".")
      : path.join(".") || (context === "body" ? "non_field_errors" : (context ?? "non_field_errors"));
    const message = describeAjvError(e);
    const list = out[field] ?? [];
    if (!list.includes(message)) list.push(message);
    out[field] = list;
  }
  return out;
}

function describeAjvError(e: AjvError): string {
  const p = e.params ?? {};
  switch (e.keyword) {
    case "required":
      return "This field is required.";
    case "maxLength":
      return `Ensure this field has no more than ${p.limit} characters.`;
    case "minLength":
      return Number(p.limit) <= 1
        ? "This field may not be blank."
        : `Ensure this field has at least ${p.limit} characters.`;
    case "type":
      return p.type === "integer" ? "A valid integer is required." : `Must be of type ${String(p.type)}.`;
    case "enum":
      return `Must be one of: ${(p.allowedValues as unknown[] | undefined)?.join(", ") ?? "the allowed values"}.`;
    case "format":
      return p.format === "email" ? "Enter a valid email address." : `Enter a valid ${String(p.format)}.`;
    case "maximum":
      return `Ensure this value is less than or equal to ${p.limit}.`;
    case "minimum":
      return `Ensure this value is greater than or equal to ${p.limit}.`;
    case "maxItems":
      return `Ensure this list has no more than ${p.limit} items.`;
    case "additionalProperties":
      return `Unknown field ${String(p.additionalProperty)}.`;
    default:
      return e.message ? `${e.message[0]?.toUpperCase()}${e.message.slice(1)}.` : "Invalid value.";
  }
}

/** Fastify's own error codes mapped to the catalog. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_BODY_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "INVALID_REQUEST",
  FST_ERR_CTP_EMPTY_JSON_BODY: "INVALID_REQUEST",
  FST_ERR_CTP_INVALID_JSON_BODY: "INVALID_REQUEST",
  FST_ERR_CTP_EMPTY_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_INVALID_MULTIPART_CONTENT_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_REQ_FILE_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  FST_PARTS_LIMIT: "PAYLOAD_TOO_LARGE",
  FST_FILES_LIMIT: "PAYLOAD_TOO_LARGE",
  FST_FIELDS_LIMIT: "PAYLOAD_TOO_LARGE",
  FST_PROTO_VIOLATION: "INVALID_REQUEST",
  FST_ERR_VALIDATION: "INVALID_REQUEST",
};

const safeDetails: Partial<Record<ErrorCode, string>> = {
  UNSUPPORTED_MEDIA_TYPE:
    "Unsupported media type in request. Send application/json, application/x-www-form-urlencoded or multipart/form-data as the route documents.",
  PAYLOAD_TOO_LARGE: "Request body is too large for this route.",
};

const MISSING_CONTENT_TYPE =
  "The request has a body but no Content-Type. Send JSON with Content-Type: application/json (or the type the route documents).";

/** Sends an AppError in the spec's shapes. */
export function sendAppError(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  // Pre-serialised: a route's response schema must never reshape or drop an error body.
  const body = err instanceof ValidationError ? err.fields : { code: err.code, detail: err.detail };
  return reply
    .code(err.status)
    .type("application/json; charset=utf-8")
    .serializer((p) => p as string)
    .send(JSON.stringify(body));
}

/** Installs the error handler and the not-found handler (404 with versions, 405 with Allow). */
export function installErrorHandling(app: FastifyInstance, routes: RouteRegistry): void {
  app.setErrorHandler(
    (error: FastifyError & { validation?: AjvError[]; validationContext?: string }, request, reply) => {
      if (error instanceof NulCharacterError && isPageRequest(request)) return sendBadInputPage(reply, error);
      if (error instanceof IntegerRangeError && isPageRequest(request))
        return sendInvalidAddressPage(reply, error.part === "params");
      if (error instanceof AppError) return sendAppError(reply, error);
      // A row read moments ago vanished before the statement that needed it (a concurrent delete):
      // to the caller it is simply gone.
      if (isTruncatedMultipart(error))
        return sendAppError(reply, new AppError("INVALID_REQUEST", MALFORMED_MULTIPART));
      // An id beyond the integer range names no row either.
      if (isNoRowError(error) || error instanceof IdOutOfRangeError)
        return sendAppError(reply, notFound(resourceOf(request)));
      if (error.validation) {
        // A page's path naming no valid id is a page that does not exist.
        if (error.validationContext === "params" && isPageRequest(request))
          return sendInvalidAddressPage(reply, true);
        return sendAppError(
          reply,
          new ValidationError(validationFields(error.validation, error.validationContext)),
        );
      }
      const mapped = error.code ? fastifyCodes[error.code] : undefined;
      if (mapped === "UNSUPPORTED_MEDIA_TYPE" && !request.headers["content-type"]) {
        return sendAppError(reply, new AppError(mapped, MISSING_CONTENT_TYPE));
      }
      if (mapped) {
        const detail =
          safeDetails[mapped] ?? (mapped === "INVALID_REQUEST" ? malformedDetail(error) : error.message);
        return sendAppError(reply, new AppError(mapped, detail));
      }
      if (error instanceof SyntaxError || error.statusCode === 400) {
        return sendAppError(reply, new AppError("INVALID_REQUEST", malformedDetail(error)));
      }
      if (error.statusCode === 413)
        return sendAppError(reply, new AppError("PAYLOAD_TOO_LARGE", safeDetails.PAYLOAD_TOO_LARGE!));
      if (error.statusCode === 415) {
        return sendAppError(
          reply,
          new AppError("UNSUPPORTED_MEDIA_TYPE", safeDetails.UNSUPPORTED_MEDIA_TYPE!),
        );
      }
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        const code = (Object.entries(errorStatus).find(([, s]) => s === error.statusCode)?.[0] ??
          "INVALID_REQUEST") as ErrorCode;
        return sendAppError(reply, new AppError(code, error.message || "Invalid request."));
      }
      // A dependency that did not answer is not the server's bug: the caller may retry.
      if (error instanceof BlobStoreUnavailableError) {
        request.log.warn({ err: error.message }, "file storage unavailable");
        return sendAppError(reply, storageUnavailable());
      }
      if (isDatabaseUnavailable(error)) {
        request.log.warn({ err: error.message }, "database unavailable");
        return sendAppError(reply, databaseUnavailable());
      }
      request.log.error({ err: error }, "unhandled error");
      return sendAppError(
        reply,
        new AppError(
          "INTERNAL_SERVER_ERROR",
          "An unexpected error occurred. The request id identifies it in the server logs.",
        ),
      );
    },
  );

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = routes.allowedMethods(path);
    if (allowed.length > 0) {
      reply.header("Allow", allowed.join(", "));
      return sendAppError(
        reply,
        new AppError("METHOD_NOT_SUPPORTED", `Method "${request.method}" not allowed.`),
      );
    }
    const first = path.split("/")[1] ?? "";
    const supported = SUPPORTED_VERSIONS.join(", ");
    if ((SUPPORTED_VERSIONS as readonly string[]).includes(first)) {
      return sendAppError(reply, new AppError("RESOURCE_NOT_FOUND", "Not found."));
    }
    if (/^v\d+$/i.test(first)) {
      return sendAppError(
        reply,
        new AppError(
          "RESOURCE_NOT_FOUND",
          `API version ${first} is not supported. Supported versions: ${supported}.`,
        ),
      );
    }
    return sendAppError(
      reply,
      new AppError(
        "RESOURCE_NOT_FOUND",
        `Not found. API paths start with a version segment, e.g. /v1/request/. Supported versions: ${supported}.`,
      ),
    );
  });
}

const MALFORMED_MULTIPART = "Malformed multipart body (missing or wrong boundary).";

/** busboy's words for a multipart body that ends or breaks mid-part (its errors carry no code). */
const BUSBOY_MALFORMED =
  /^(Unexpected end of (form|file|multipart data)|\w+ terminated early|Malformed part header|Malformed urlencoded form|Multipart: Boundary not found)/;

/**
 * A multipart body cut short (client gone, proxy timeout, truncated upload): the error surfaces
 * from whatever was reading the file stream, possibly wrapped as a cause.
 */
export function isTruncatedMultipart(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (BUSBOY_MALFORMED.test(e.message)) return true;
  }
  return false;
}

/** The resource a /v1/ path names, as its feature's 404 words it. */
const resourceNames: Record<string, string> = {
  request: "Request",
  requester: "Requester",
  contact: "Contact",
  email_template: "Email template",
  media: "Media",
  callback: "Callback",
  callback_settings: "Callback settings",
  settings: "SMTP settings",
  branding: "Branding",
  module_container_pull: "Container",
  module_container_pushpull: "Container",
  sandbox: "Request",
};

function resourceOf(request: FastifyRequest): string {
  const [version, segment] = (request.url.split("?")[0] ?? "").split("/").filter(Boolean);
  return (version === "v1" && segment && resourceNames[segment]) || "Resource";
}

/** A recipient or session page (HTML forms), not one of the JSON endpoints its scripts call. */
function isPageRequest(request: FastifyRequest): boolean {
  const path = request.url.split("?")[0] ?? "";
  if (!/^\/[rs]\//.test(path) || /\/(uploads|chat)(\/|$)/.test(path)) return false;
  return !/^application\/json/i.test(String(request.headers.accept ?? ""));
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The pages' plain error page for input they cannot take (the page scripts never send such input). */
function sendBadInputPage(reply: FastifyReply, err: NulCharacterError): FastifyReply {
  return reply
    .code(400)
    .type("text/html; charset=utf-8")
    .serializer((p) => p as string)
    .send(
      `<!doctype html><title>Bad request</title><p>The field ${escapeHtml(err.field)} contains a null character, which is not allowed. Go back, correct it and try again.</p>`,
    );
}

/** The pages' plain 404 (a path that names nothing) or 400 page (a query value they cannot take). */
function sendInvalidAddressPage(reply: FastifyReply, notFoundPage: boolean): FastifyReply {
  const [status, title, text] = notFoundPage
    ? [404, "Not found", "There is nothing at this address. Check the link you were sent."]
    : [400, "Bad request", "The address holds a value this page cannot take. Check the link you were sent."];
  return reply
    .code(status)
    .type("text/html; charset=utf-8")
    .serializer((p) => p as string)
    .send(`<!doctype html><html lang="en"><title>${title}</title><p>${text}</p></html>`);
}

function malformedDetail(error: Error & { code?: string }): string {
  if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY" || error instanceof SyntaxError)
    return "JSON parse error: the body is not valid JSON.";
  if (error.code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH") return "Content-Length does not match the body.";
  if (/multipart|boundary/i.test(error.message)) return MALFORMED_MULTIPART;
  return "Malformed request.";
}
