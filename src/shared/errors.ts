/**
 * The one error catalog. Services throw AppError; the HTTP error handler renders it as
 * `{"code": ..., "detail": ...}` (or, for ValidationError, the spec's `{"field": ["message"]}` shape).
 */

/** Error code → HTTP status. Code names follow the spec's Errors table with underscores. */
export const errorStatus = {
  INVALID_REQUEST: 400,
  AUTHENTICATION_FAILURE: 401,
  NOT_AUTHORIZED: 403,
  RESOURCE_NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  UNPROCESSABLE_ENTITY: 422,
  RATE_LIMIT_REACHED: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** A failure safe to show to the caller: `detail` never holds secrets or internals. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "AppError";
    this.status = errorStatus[code];
  }
}

/** 400 with the spec's validation shape: field name → list of messages. */
export class ValidationError extends AppError {
  constructor(readonly fields: Record<string, string[]>) {
    super("INVALID_REQUEST", Object.values(fields).flat().join(" "));
    this.name = "ValidationError";
  }

  /** Shorthand for one field with one message. */
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

/** 404 with one body for "absent" and "belongs to another account" alike. */
export function notFound(what = "Resource"): AppError {
  return new AppError("RESOURCE_NOT_FOUND", `${what} not found.`);
}

/** 422: the request is well-formed but breaks a business rule. */
export function unprocessable(detail: string): AppError {
  return new AppError("UNPROCESSABLE_ENTITY", detail);
}

/** Seconds a caller is told to wait (Retry-After) when a dependency did not answer. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: the database did not answer or refused work for now. */
export function databaseUnavailable(): AppError {
  return new AppError("SERVICE_UNAVAILABLE", "The database is not reachable right now. Try again shortly.", {
    "retry-after": String(DEPENDENCY_RETRY_AFTER_SECONDS),
  });
}

/** 503 with Retry-After: the file storage did not answer (in time) or refused; nothing was kept. */
export function storageUnavailable(): AppError {
  return new AppError(
    "SERVICE_UNAVAILABLE",
    "The file storage is not reachable right now; nothing was stored or sent. Try again shortly.",
    { "retry-after": String(DEPENDENCY_RETRY_AFTER_SECONDS) },
  );
}
