import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { StringDecoder } from "node:string_decoder";
import { isRefusedAddress } from "./address-guard.js";
import type {
  AddressResolver,
  HttpClient,
  HttpFullResult,
  HttpPostInit,
  HttpRequestInit,
  HttpResult,
  ResolvedAddress,
} from "./http-client.js";
import { OutboundBlockedError, OutboundNetworkError, OutboundTimeoutError } from "./outbound-errors.js";

/** Fully resolved settings of a GuardedHttpClient (createHttpClient fills in the defaults). */
export interface GuardedHttpClientOptions {
  allowPrivateAddresses: boolean;
  requireHttps: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  resolver: AddressResolver;
}

interface Target {
  secure: boolean;
  /** Host name or IP literal without IPv6 brackets, as used for DNS and TLS. */
  hostname: string;
  port: number;
  /** Host header value: the URL's host, brackets and non-default port included. */
  hostHeader: string;
  /** Path and query exactly as in the URL (fragment dropped). */
  path: string;
}

const EXCERPT_BYTES = 1024;
// Set by the client from the URL and body; a caller's value could disagree with what is sent.
const CLIENT_OWNED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);
const TLS_ERROR_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/**
 * HttpClient on node:http/https that refuses non-public destinations after a single DNS resolution,
 * connects to exactly the address it checked, follows no redirects, always verifies TLS certificates,
 * and bounds both time and response size (callback deliveries, provider APIs).
 */
export class GuardedHttpClient implements HttpClient {
  readonly #options: GuardedHttpClientOptions;

  constructor(options: GuardedHttpClientOptions) {
    this.#options = options;
  }

  /** Sends one POST; see HttpClient. Blocked destinations reject before any connection is opened. */
  async post(url: string, init: HttpPostInit): Promise<HttpResult> {
    const body = typeof init.body === "string" ? Buffer.from(init.body, "utf8") : init.body;
    const maxResponseBytes = this.#options.maxResponseBytes;
    return this.#exchange<Omit<HttpResult, "durationMs">>(
      url,
      "POST",
      init.headers,
      body,
      init.timeoutMs,
      (request, response, callbacks) => readExcerpt(request, response, maxResponseBytes, callbacks),
    );
  }

  /** Sends one request and reads its whole answer; see HttpClient. Blocked destinations reject before connecting. */
  async request(url: string, init: HttpRequestInit): Promise<HttpFullResult> {
    const body = typeof init.body === "string" ? Buffer.from(init.body, "utf8") : init.body;
    const limit = init.maxResponseBytes ?? this.#options.maxResponseBytes;
    if (!Number.isSafeInteger(limit) || limit <= 0) {
      throw new TypeError("request: maxResponseBytes must be a positive integer");
    }
    return this.#exchange<Omit<HttpFullResult, "durationMs">>(
      url,
      init.method,
      init.headers,
      body,
      init.timeoutMs,
      (request, response, callbacks) => readWhole(request, response, limit, callbacks),
    );
  }

  async #exchange<Result>(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    requestTimeoutMs: number | undefined,
    reader: ResponseReader<Result>,
  ): Promise<Result & { durationMs: number }> {
    const started = performance.now();
    const target = parseTarget(url, this.#options.requireHttps);
    const timeoutMs = requestTimeoutMs ?? this.#options.timeoutMs;

    return new Promise<Result & { durationMs: number }>((resolve, reject) => {
      let request: ClientRequest | undefined;
      let settled = false;
      const settle = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const fail = (error: unknown): void => settle(() => reject(error));
      const timer = setTimeout(() => {
        fail(new OutboundTimeoutError(timeoutMs));
        request?.destroy();
      }, timeoutMs);

      this.#checkedAddresses(target.hostname).then((addresses) => {
        if (settled) return;
        try {
          request = this.#send(target, addresses, method, headers, body, reader, {
            onResult: (result) =>
              settle(() => resolve({ ...result, durationMs: performance.now() - started })),
            onError: (error) => fail(error instanceof OutboundNetworkError ? error : toNetworkError(error)),
          });
        } catch (error) {
          fail(toNetworkError(error));
        }
      }, fail);
    });
  }

  /** Resolves once and refuses if any address is non-public (unless allowed); returns the addresses to dial. */
  async #checkedAddresses(hostname: string): Promise<ResolvedAddress[]> {
    const literal = isIP(hostname);
    const addresses: ResolvedAddress[] =
      literal === 0 ? await this.#resolve(hostname) : [{ address: hostname, family: literal === 6 ? 6 : 4 }];
    if (!this.#options.allowPrivateAddresses && addresses.some(({ address }) => isRefusedAddress(address))) {
      throw new OutboundBlockedError("private-address", "destination host resolves to a non-public address");
    }
    return addresses;
  }

  async #resolve(hostname: string): Promise<ResolvedAddress[]> {
    let answers: ResolvedAddress[];
    try {
      answers = await this.#options.resolver(hostname);
    } catch (error) {
      throw new OutboundBlockedError("dns", "destination host name could not be resolved", { cause: error });
    }
    const addresses = answers.flatMap(({ address }) => {
      const family = isIP(address);
      return family === 0 ? [] : [{ address, family: family === 6 ? (6 as const) : (4 as const) }];
    });
    if (addresses.length === 0 || addresses.length !== answers.length) {
      throw new OutboundBlockedError("dns", "destination host name could not be resolved");
    }
    return addresses;
  }

  #send<Result>(
    target: Target,
    addresses: ResolvedAddress[],
    method: string,
    callerHeaders: Record<string, string>,
    body: Buffer | undefined,
    reader: ResponseReader<Result>,
    callbacks: ReaderCallbacks<Result>,
  ): ClientRequest {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(callerHeaders)) {
      if (!CLIENT_OWNED_HEADERS.has(name.toLowerCase())) headers[name] = value;
    }
    headers["Host"] = target.hostHeader;
    if (body !== undefined) headers["Content-Length"] = String(body.length);

    // autoSelectFamily is passed through to net.connect; it lets every checked address be tried.
    const options: https.RequestOptions & { autoSelectFamily: boolean } = {
      method,
      host: target.hostname,
      port: target.port,
      path: target.path,
      headers,
      // A fresh connection per request: a pooled socket could outlive the address check it was made for.
      agent: false,
      lookup: pinnedLookup(addresses),
      autoSelectFamily: true,
    };
    if (target.secure) {
      options.rejectUnauthorized = true;
      // SNI and certificate checks use the URL's host name, not the address dialled.
      if (isIP(target.hostname) === 0) options.servername = target.hostname;
    }
    const request = (target.secure ? https : http).request(options);
    request.on("error", callbacks.onError);
    request.on("response", (response) => reader(request, response, callbacks));
    if (body === undefined) request.end();
    else request.end(body);
    return request;
  }
}

function parseTarget(rawUrl: string, requireHttps: boolean): Target {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch (error) {
    throw new OutboundBlockedError("invalid-url", "destination URL is not a valid absolute URL", {
      cause: error,
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OutboundBlockedError("scheme", "destination URL scheme must be http or https");
  }
  if (url.username !== "" || url.password !== "") {
    throw new OutboundBlockedError("invalid-url", "destination URL must not contain credentials");
  }
  if (requireHttps && url.protocol !== "https:") {
    throw new OutboundBlockedError("insecure", "destination URL must use https");
  }
  const secure = url.protocol === "https:";
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === "") throw new OutboundBlockedError("invalid-url", "destination URL has no host");
  url.hash = "";
  // From href rather than pathname + search: an empty query ("/cb?") keeps its "?".
  const path = url.href.slice(url.origin.length);
  return {
    secure,
    hostname,
    port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
    hostHeader: url.host,
    path: path.startsWith("/") ? path : `/${path}`,
  };
}

/**
 * A lookup that answers with the already-checked addresses, so no second resolution can differ. With
 * `all` (Node's address family auto-selection) every checked address may be tried, else the first.
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  const first = addresses[0]!;
  return (_hostname, options, callback) => {
    if (options.all)
      callback(
        null,
        addresses.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, first.address, first.family);
  };
}

/** Where a response reader reports its outcome. */
interface ReaderCallbacks<Result> {
  onResult: (result: Result) => void;
  onError: (error: unknown) => void;
}

/** Reads one response and reports its result (without durationMs) or an error. */
type ResponseReader<Result> = (
  request: ClientRequest,
  response: IncomingMessage,
  callbacks: ReaderCallbacks<Result>,
) => void;

/** Keeps a 1 KiB excerpt and stops reading at maxResponseBytes (callback deliveries). */
function readExcerpt(
  request: ClientRequest,
  response: IncomingMessage,
  maxResponseBytes: number,
  callbacks: ReaderCallbacks<Omit<HttpResult, "durationMs">>,
): void {
  const excerptBytes = Math.min(EXCERPT_BYTES, maxResponseBytes);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let receivedBytes = 0;
  let done = false;
  const complete = (): void => {
    if (done) return;
    done = true;
    callbacks.onResult({
      status: response.statusCode ?? 0,
      headers: flattenHeaders(response.headers),
      bodyExcerpt: decodeExcerpt(Buffer.concat(kept, keptBytes)),
    });
  };

  response.on("data", (chunk: Buffer) => {
    if (done) return;
    receivedBytes += chunk.length;
    if (keptBytes < excerptBytes) {
      const part = chunk.subarray(0, excerptBytes - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    if (receivedBytes >= maxResponseBytes) {
      complete();
      // Enough has been read: close the connection rather than drain an unbounded body.
      request.destroy();
    }
  });
  response.on("end", complete);
  response.on("error", (error) => {
    if (!done) callbacks.onError(error);
  });
}

/** Keeps the whole body; more than maxResponseBytes rejects with RESPONSE_TOO_LARGE and closes the connection. */
function readWhole(
  request: ClientRequest,
  response: IncomingMessage,
  maxResponseBytes: number,
  callbacks: ReaderCallbacks<Omit<HttpFullResult, "durationMs">>,
): void {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let done = false;
  response.on("data", (chunk: Buffer) => {
    if (done) return;
    keptBytes += chunk.length;
    if (keptBytes > maxResponseBytes) {
      done = true;
      callbacks.onError(
        new OutboundNetworkError(`response larger than ${maxResponseBytes} bytes`, "RESPONSE_TOO_LARGE"),
      );
      request.destroy();
      return;
    }
    kept.push(chunk);
  });
  response.on("end", () => {
    if (done) return;
    done = true;
    callbacks.onResult({
      status: response.statusCode ?? 0,
      headers: flattenHeaders(response.headers),
      body: Buffer.concat(kept, keptBytes),
    });
  });
  response.on("error", (error) => {
    if (done) return;
    done = true;
    callbacks.onError(error);
  });
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

/** UTF-8 text of the kept bytes, dropping a character cut in half by the byte limit. */
function decodeExcerpt(bytes: Buffer): string {
  return new StringDecoder("utf8").write(bytes);
}

function toNetworkError(error: unknown): OutboundNetworkError {
  const code =
    typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "";
  const safeCode = /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
  const options = { cause: error };
  if (safeCode === undefined) return new OutboundNetworkError("network error", undefined, options);
  if (safeCode === "ECONNREFUSED") return new OutboundNetworkError("connection refused", safeCode, options);
  if (safeCode === "ECONNRESET") return new OutboundNetworkError("connection reset", safeCode, options);
  if (safeCode === "EHOSTUNREACH" || safeCode === "ENETUNREACH") {
    return new OutboundNetworkError("destination unreachable", safeCode, options);
  }
  if (TLS_ERROR_CODES.has(safeCode) || safeCode.startsWith("ERR_TLS_") || safeCode.startsWith("ERR_SSL_")) {
    return new OutboundNetworkError(`TLS handshake failed (${safeCode})`, safeCode, options);
  }
  if (safeCode.startsWith("HPE_"))
    return new OutboundNetworkError("invalid HTTP response", safeCode, options);
  return new OutboundNetworkError(`network error (${safeCode})`, safeCode, options);
}
