/**
 * How a download's outcome is judged when the connection ends, over a real socket. A client that
 * has received its Content-Length may close before the body stream has ended (the last read still
 * settling): every byte was handed to the connection, so the transfer is complete. The bodies here
 * hold their end back until the connection is gone, which makes that order certain.
 */
import { connect } from "node:net";
import { Readable } from "node:stream";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenOnLoopback } from "../../../test/helpers/app.js";
import { sendDownload } from "./index.js";

const CHUNK = 64 * 1024;
const SIZE = 40 * CHUNK + 123;
const content = Buffer.alloc(SIZE, 7);

/**
 * A body that pushes `content` up to byte `upTo` (then waits, as a stalled read would), and ends
 * after its last byte only with `ends` true.
 */
function body(ends: boolean, upTo = SIZE): Readable {
  let offset = 0;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (offset < upTo) {
        const end = Math.min(offset + CHUNK, upTo);
        this.push(content.subarray(offset, end));
        offset = end;
      } else if (ends && offset === SIZE) this.push(null);
    },
  });
}

let app: FastifyInstance;
let port: number;
/** The outcome each download settled with, by the test's key. */
const settled = new Map<string, (complete: boolean) => void>();

beforeAll(async () => {
  app = Fastify();
  app.get<{ Params: { key: string }; Querystring: { ends?: string; chunked?: string; upTo?: string } }>(
    "/download/:key",
    (request, reply) => {
      const headers: Record<string, string> = { "content-type": "application/octet-stream" };
      if (request.query.chunked === undefined) headers["content-length"] = String(SIZE);
      return sendDownload(reply, {
        status: 200,
        headers,
        body: body(request.query.ends !== undefined, Number(request.query.upTo ?? SIZE)),
        async settle(complete) {
          settled.get(request.params.key)?.(complete);
        },
      });
    },
  );
  ({ port } = await listenOnLoopback(app));
});
afterAll(async () => app?.close());

/**
 * Downloads `path` over its own connection (`Connection: close`) and drops it once `keep` body
 * bytes arrived, or at the server's end of stream. Resolves with the bytes received and the
 * outcome the server recorded.
 */
async function download(path: string, keep: number): Promise<{ received: number; complete: boolean }> {
  const key = `${Math.random()}`;
  const outcome = new Promise<boolean>((resolve) => settled.set(key, resolve));
  const received = await new Promise<number>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let head = Buffer.alloc(0);
    let bodyBytes = -1;
    const done = () => {
      socket.destroy();
      resolve(Math.max(bodyBytes, 0));
    };
    socket.on("error", reject);
    socket.on("end", done);
    socket.on("data", (chunk: Buffer) => {
      if (bodyBytes < 0) {
        head = Buffer.concat([head, chunk]);
        const split = head.indexOf("\r\n\r\n");
        if (split < 0) return;
        bodyBytes = head.length - split - 4;
      } else bodyBytes += chunk.length;
      if (bodyBytes >= keep) done();
    });
    socket.write(`GET ${path.replace("KEY", key)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
  return { received, complete: await outcome };
}

describe("the outcome of a download", () => {
  it("is complete when the client closes at Content-Length before the body's end", async () => {
    expect(await download("/download/KEY", SIZE)).toEqual({ received: SIZE, complete: true });
  });

  it("is complete when the body ends first", async () => {
    expect(await download("/download/KEY?ends", SIZE)).toEqual({ received: SIZE, complete: true });
  });

  it("is incomplete when the client closes before Content-Length", async () => {
    expect(await download(`/download/KEY?ends&upTo=${SIZE - 1}`, SIZE - 1)).toEqual({
      received: SIZE - 1,
      complete: false,
    });
  });

  it("is incomplete without Content-Length until the body ends, whatever was sent", async () => {
    // A chunked body has no length to reach: only its last chunk, written at its end, completes it.
    const cut = await download("/download/KEY?chunked", SIZE);
    expect(cut).toMatchObject({ complete: false });
    expect(cut.received).toBeGreaterThanOrEqual(SIZE);
    expect(await download("/download/KEY?chunked&ends", Number.POSITIVE_INFINITY)).toMatchObject({
      complete: true,
    });
  });
});
