import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { createSecureContext } from "node:tls";
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  type MockInstance,
  vi,
} from "vitest";
import {
  type AddressResolver,
  createHttpClient,
  type HttpClientOptions,
  OutboundBlockedError,
  OutboundNetworkError,
  OutboundTimeoutError,
} from "./http-client.js";

// Test-only self-signed certificate for receiver.test and 127.0.0.1, valid 2000-2100. Trusted by nothing.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgNAP//MCEXkXAs817
7KFJTkX/XwQn5du14Btk9+67WbmhRANCAARQumeDvqfYn5VW5QXzBdVXj0SkVXB9
dUIMTUGcxU9v9ca/7BoWk8RvZQhkVfxuaKJBYpCEC9GjR+r1eOeKdBE2
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBYTCCAQigAwIBAgIBATAKBggqhkjOPQQDAjAYMRYwFAYDVQQDDA1yZWNlaXZl
ci50ZXN0MCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAwWjAYMRYwFAYD
VQQDDA1yZWNlaXZlci50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEULpn
g76n2J+VVuUF8wXVV49EpFVwfXVCDE1BnMVPb/XGv+waFpPEb2UIZFX8bmiiQWKQ
hAvRo0fq9XjninQRNqNBMD8wHgYDVR0RBBcwFYINcmVjZWl2ZXIudGVzdIcEfwAA
ATAdBgNVHQ4EFgQUMlNBE/4WHsSCzwgLkpFm/03lqz8wCgYIKoZIzj0EAwIDRwAw
RAIgMk7F684dL2zC7t3OMrk1jtqbFWjfz9vMMC2g3dOI4SoCIH9I1zkmVZG+sITN
m4tkJwAuktSwNJAfRexjQyZNn/i4
-----END CERTIFICATE-----
`;

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const received: Received[] = [];
/** Resolves when the receiver sees the client close a connection it held open (/hang, /endless). */
let clientClosed: Promise<void>;
let signalClientClosed: () => void;

let receiver: http.Server;
let port: number;
let base: string;

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const url = req.url ?? "";
    received.push({
      method: req.method ?? "",
      url,
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    });
    const path = url.split("?")[0];
    if (path === "/hang") {
      res.on("close", () => signalClientClosed());
      return;
    }
    if (path === "/redirect") {
      res.writeHead(302, { location: "/cb" }).end();
      return;
    }
    const status = /^\/status\/(\d{3})$/.exec(path ?? "");
    if (status) {
      res.writeHead(Number(status[1]), { "content-type": "text/plain" }).end(`answer ${status[1]}`);
      return;
    }
    if (path === "/huge") {
      res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(1024 * 1024));
      return;
    }
    if (path === "/endless") {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "y".repeat(16 * 1024);
      const pump = (): void => {
        if (res.destroyed) return;
        if (res.write(chunk)) setImmediate(pump);
        else res.once("drain", pump);
      };
      res.on("close", () => signalClientClosed());
      pump();
      return;
    }
    if (path === "/utf8") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("a" + "é".repeat(600));
      return;
    }
    res.setHeader("x-multi", ["one", "two"]);
    res.writeHead(200, { "content-type": "text/plain", "x-receiver": "yes" }).end("ok");
  });
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: http.Server | https.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  receiver = http.createServer(handle);
  port = await listen(receiver);
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await close(receiver);
});

beforeEach(() => {
  received.length = 0;
  clientClosed = new Promise<void>((resolve) => {
    signalClientClosed = resolve;
  });
});

const resolveToLoopback: AddressResolver = async () => [{ address: "127.0.0.1", family: 4 }];

function devClient(overrides: Partial<HttpClientOptions> = {}) {
  return createHttpClient({ allowPrivateAddresses: true, ...overrides });
}

const json = JSON.stringify({ type: "request_complete", request: { id: 7 } });
const post = { headers: { "content-type": "application/json" }, body: json };

describe("GuardedHttpClient delivering to a local receiver (private addresses allowed)", () => {
  it("delivers a POST with headers and body intact and returns the answer", async () => {
    const headers = {
      "content-type": "application/json",
      "webhook-id": "msg_1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": "v1,c2lnbmF0dXJl",
      "user-agent": "Ferry-Webhooks/1",
    };
    const result = await devClient().post(`${base}/cb`, { headers, body: json });

    expect(result.status).toBe(200);
    expect(result.bodyExcerpt).toBe("ok");
    expect(result.headers["x-receiver"]).toBe("yes");
    expect(result.headers["x-multi"]).toBe("one, two");
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/cb");
    expect(request?.body).toBe(json);
    expect(request?.headers).toMatchObject({ ...headers, host: `127.0.0.1:${port}` });
    expect(request?.headers["content-length"]).toBe(String(Buffer.byteLength(json)));
  });

  it("sends a Buffer body byte for byte", async () => {
    const bytes = Buffer.from(JSON.stringify({ name: "Grüße ✓" }), "utf8");
    await devClient().post(`${base}/cb`, { headers: {}, body: bytes });
    expect(received[0]?.body).toBe(bytes.toString("utf8"));
    expect(received[0]?.headers["content-length"]).toBe(String(bytes.length));
  });

  it("sets Host and Content-Length itself, whatever the caller passed", async () => {
    await devClient().post(`${base}/cb`, {
      headers: { Host: "other.example", "Content-Length": "3", "content-type": "application/json" },
      body: json,
    });
    expect(received[0]?.headers.host).toBe(`127.0.0.1:${port}`);
    expect(received[0]?.body).toBe(json);
  });

  it.each([
    ["/cb?&order_id=9", "/cb?&order_id=9"],
    ["/cb?order_id=9&token=a%20b&token=c", "/cb?order_id=9&token=a%20b&token=c"],
    ["/cb?", "/cb?"],
    ["/cb?x=1#fragment", "/cb?x=1"],
  ])("keeps the URL's own query string: %s", async (path, expected) => {
    await devClient().post(`${base}${path}`, post);
    expect(received[0]?.url).toBe(expected);
  });

  it.each([500, 410, 404])("returns a %i answer as a result, not an error", async (status) => {
    const result = await devClient().post(`${base}/status/${status}`, post);
    expect(result.status).toBe(status);
    expect(result.bodyExcerpt).toBe(`answer ${status}`);
  });

  it("does not follow a redirect", async () => {
    const result = await devClient().post(`${base}/redirect`, post);
    expect(result.status).toBe(302);
    expect(result.headers.location).toBe("/cb");
    expect(received.map((request) => request.url)).toEqual(["/redirect"]);
  });

  it("keeps only a 1 KiB excerpt of a large response", async () => {
    const result = await devClient().post(`${base}/huge`, post);
    expect(result.status).toBe(200);
    expect(result.bodyExcerpt).toBe("x".repeat(1024));
  });

  it("stops reading an endless response at maxResponseBytes and closes the connection", async () => {
    const result = await devClient({ maxResponseBytes: 64 * 1024 }).post(`${base}/endless`, post);
    expect(result.status).toBe(200);
    expect(result.bodyExcerpt).toBe("y".repeat(1024));
    await clientClosed;
  });

  it("keeps fewer bytes when maxResponseBytes is below the excerpt size", async () => {
    const result = await devClient({ maxResponseBytes: 100 }).post(`${base}/huge`, post);
    expect(result.bodyExcerpt).toBe("x".repeat(100));
  });

  it("never cuts a UTF-8 character in half at the excerpt limit", async () => {
    const result = await devClient().post(`${base}/utf8`, post);
    expect(result.bodyExcerpt).toBe("a" + "é".repeat(511));
    expect(result.bodyExcerpt).not.toContain("\uFFFD");
  });

  it("times out a receiver that never answers and drops the connection", async () => {
    const error = await devClient({ timeoutMs: 300 })
      .post(`${base}/hang`, post)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect((error as OutboundTimeoutError).kind).toBe("timeout");
    expect((error as OutboundTimeoutError).message).toBe("no response within 300 ms");
    await clientClosed;
  });

  it("lets a single request shorten the time limit", async () => {
    const error = await devClient()
      .post(`${base}/hang`, { ...post, timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
  });

  it("times out a resolver that never answers", async () => {
    const stuck: AddressResolver = () => new Promise(() => {});
    const error = await devClient({ timeoutMs: 300, resolver: stuck })
      .post("http://receiver.test/cb", post)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
  });

  it("resolves the host once and connects to that address, keeping the host name in Host", async () => {
    const resolver = vi.fn(resolveToLoopback);
    const result = await devClient({ resolver }).post(`http://receiver.test:${port}/cb`, post);
    expect(result.status).toBe(200);
    expect(resolver).toHaveBeenCalledTimes(1);
    expect(resolver).toHaveBeenCalledWith("receiver.test");
    expect(received[0]?.headers.host).toBe(`receiver.test:${port}`);
  });

  it("falls back to another checked address when the first refuses the connection", async () => {
    const resolver: AddressResolver = async () => [
      { address: "::1", family: 6 },
      { address: "127.0.0.1", family: 4 },
    ];
    const result = await devClient({ resolver }).post(`http://receiver.test:${port}/cb`, post);
    expect(result.status).toBe(200);
    expect(received).toHaveLength(1);
  });

  it("reports a refused connection as a network error", async () => {
    const spare = http.createServer();
    const closedPort = await listen(spare);
    await close(spare);
    const error = await devClient()
      .post(`http://127.0.0.1:${closedPort}/cb`, post)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundNetworkError);
    expect(error).toMatchObject({ kind: "network", code: "ECONNREFUSED", message: "connection refused" });
  });
});

describe("GuardedHttpClient.request (whole answers, any method)", () => {
  it("sends a GET without a body and returns the whole answer", async () => {
    const result = await devClient().request(`${base}/huge`, {
      method: "GET",
      headers: { accept: "text/plain" },
      maxResponseBytes: 2 * 1024 * 1024,
    });
    expect(result.status).toBe(200);
    expect(result.body.length).toBe(1024 * 1024);
    expect(received[0]?.method).toBe("GET");
    expect(received[0]?.headers["content-length"]).toBeUndefined();
    expect(received[0]?.headers.accept).toBe("text/plain");
  });

  it("sends a PUT with its body and returns a non-2xx answer as a result", async () => {
    const result = await devClient().request(`${base}/status/409`, {
      method: "PUT",
      headers: {},
      body: json,
    });
    expect(result.status).toBe(409);
    expect(result.body.toString()).toBe("answer 409");
    expect(received[0]).toMatchObject({ method: "PUT", body: json });
  });

  it("rejects an answer larger than its limit and closes the connection", async () => {
    const error = await devClient()
      .request(`${base}/endless`, { method: "GET", headers: {}, maxResponseBytes: 100_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundNetworkError);
    expect(error).toMatchObject({ code: "RESPONSE_TOO_LARGE", message: "response larger than 100000 bytes" });
    await clientClosed;
  });

  it("refuses a private destination before connecting when private addresses are not allowed", async () => {
    const error = await createHttpClient({ allowPrivateAddresses: false })
      .request(`${base}/cb`, { method: "GET", headers: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(received).toHaveLength(0);
  });

  it("times out a receiver that never answers", async () => {
    const error = await devClient()
      .request(`${base}/hang`, { method: "GET", headers: {}, timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    await clientClosed;
  });
});

describe("GuardedHttpClient TLS", () => {
  let tlsReceiver: https.Server;
  let tlsPort: number;
  const serverNames: string[] = [];

  beforeAll(async () => {
    tlsReceiver = https.createServer(
      {
        key: TEST_KEY,
        cert: TEST_CERT,
        SNICallback: (servername, callback) => {
          serverNames.push(servername);
          callback(null, createSecureContext({ key: TEST_KEY, cert: TEST_CERT }));
        },
      },
      handle,
    );
    tlsPort = await listen(tlsReceiver);
  });

  afterAll(async () => {
    await close(tlsReceiver);
  });

  it("validates certificates (an untrusted one is refused) and sends the URL's host name as SNI", async () => {
    const error = await devClient({ resolver: resolveToLoopback, requireHttps: true })
      .post(`https://receiver.test:${tlsPort}/cb`, post)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundNetworkError);
    expect((error as OutboundNetworkError).message).toMatch(/^TLS handshake failed \(/);
    expect(serverNames).toEqual(["receiver.test"]);
    expect(received).toHaveLength(0);
  });
});

describe("GuardedHttpClient refusing destinations (private addresses not allowed)", () => {
  let connections: MockInstance[];

  beforeEach(() => {
    // A safety net: if the guard ever let one through, no socket may be opened anyway.
    const refuse = () => {
      throw new Error("test opened a connection");
    };
    connections = [
      vi.spyOn(http.Agent.prototype, "createConnection").mockImplementation(refuse),
      vi.spyOn(https.Agent.prototype, "createConnection").mockImplementation(refuse),
    ];
  });

  afterEach(() => {
    for (const spy of connections) {
      expect(spy).not.toHaveBeenCalled();
      spy.mockRestore();
    }
    expect(received).toHaveLength(0);
  });

  const publicClient = (overrides: Partial<HttpClientOptions> = {}) =>
    createHttpClient({ allowPrivateAddresses: false, ...overrides });

  async function blockedReason(promise: Promise<unknown>): Promise<string> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect((error as OutboundBlockedError).kind).toBe("blocked");
    return (error as OutboundBlockedError).reason;
  }

  it.each([
    "http://127.0.0.1:PORT/cb",
    "http://[::1]:PORT/cb",
    "http://[::ffff:127.0.0.1]:PORT/cb",
    "http://2130706433:PORT/cb",
    "http://0x7f.1:PORT/cb",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[fd00:ec2::254]/",
    "http://0.0.0.0/",
    "https://192.168.1.1/",
  ])("refuses %s before connecting", async (url) => {
    const resolver = vi.fn(resolveToLoopback);
    const client = publicClient({ resolver });
    expect(await blockedReason(client.post(url.replace("PORT", String(port)), post))).toBe("private-address");
    expect(resolver).not.toHaveBeenCalled();
  });

  it("refuses localhost through the system resolver", async () => {
    expect(await blockedReason(publicClient().post(`http://localhost:${port}/cb`, post))).toBe(
      "private-address",
    );
  });

  it("refuses a host name that resolves to loopback", async () => {
    const client = publicClient({ resolver: resolveToLoopback });
    expect(await blockedReason(client.post(`http://receiver.test:${port}/cb`, post))).toBe("private-address");
  });

  it("refuses a host name when any of its addresses is private", async () => {
    const resolver: AddressResolver = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ];
    expect(await blockedReason(publicClient({ resolver }).post("https://mixed.test/cb", post))).toBe(
      "private-address",
    );
  });

  it("states the refusal without naming the resolved address", async () => {
    const error: unknown = await publicClient({ resolver: resolveToLoopback })
      .post("https://receiver.test/cb", post)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect((error as Error).message).toBe("destination host resolves to a non-public address");
    expect((error as Error).message).not.toContain("127.0.0.1");
  });

  it.each([
    ["ftp://example.test/cb", "scheme"],
    ["file:///etc/passwd", "scheme"],
    ["javascript:alert(1)", "scheme"],
    ["http://user:pw@example.test/cb", "invalid-url"],
    ["https://token@example.test/cb", "invalid-url"],
    ["not a url", "invalid-url"],
    ["/relative/cb", "invalid-url"],
  ])("refuses %s with reason %s", async (url, reason) => {
    const resolver = vi.fn(resolveToLoopback);
    expect(await blockedReason(publicClient({ resolver }).post(url, post))).toBe(reason);
    expect(resolver).not.toHaveBeenCalled();
  });

  it("refuses http:// when https is required, before resolving", async () => {
    const resolver = vi.fn(resolveToLoopback);
    const client = publicClient({ resolver, requireHttps: true });
    expect(await blockedReason(client.post("http://example.test/cb", post))).toBe("insecure");
    expect(resolver).not.toHaveBeenCalled();
  });

  it("also refuses private addresses for https URLs when https is required", async () => {
    const client = publicClient({ resolver: resolveToLoopback, requireHttps: true });
    expect(await blockedReason(client.post("https://receiver.test/cb", post))).toBe("private-address");
  });

  it.each<[string, AddressResolver]>([
    [
      "fails",
      async () => Promise.reject(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" })),
    ],
    ["returns nothing", async () => []],
    ["returns something that is not an address", async () => [{ address: "nonsense", family: 4 }]],
  ])("refuses with reason dns when the resolver %s", async (_label, resolver) => {
    expect(await blockedReason(publicClient({ resolver }).post("https://nowhere.test/cb", post))).toBe("dns");
  });
});

describe("createHttpClient", () => {
  it("rejects nonsensical limits", () => {
    expect(() => createHttpClient({ allowPrivateAddresses: false, timeoutMs: 0 })).toThrow(TypeError);
    expect(() => createHttpClient({ allowPrivateAddresses: false, maxResponseBytes: -1 })).toThrow(TypeError);
  });
});
