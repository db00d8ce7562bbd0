/**
 * Calling the API as an account: `apiCaller` (the one way tests call it) and `expectJson` (status
 * check with the body in the failure message).
 */
import type { LightMyRequestResponse as Response } from "fastify";
import { expect } from "vitest";
import type { TestAccount, TestApp } from "./app.js";

/** Parsed JSON as tests read it (fields are checked by assertions, not types). */
// biome-ignore lint/suspicious/noExplicitAny: assertions check the shape of API JSON.
export type Json = Record<string, any>;

/** How one call differs from a plain JSON call as the caller's account. */
export interface CallOptions {
  /** The account calling (default: the caller's account). */
  as?: TestAccount;
  /** Headers added to (or replacing) the account's authorization header. */
  headers?: Record<string, string>;
  /** Query string parameters, added to those already in the URL. */
  query?: Record<string, string>;
  /** Sends the payload as is (a string or Buffer) with this content type instead of as JSON. */
  contentType?: string;
  /** The client address the server sees. */
  remoteAddress?: string;
}

/**
 * `call(method, url, payload?, asOrOptions?)`: one API call. A payload is sent as JSON unless
 * `contentType` is given (then as is); with `contentType` and no payload, only the header is sent.
 * The fourth argument is the calling account, or CallOptions.
 */
export type ApiCall = (
  method: string,
  url: string,
  payload?: unknown,
  asOrOptions?: TestAccount | CallOptions,
) => Promise<Response>;

/** Injects one API call into `t` as `who` (see ApiCall). */
export function callApi(
  t: TestApp,
  who: TestAccount,
  method: string,
  url: string,
  payload?: unknown,
  options: CallOptions = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...(options.as ?? who).headers, ...options.headers };
  let body: string | Buffer | undefined;
  if (options.contentType !== undefined) {
    headers["content-type"] = options.contentType;
    body = payload as string | Buffer | undefined;
  } else if (payload !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(payload);
  }
  return t.app.inject({
    method: method as "GET",
    url,
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    ...(body === undefined ? {} : { payload: body }),
  });
}

/**
 * An ApiCall on `app` as `owner` (by default). Either may be a getter, read at call time, so the
 * caller can be made before beforeAll sets them.
 */
export function apiCaller(app: TestApp | (() => TestApp), owner: TestAccount | (() => TestAccount)): ApiCall {
  return (method, url, payload, asOrOptions) => {
    const options = asOrOptions && "token" in asOrOptions ? { as: asOrOptions } : (asOrOptions ?? {});
    return callApi(
      typeof app === "function" ? app() : app,
      typeof owner === "function" ? owner() : owner,
      method,
      url,
      payload,
      options,
    );
  };
}

/** Asserts the response's status (naming the call and its body when it differs) and returns its JSON. */
export function expectJson(res: Response, status: number): Json {
  expect(res.statusCode, `${res.raw.req.method} ${res.raw.req.url}: ${res.body}`).toBe(status);
  return res.body === "" ? {} : (res.json() as Json);
}
