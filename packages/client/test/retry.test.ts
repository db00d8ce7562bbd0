/**
 * The client's HTTP behaviour against a tiny local server with scripted answers: Retry-After on 429
 * and 503, a new token and one retry on 401, refresh before expiry, and typed errors.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FerryApiError, FerryClient, parseRetryAfter } from "../src/index.js";

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}
type Answer = { status: number; headers?: Record<string, string>; body?: unknown };

function jwt(claims: Record<string, number>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "HS256" })}.${part(claims)}.sig`;
}

describe("retries, tokens and errors (scripted server)", () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  let script: Answer[] = [];
  let tokenCount = 0;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.on("data", (d) => {
        body += d;
      });
      req.on("end", () => {
        seen.push({
          method: req.method ?? "",
          url: req.url ?? "",
          authorization: req.headers.authorization,
          body,
        });
        let answer: Answer;
        if (req.url === "/v1/auth/get_token/" || req.url === "/v1/auth/token_refresh/") {
          tokenCount++;
          const now = Math.floor(Date.now() / 1000);
          answer = {
            status: 200,
            body: { token: jwt({ exp: now + 8 * 3600, orig_iat: now, n: tokenCount }) },
          };
        } else {
          answer = script.shift() ?? { status: 200, body: { ok: true } };
        }
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(answer.body === undefined ? "" : JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
    script = [];
    tokenCount = 0;
  });

  it("retries a 429 after its Retry-After and returns the answer of the retry", async () => {
    script = [
      {
        status: 429,
        headers: { "retry-after": "1" },
        body: { code: "RATE_LIMIT_REACHED", detail: "Slow down." },
      },
      { status: 200, body: { id: 1, email: "a@example.com" } },
    ];
    const waits: number[] = [];
    const client = new FerryClient({
      baseUrl: base,
      token: jwt({ exp: Date.now() / 1000 + 3600 }),
      onRetry: (r) => waits.push(r.waitMs),
    });
    const account = await client.getAccount();
    expect(account).toEqual({ id: 1, email: "a@example.com" });
    expect(waits).toEqual([1000]);
    expect(seen.map((s) => s.url)).toEqual(["/v1/account/", "/v1/account/"]);
  });

  it("does the same through the platform's fetch (as in browsers)", async () => {
    script = [
      {
        status: 429,
        headers: { "retry-after": "0" },
        body: { code: "RATE_LIMIT_REACHED", detail: "Slow down." },
      },
      { status: 200, body: { id: 3 } },
    ];
    const client = new FerryClient({
      baseUrl: base,
      token: jwt({ exp: Date.now() / 1000 + 3600 }),
      fetch: globalThis.fetch,
    });
    expect(await client.getAccount()).toEqual({ id: 3 });
    expect(seen).toHaveLength(2);
  });

  it("retries a 503 with an HTTP-date Retry-After, and gives up with a typed error after maxRetries", async () => {
    const soon = new Date(Date.now() + 1000).toUTCString();
    script = [
      {
        status: 503,
        headers: { "retry-after": soon },
        body: { code: "SERVICE_UNAVAILABLE", detail: "Busy." },
      },
      {
        status: 503,
        headers: { "retry-after": "0" },
        body: { code: "SERVICE_UNAVAILABLE", detail: "Busy." },
      },
    ];
    const client = new FerryClient({
      baseUrl: base,
      token: jwt({ exp: Date.now() / 1000 + 3600 }),
      maxRetries: 1,
    });
    const error = await client.getAccount().catch((e) => e);
    expect(error).toBeInstanceOf(FerryApiError);
    expect(error).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE", detail: "Busy.", retryAfter: 0 });
    expect(seen).toHaveLength(2);
  });

  it("does not wait longer than maxRetryDelayMs: a long Retry-After fails at once", async () => {
    script = [
      {
        status: 429,
        headers: { "retry-after": "3600" },
        body: { code: "RATE_LIMIT_REACHED", detail: "Later." },
      },
    ];
    const client = new FerryClient({ baseUrl: base, token: jwt({ exp: Date.now() / 1000 + 3600 }) });
    const error = await client.getAccount().catch((e) => e);
    expect(error).toMatchObject({ status: 429, code: "RATE_LIMIT_REACHED", retryAfter: 3600 });
    expect(seen).toHaveLength(1);
  });

  it("gets a token with the API key, and on 401 gets a new one and retries once", async () => {
    script = [
      { status: 401, body: { code: "AUTHENTICATION_FAILURE", detail: "Expired." } },
      { status: 200, body: { id: 2 } },
    ];
    const tokens: string[] = [];
    const client = new FerryClient({
      baseUrl: base,
      apiKey: "fry_sbx_x",
      email: "a@example.com",
      onToken: (t) => tokens.push(t),
    });
    expect(await client.getAccount()).toEqual({ id: 2 });
    expect(seen.map((s) => s.url)).toEqual([
      "/v1/auth/get_token/",
      "/v1/account/",
      "/v1/auth/get_token/",
      "/v1/account/",
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual({ api_key: "fry_sbx_x", email: "a@example.com" });
    expect(seen[1]!.authorization).toBe(`JWT ${tokens[0]}`);
    expect(seen[3]!.authorization).toBe(`JWT ${tokens[1]}`);

    script = [
      { status: 401, body: { code: "AUTHENTICATION_FAILURE", detail: "No." } },
      { status: 401, body: { code: "AUTHENTICATION_FAILURE", detail: "Still no." } },
    ];
    const error = await client.getAccount().catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: "AUTHENTICATION_FAILURE", detail: "Still no." });
  });

  it("refreshes a token that is about to expire before using it", async () => {
    const now = Math.floor(Date.now() / 1000);
    const old = jwt({ exp: now + 60, orig_iat: now - 3600 });
    const client = new FerryClient({ baseUrl: base, token: old });
    await client.getAccount();
    expect(seen.map((s) => s.url)).toEqual(["/v1/auth/token_refresh/", "/v1/account/"]);
    expect(JSON.parse(seen[0]!.body)).toEqual({ token: old });
    expect(seen[1]!.authorization).not.toBe(`JWT ${old}`);
  });

  it("carries field messages of a validation error", async () => {
    script = [
      { status: 400, body: { email: ["Enter a valid email address."], type: ["This field is required."] } },
    ];
    const client = new FerryClient({ baseUrl: base, token: jwt({ exp: Date.now() / 1000 + 3600 }) });
    const error = await client.createContact({ body: {} }).catch((e) => e);
    expect(error).toBeInstanceOf(FerryApiError);
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.fields).toEqual({
      email: ["Enter a valid email address."],
      type: ["This field is required."],
    });
    expect(error.message).toContain("email: Enter a valid email address.");
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(parseRetryAfter("7")).toBe(7);
    expect(
      parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1)),
    ).toBe(30);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});
