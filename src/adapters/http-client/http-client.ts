import { lookup } from "node:dns/promises";
import { GuardedHttpClient } from "./guarded-http-client.js";

export {
  OutboundBlockedError,
  type OutboundBlockedReason,
  OutboundError,
  OutboundNetworkError,
  OutboundTimeoutError,
} from "./outbound-errors.js";

/** One outbound POST: headers as given (Host and Content-Length are set by the client), raw body. */
export interface HttpPostInit {
  headers: Record<string, string>;
  body: string | Buffer;
  /** Overrides the client's default total time limit for this request, in milliseconds. */
  timeoutMs?: number;
}

/** Any HTTP answer, whatever its status (3xx are not followed; the caller decides what counts as success). */
export interface HttpResult {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Start of the response body decoded as UTF-8, at most 1 KiB, never ending in a split character. */
  bodyExcerpt: string;
  /** Wall time from the call to the end of reading, in milliseconds. */
  durationMs: number;
}

/** One outbound request of any method, whose whole answer body the caller reads (provider APIs). */
export interface HttpRequestInit {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers: Record<string, string>;
  /** Raw body; none is sent (and no Content-Length) when absent. */
  body?: string | Buffer;
  /** Overrides the client's default total time limit for this request, in milliseconds. */
  timeoutMs?: number;
  /**
   * Largest answer body accepted, in bytes; a larger one rejects with OutboundNetworkError code
   * RESPONSE_TOO_LARGE and the connection is closed. Default: the client's maxResponseBytes.
   */
  maxResponseBytes?: number;
}

/** Any HTTP answer with its whole body (3xx are not followed; the caller decides what counts as success). */
export interface HttpFullResult {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** Wall time from the call to the end of reading, in milliseconds. */
  durationMs: number;
}

/**
 * Outbound HTTP port used for callbacks and provider APIs. `post` (callbacks) keeps a 1 KiB excerpt of
 * the answer; `request` (provider APIs) returns the whole body within a size limit. Both resolve with
 * any HTTP answer and reject only with OutboundBlockedError, OutboundTimeoutError or OutboundNetworkError.
 */
export interface HttpClient {
  post(url: string, init: HttpPostInit): Promise<HttpResult>;
  request(url: string, init: HttpRequestInit): Promise<HttpFullResult>;
}

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses; rejects or returns [] when it cannot. */
export type AddressResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** Settings for createHttpClient; see each field for its default. */
export interface HttpClientOptions {
  /** Allow loopback, private, link-local and other non-public destinations (development only). */
  allowPrivateAddresses: boolean;
  /** Refuse http:// URLs with reason "insecure" (the account's "secure callbacks" setting). Default false. */
  requireHttps?: boolean;
  /** Total time limit per request (DNS + connect + response), in milliseconds. Default 10 000. */
  timeoutMs?: number;
  /** Stop reading a response body after this many bytes and close the connection. Default 64 KiB. */
  maxResponseBytes?: number;
  /** Host name resolution, replaceable in tests. Default: the system resolver (dns.lookup, all addresses). */
  resolver?: AddressResolver;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** Builds the outbound HTTP client. Throws TypeError for a non-positive timeout or response limit. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!isPositiveInteger(timeoutMs))
    throw new TypeError("createHttpClient: timeoutMs must be a positive integer");
  if (!isPositiveInteger(maxResponseBytes)) {
    throw new TypeError("createHttpClient: maxResponseBytes must be a positive integer");
  }
  return new GuardedHttpClient({
    allowPrivateAddresses: options.allowPrivateAddresses,
    requireHttps: options.requireHttps ?? false,
    timeoutMs,
    maxResponseBytes,
    resolver: options.resolver ?? resolveWithSystem,
  });
}

/** The default resolver: every address the system resolver returns, in its order. */
export async function resolveWithSystem(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

function isPositiveInteger(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0;
}
