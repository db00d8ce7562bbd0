/**
 * A TCP proxy in front of a real server that can make it look frozen (connections accepted, bytes
 * held, no answer) or down (connections refused), as an S3 server that hangs or stops would.
 */
import { createServer, type Server, Socket } from "node:net";

export interface FreezingProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Hold every byte in both directions, on open and new connections, until `normal()`. */
  freeze(): void;
  /** Close every connection and refuse new ones (reset at once) until `normal()`. */
  down(): void;
  /** Forward again; held bytes flow on. */
  normal(): void;
  close(): Promise<void>;
}

export async function startFreezingProxy(targetPort: number): Promise<FreezingProxy> {
  let mode: "normal" | "frozen" | "down" = "normal";
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    if (mode === "down") {
      client.resetAndDestroy();
      return;
    }
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    for (const s of pair) {
      s.on("error", closeBoth);
      s.on("close", closeBoth);
    }
    upstream.connect(targetPort, "127.0.0.1");
    // Frozen: connected, but nothing flows until normal() pipes the pair.
    if (mode === "frozen") {
      client.pause();
      upstream.pause();
    } else {
      client.pipe(upstream);
      upstream.pipe(client);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("proxy has no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    freeze() {
      mode = "frozen";
      for (const [a, b] of pairs) {
        a.unpipe(b);
        b.unpipe(a);
        a.pause();
        b.pause();
      }
    },
    down() {
      mode = "down";
      for (const [a, b] of pairs) {
        a.resetAndDestroy();
        b.destroy();
      }
      pairs.clear();
    },
    normal() {
      mode = "normal";
      for (const [a, b] of pairs) {
        a.pipe(b);
        b.pipe(a);
        a.resume();
        b.resume();
      }
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
