import { randomFillSync } from "node:crypto";
import { once } from "node:events";
import { createServer, get, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { isOwned, markBodyPieces, markOwned, releaseOwned, releaseWhenWritten } from "./owned-buffers.js";

/** A buffer of `bytes` random bytes with memory of its own (never a slice of Node's pool). */
function fresh(bytes: number): Buffer {
  return randomFillSync(Buffer.alloc(bytes));
}

describe("owned buffers", () => {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    }
  });

  /**
   * Serves one response written by `respond`; gives the bytes a client received once it has them
   * all and the server's last write has completed (its callbacks have run).
   */
  async function fetchFrom(respond: (res: ServerResponse) => void): Promise<Buffer> {
    let finished: Promise<unknown> = Promise.resolve();
    const server = createServer((_req, res) => {
      finished = once(res, "finish");
      respond(res);
    });
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const received = await new Promise<Buffer>((resolve, reject) => {
      get(`http://127.0.0.1:${port}/`, (res) => {
        const pieces: Buffer[] = [];
        res.on("data", (piece: Buffer) => pieces.push(piece));
        res.on("end", () => resolve(Buffer.concat(pieces)));
        res.on("error", reject);
      }).on("error", reject);
    });
    await finished;
    return received;
  }

  it("frees each owned buffer once the socket has written it, and the client gets every byte", async () => {
    const owned = Array.from({ length: 40 }, () => markOwned(fresh(64 * 1024)));
    const other = fresh(100_000);
    const expected = Buffer.concat([...owned.slice(0, 20), other, ...owned.slice(20)]);
    const callbacks: (Error | null | undefined)[] = [];
    const received = await fetchFrom((res) => {
      releaseWhenWritten(res);
      res.setHeader("content-length", expected.length);
      // Written all at once, so most wait in the socket's queue before the kernel takes them.
      for (const piece of owned.slice(0, 20)) res.write(piece);
      res.write(other, (error) => callbacks.push(error));
      for (const [i, piece] of owned.slice(20).entries()) {
        if (i % 2) res.write(piece, "binary", (error) => callbacks.push(error));
        else res.write(piece);
      }
      res.end();
    });
    expect(received.equals(expected)).toBe(true);
    expect(callbacks).toHaveLength(11);
    expect(callbacks.every((error) => !error)).toBe(true);
    expect(owned.every((piece) => piece.length === 0 && !isOwned(piece))).toBe(true);
    expect(other.length).toBe(100_000);
  });

  it("frees nothing but buffers marked owned, and marks no empty buffer", () => {
    const pooled = Buffer.from("a slice of the shared pool");
    releaseOwned(pooled);
    expect(pooled.toString()).toBe("a slice of the shared pool");
    expect(isOwned(markOwned(Buffer.alloc(0)))).toBe(false);
    const piece = markOwned(fresh(1000));
    expect(isOwned(piece)).toBe(true);
    releaseOwned(piece);
    expect(piece.length).toBe(0);
    releaseOwned(piece); // a second release is harmless
    expect(isOwned(piece)).toBe(false);
  });

  it("marks no buffer that visibly shares its memory: a slice, or a small buffer of the shared pool", () => {
    const pooled = Buffer.from("twenty-one bytes long");
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    expect(isOwned(markOwned(pooled))).toBe(false);
    const whole = fresh(4096);
    expect(isOwned(markOwned(whole.subarray(0, 100)))).toBe(false);
    expect(isOwned(markOwned(whole.subarray(100)))).toBe(false);
    expect(isOwned(markOwned(whole))).toBe(true);
  });

  it("marks each piece of a request body the HTTP parser pushes, and no other stream's", async () => {
    const body = fresh(1024 * 1024);
    const seen: { owned: boolean; bytes: Buffer }[] = [];
    const server = createServer((req, res) => {
      markBodyPieces(req).on("data", (piece: Buffer) =>
        seen.push({ owned: isOwned(piece), bytes: Buffer.from(piece) }),
      );
      req.on("end", () => res.end());
    });
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const put = request({
        port,
        host: "127.0.0.1",
        method: "PUT",
        headers: { "content-length": body.length },
      });
      put.on("response", (res) => res.resume().on("end", resolve));
      put.on("error", reject);
      put.end(body);
    });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((piece) => piece.owned)).toBe(true);
    expect(Buffer.concat(seen.map((piece) => piece.bytes)).equals(body)).toBe(true);

    // A stream that is not a request's (an injected request in tests) pushes its caller's buffers.
    const caller = fresh(1000);
    const other = markBodyPieces(new Readable({ read() {} }));
    other.push(caller);
    const [piece] = (await once(other, "data")) as [Buffer];
    expect(piece).toBe(caller);
    expect(isOwned(caller)).toBe(false);
  });
});
