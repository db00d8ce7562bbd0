import { FerryApiError, FerryAuthError, FerryError } from "./errors.js";

/** How an operation is called (generated from the OpenAPI document). */
export interface OperationMeta {
  method: string;
  path: string;
  pathParams: readonly string[];
  query: readonly string[];
  body: "json" | "form" | "none";
  auth: boolean;
  /** The success answer is not JSON (a download): the method returns the Response. */
  raw: boolean;
  /** The operation also takes raw bytes (application/octet-stream), its text fields in the query. */
  binary?: boolean;
}

/** A multipart body: a FormData, or fields (Blobs become file parts). */
export type FormBody = FormData | Record<string, string | number | Blob | undefined>;

/** Raw bytes, sent as application/octet-stream to an operation that takes them (a chunk PUT). */
export type BinaryBody = Blob | ArrayBuffer | Uint8Array<ArrayBuffer>;

function isBinaryBody(body: unknown): body is BinaryBody {
  return body instanceof Blob || body instanceof ArrayBuffer || body instanceof Uint8Array;
}

/** The JSON request body of an operation. */
export type JsonBody<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } }
  ? B
  : never;

type SuccessOf<R> = R extends { 200: { content: { "application/json": infer T } } }
  ? T
  : R extends { 201: { content: { "application/json": infer T } } }
    ? T
    : R extends { 202: { content: { "application/json": infer T } } }
      ? T
      : undefined;

/** The JSON body of an operation's success answer (undefined for 204). */
export type Success<Op> = Op extends { responses: infer R } ? SuccessOf<R> : never;

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
}

/** Options of a client. */
export interface FerryClientOptions {
  /** The server, e.g. `https://ferry.example.com` (no `/v1`). */
  baseUrl: string;
  /** An API key and the account's email: the client gets tokens itself, and a new one when needed. */
  apiKey?: string | undefined;
  email?: string | undefined;
  /** A token to start with (refreshed before it expires). */
  token?: string | undefined;
  /** Called with each new token (to store it). */
  onToken?: ((token: string) => void) | undefined;
  /** Refresh this many seconds before expiry (default 300). */
  refreshMarginSeconds?: number | undefined;
  /**
   * Retries of an answer 429 or 503 (default 4), each after its Retry-After, and of a call whose
   * connection failed before an answer (GET, HEAD, PUT, DELETE only: they may safely be sent
   * twice), each after a growing delay (0.5 s, 1 s, 2 s...).
   */
  maxRetries?: number | undefined;
  /** Longest wait for one retry in ms (default 60000); a longer Retry-After fails at once. */
  maxRetryDelayMs?: number | undefined;
  /** The fetch to use (default: the platform's fetch; on Node a node:http one, see node-fetch.ts). */
  fetch?: typeof fetch | undefined;
  /** Called before each retry of a 429/503 answer, or of a failed connection (status 0), to show or log it. */
  onRetry?:
    | ((info: { operation: string | undefined; status: number; waitMs: number; attempt: number }) => void)
    | undefined;
  /** Sent as User-Agent where the platform allows it. */
  userAgent?: string | undefined;
}

interface Claims {
  exp?: number;
  orig_iat?: number;
}

const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

/** node:http on Node (node-fetch.ts says why), the platform's fetch elsewhere. */
const defaultFetch: typeof fetch = isNode
  ? async (input, init) => (await import("./node-fetch.js")).nodeFetch(input, init)
  : (input, init) => globalThis.fetch(input, init);

function decodeClaims(token: string): Claims {
  try {
    const part = token.split(".")[1] ?? "";
    const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4))) as Claims;
  } catch {
    return {};
  }
}

/** Seconds of a Retry-After header (delta seconds or an HTTP date); undefined when absent. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Methods a call may be sent twice with: a connection failure retries them. */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE"]);

/** One HTTP call, before authentication and retries are added. */
export interface RawRequest {
  method: string;
  /** Path (with query) under baseUrl, or an absolute URL on the same server. */
  path: string;
  headers?: Record<string, string> | undefined;
  /** Rebuilt for each attempt (bodies are sent again on retry). */
  body?: (() => BodyInit) | undefined;
  auth?: boolean | undefined;
  signal?: AbortSignal | undefined;
  operation?: string | undefined;
}

/** HTTP, tokens, retries and errors; the generated FerryApi adds one method per operation. */
export class FerryCore {
  readonly baseUrl: string;
  protected readonly options: FerryClientOptions;
  private token: string | undefined;
  private claims: Claims = {};
  private pendingToken: Promise<string> | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: FerryClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? defaultFetch;
    if (options.token) this.setToken(options.token, false);
  }

  /** The metadata of an operation (overridden by the generated class). */
  protected meta(_id: string): OperationMeta | undefined {
    return undefined;
  }

  private setToken(token: string, announce: boolean): void {
    this.token = token;
    this.claims = decodeClaims(token);
    if (announce) this.options.onToken?.(token);
  }

  /** The current token, fetched or refreshed first when it is missing or about to expire. */
  async currentToken(force = false): Promise<string> {
    const margin = this.options.refreshMarginSeconds ?? 300;
    const now = Date.now() / 1000;
    if (!force && this.token && (this.claims.exp === undefined || this.claims.exp - now > margin)) {
      return this.token;
    }
    this.pendingToken ??= this.renewToken(force).finally(() => {
      this.pendingToken = undefined;
    });
    return this.pendingToken;
  }

  private async renewToken(force: boolean): Promise<string> {
    const now = Date.now() / 1000;
    const live = this.token && (this.claims.exp === undefined || this.claims.exp > now + 5);
    if (this.token && live && !force) {
      try {
        const res = await this.send({
          method: "POST",
          path: "/v1/auth/token_refresh/",
          headers: { "content-type": "application/json" },
          body: () => JSON.stringify({ token: this.token }),
          auth: false,
          operation: "refreshToken",
        });
        const { token } = (await res.json()) as { token: string };
        this.setToken(token, true);
        return token;
      } catch (e) {
        if (!this.options.apiKey) throw e;
      }
    }
    if (!this.options.apiKey || !this.options.email) {
      if (this.token && live) return this.token;
      throw new FerryAuthError(
        "No valid token: give the client an API key and email (or a token that has not expired).",
      );
    }
    const res = await this.send({
      method: "POST",
      path: "/v1/auth/get_token/",
      headers: { "content-type": "application/json" },
      body: () => JSON.stringify({ api_key: this.options.apiKey, email: this.options.email }),
      auth: false,
      operation: "getToken",
    });
    const { token } = (await res.json()) as { token: string };
    this.setToken(token, true);
    return token;
  }

  /**
   * Sends one request: adds the token, retries 429/503 after Retry-After, gets a new token and
   * retries once on 401, and throws FerryApiError for any other answer outside 2xx (and 3xx).
   */
  async send(req: RawRequest): Promise<Response> {
    const maxRetries = this.options.maxRetries ?? 4;
    const maxDelay = this.options.maxRetryDelayMs ?? 60_000;
    let retried401 = false;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: "application/json", ...req.headers };
      if (this.options.userAgent) headers["user-agent"] = this.options.userAgent;
      if (req.auth !== false) headers.authorization = `JWT ${await this.currentToken()}`;
      const url = /^https?:\/\//.test(req.path) ? req.path : this.baseUrl + req.path;
      let res: Response;
      try {
        res = await this.fetchImpl(url, {
          method: req.method,
          headers,
          body: req.body?.(),
          signal: req.signal,
          redirect: "manual",
          // Node's fetch needs this for streamed bodies; browsers ignore it for Blobs.
          ...({ duplex: "half" } as object),
        });
      } catch (err) {
        // No answer (refused, reset, cut): an idempotent call is sent again after a growing delay;
        // a POST is not (it may have created something), and a cancelled call never is.
        if (req.signal?.aborted || !IDEMPOTENT.has(req.method.toUpperCase()) || attempt >= maxRetries)
          throw err;
        const wait = Math.min(maxDelay, 500 * 2 ** attempt);
        this.options.onRetry?.({ operation: req.operation, status: 0, waitMs: wait, attempt: attempt + 1 });
        await sleep(wait, req.signal);
        continue;
      }
      if (res.ok || (res.status >= 300 && res.status < 400)) return res;
      if (res.status === 401 && req.auth !== false && !retried401) {
        retried401 = true;
        await res.body?.cancel();
        await this.currentToken(true);
        attempt--;
        continue;
      }
      const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
      if ((res.status === 429 || res.status === 503) && attempt < maxRetries) {
        const wait = retryAfter !== undefined ? retryAfter * 1000 : Math.min(maxDelay, 500 * 2 ** attempt);
        if (wait <= maxDelay) {
          await res.body?.cancel();
          this.options.onRetry?.({
            operation: req.operation,
            status: res.status,
            waitMs: wait,
            attempt: attempt + 1,
          });
          await sleep(wait, req.signal);
          continue;
        }
      }
      throw await this.errorOf(res, req.operation, retryAfter);
    }
  }

  private async errorOf(res: Response, operation: string | undefined, retryAfter?: number) {
    const text = await res.text().catch(() => "");
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return new FerryApiError({
      status: res.status,
      body,
      requestId: res.headers.get("x-request-id") ?? undefined,
      retryAfter,
      operation,
    });
  }

  /** Calls an operation by its operationId with path, query and body arguments. */
  async call(id: string, args: Record<string, unknown>, options?: CallOptions): Promise<unknown> {
    const meta = this.meta(id);
    if (!meta) throw new FerryError(`Unknown operation ${id}`);
    let path = meta.path;
    for (const name of meta.pathParams) {
      const value = args[name];
      if (value === undefined || value === null) throw new FerryError(`${id}: ${name} is required`);
      path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
    }
    const search = new URLSearchParams();
    for (const name of meta.query) {
      const value = args[name];
      if (value === undefined || value === null) continue;
      search.set(name, typeof value === "object" ? JSON.stringify(value) : String(value));
    }
    const qs = search.toString();
    const headers: Record<string, string> = { ...options?.headers };
    let body: (() => BodyInit) | undefined;
    if (meta.body === "json" && args.body !== undefined) {
      headers["content-type"] = "application/json";
      const text = JSON.stringify(args.body);
      body = () => text;
    } else if (meta.binary && isBinaryBody(args.body)) {
      headers["content-type"] = "application/octet-stream";
      const bytes = args.body;
      body = () => bytes;
    } else if (meta.body === "form" && args.body !== undefined) {
      const given = args.body as FormBody;
      body = () => {
        if (given instanceof FormData) return given;
        const form = new FormData();
        for (const [k, v] of Object.entries(given)) {
          if (v === undefined) continue;
          if (v instanceof Blob) form.set(k, v, (v as File).name ?? "file");
          else form.set(k, String(v));
        }
        return form;
      };
    }
    const res = await this.send({
      method: meta.method,
      path: path + (qs ? `?${qs}` : ""),
      headers,
      body,
      auth: meta.auth,
      signal: options?.signal,
      operation: id,
    });
    if (meta.raw) return res;
    if (res.status === 204) return undefined;
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  }
}
