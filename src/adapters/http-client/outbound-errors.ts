/** Why a destination was refused before any connection was made. */
export type OutboundBlockedReason = "private-address" | "scheme" | "insecure" | "invalid-url" | "dns";

/**
 * Base of every error an HttpClient rejects with. `message` is short and safe to store in a delivery
 * attempt shown to the account (no resolved addresses, no secrets); `cause`, when set, is for logs only.
 */
export abstract class OutboundError extends Error {
  /** Discriminates the three failure families without instanceof. */
  abstract readonly kind: "blocked" | "timeout" | "network";
}

/** The URL or its resolved addresses are not allowed; nothing was sent. */
export class OutboundBlockedError extends OutboundError {
  override readonly name = "OutboundBlockedError";
  readonly kind = "blocked";
  readonly reason: OutboundBlockedReason;

  constructor(reason: OutboundBlockedReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** No complete answer within the time limit (DNS + connect + response); the connection was destroyed. */
export class OutboundTimeoutError extends OutboundError {
  override readonly name = "OutboundTimeoutError";
  readonly kind = "timeout";
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The connection failed, was reset, TLS was rejected, or the response was not valid HTTP. */
export class OutboundNetworkError extends OutboundError {
  override readonly name = "OutboundNetworkError";
  readonly kind = "network";
  /** The system or TLS error code when there was one (e.g. "ECONNREFUSED"). */
  readonly code: string | undefined;

  constructor(message: string, code?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
