/** Error codes of Ferry's API (the spec's `code`; each has one HTTP status). */
export type FerryErrorCode =
  | "INVALID_REQUEST"
  | "AUTHENTICATION_FAILURE"
  | "NOT_AUTHORIZED"
  | "RESOURCE_NOT_FOUND"
  | "METHOD_NOT_SUPPORTED"
  | "CONFLICT"
  | "GONE"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "RANGE_NOT_SATISFIABLE"
  | "UNPROCESSABLE_ENTITY"
  | "RATE_LIMIT_REACHED"
  | "INTERNAL_SERVER_ERROR"
  | "SERVICE_UNAVAILABLE";

const CODE_BY_STATUS: Record<number, FerryErrorCode> = {
  400: "INVALID_REQUEST",
  401: "AUTHENTICATION_FAILURE",
  403: "NOT_AUTHORIZED",
  404: "RESOURCE_NOT_FOUND",
  405: "METHOD_NOT_SUPPORTED",
  409: "CONFLICT",
  410: "GONE",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  416: "RANGE_NOT_SATISFIABLE",
  422: "UNPROCESSABLE_ENTITY",
  429: "RATE_LIMIT_REACHED",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

/** Base class of every error the SDK throws on purpose. */
export class FerryError extends Error {
  override name = "FerryError";
}

/**
 * An answer of the API outside 2xx. `code` is the spec's code (from the body's `code`, or the one the
 * status stands for when the body is the field-error shape); `fields` holds the field messages of a
 * validation error (`{"email": ["Enter a valid email address."]}`).
 */
export class FerryApiError extends FerryError {
  override name = "FerryApiError";
  readonly status: number;
  readonly code: FerryErrorCode | string;
  readonly detail: string;
  readonly fields: Record<string, string[]> | undefined;
  readonly body: unknown;
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;

  constructor(init: {
    status: number;
    body: unknown;
    requestId?: string | undefined;
    retryAfter?: number | undefined;
    operation?: string | undefined;
  }) {
    const body = init.body;
    let code: string = CODE_BY_STATUS[init.status] ?? `HTTP_${init.status}`;
    let detail = "";
    let fields: Record<string, string[]> | undefined;
    if (body && typeof body === "object" && !Array.isArray(body)) {
      const o = body as Record<string, unknown>;
      if (typeof o.code === "string" && typeof o.detail === "string") {
        code = o.code;
        detail = o.detail;
      } else {
        fields = {};
        for (const [k, v] of Object.entries(o)) {
          fields[k] = Array.isArray(v) ? v.map(String) : [String(v)];
        }
        detail = Object.entries(fields)
          .map(([k, v]) => `${k}: ${v.join(" ")}`)
          .join("; ");
      }
    } else if (typeof body === "string" && body) {
      detail = body.slice(0, 500);
    }
    super(
      `${init.operation ? `${init.operation}: ` : ""}${init.status} ${code}${detail ? `: ${detail}` : ""}`,
    );
    this.status = init.status;
    this.code = code;
    this.detail = detail;
    this.fields = fields;
    this.body = body;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}

/** The server's digest of an upload or download differs from the client's own. */
export class FerryIntegrityError extends FerryError {
  override name = "FerryIntegrityError";
  constructor(
    message: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(message);
  }
}

/** No credentials to get a token with, or the server refused them. */
export class FerryAuthError extends FerryError {
  override name = "FerryAuthError";
}
