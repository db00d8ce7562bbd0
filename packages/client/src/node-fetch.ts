/**
 * A fetch for Node built on node:http(s) with keep-alive agents, used by default on Node: for 4 MiB
 * upload bodies Node's built-in fetch copies each body into a web stream and costs several times
 * the CPU of node:http (bench/sdk.bench.ts). Bodies are strings, byte arrays or absent (what the
 * SDK sends); answers are standard Response objects with a streamed body.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 16 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 16 });

function toHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) headers.append(k, item);
  }
  return headers;
}

/** fetch(url, init) over node:http; other body types are handed to the built-in fetch. */
export const nodeFetch: typeof fetch = async (input, init = {}) => {
  const body = init.body;
  if (
    typeof input !== "string" ||
    (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array))
  ) {
    return fetch(input, init);
  }
  const url = new URL(input);
  const secure = url.protocol === "https:";
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((v, k) => {
    headers[k] = v;
  });
  const bytes = typeof body === "string" ? Buffer.from(body) : (body ?? undefined);
  if (bytes) headers["content-length"] = String(bytes.length);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  // A kept-alive socket the server closed as it was reused fails before any answer: send again
  // once on a new socket (Node's documented pattern for keep-alive agents).
  for (let attempt = 0; ; attempt++) {
    try {
      return await once(url, secure, init, headers, bytes, signal);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const stale = (e as { reusedSocket?: boolean }).reusedSocket === true;
      if (attempt > 0 || !stale || (code !== "ECONNRESET" && code !== "EPIPE")) throw e;
    }
  }
};

function once(
  url: URL,
  secure: boolean,
  init: RequestInit,
  headers: Record<string, string>,
  bytes: Uint8Array | undefined,
  signal: AbortSignal | undefined,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      { method: init.method ?? "GET", headers, agent: secure ? httpsAgent : httpAgent, signal },
      (res) => {
        const status = res.statusCode ?? 0;
        const empty = status === 204 || status === 304 || init.method === "HEAD";
        if (empty) res.resume();
        resolve(
          new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
            status,
            statusText: res.statusMessage ?? "",
            headers: toHeaders(res),
          }),
        );
      },
    );
    req.on("error", (e) => reject(Object.assign(e, { reusedSocket: req.reusedSocket })));
    if (bytes) req.end(bytes);
    else req.end();
  });
}
