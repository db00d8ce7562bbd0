/**
 * A TCP proxy in front of a real server that can cut a connection midway: armed with `cutAfter(n)`,
 * the first connection that has carried more than `n` bytes from the server to the client is
 * destroyed on both sides right after its n-th byte (as a network failure would), once. Every
 * other byte passes unchanged.
 */
import { createServer, type Server, Socket } from "node:net";

export interface CuttingProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Cut the next connection that carries more than `bytes` bytes to the client (once). */
  cutAfter(bytes: number): void;
  /** Connections cut so far, and the bytes each had delivered. */
  readonly cuts: number[];
  close(): Promise<void>;
}

export async function startCuttingProxy(targetPort: number): Promise<CuttingProxy> {
  let armed: number | undefined;
  const cuts: number[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    let delivered = 0;
    let cut = false;
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", closeBoth);
    upstream.on("error", closeBoth);
    client.on("close", () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on("close", () => {
      sockets.delete(upstream);
      if (!cut) client.end();
    });
    upstream.connect(targetPort, "127.0.0.1");
    client.on("data", (d) => {
      if (!upstream.write(d)) client.pause();
    });
    upstream.on("drain", () => client.resume());
    upstream.on("data", (d: Buffer) => {
      if (cut) return;
      if (armed !== undefined && delivered + d.length > armed) {
        const keep = armed - delivered;
        armed = undefined;
        cut = true;
        cuts.push(delivered + keep);
        client.write(d.subarray(0, keep), () => closeBoth());
        return;
      }
      delivered += d.length;
      if (!client.write(d)) upstream.pause();
    });
    client.on("drain", () => upstream.resume());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    cutAfter(bytes) {
      armed = bytes;
    },
    cuts,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
