/**
 * A call whose connection fails before any answer (a node killed, a load balancer resetting) is
 * sent again when it may safely be sent twice (GET, HEAD, PUT, DELETE: a chunk PUT replaces the
 * chunk), after a growing delay; a POST is not, since it may have created something.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FerryClient } from "../src/index.js";

function jwt(claims: Record<string, number>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "HS256" })}.${part(claims)}.sig`;
}

describe("a connection that fails before an answer", () => {
  let server: Server;
  let base: string;
  let cutsLeft = 0;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(`${req.method} ${req.url}`);
        if (cutsLeft > 0) {
          cutsLeft--;
          req.socket.destroy();
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: 7, state: "uploading" }));
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
  });

  const client = (retries: { status: number; waitMs: number }[]) =>
    new FerryClient({
      baseUrl: base,
      token: jwt({ exp: Date.now() / 1000 + 3600 }),
      onRetry: (r) => retries.push({ status: r.status, waitMs: r.waitMs }),
    });

  it("sends an idempotent call again, after a growing delay", async () => {
    cutsLeft = 2;
    const retries: { status: number; waitMs: number }[] = [];
    const res = await client(retries).send({
      method: "PUT",
      path: "/v1/media/7?current_chunk=2",
      body: () => new Uint8Array([1, 2, 3]),
    });
    expect(res.status).toBe(200);
    expect(retries).toEqual([
      { status: 0, waitMs: 500 },
      { status: 0, waitMs: 1000 },
    ]);
    expect(seen).toEqual(Array(3).fill("PUT /v1/media/7?current_chunk=2"));
  });

  it("does not send a POST again", async () => {
    cutsLeft = 1;
    const retries: { status: number; waitMs: number }[] = [];
    await expect(
      client(retries).send({ method: "POST", path: "/v1/media/", body: () => "x" }),
    ).rejects.toThrow();
    expect(retries).toEqual([]);
    expect(seen).toEqual(["POST /v1/media/"]);
  });
});
