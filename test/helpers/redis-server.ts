/**
 * A private Redis server (the real redis-server binary) on a free port, without persistence, that a
 * test may restart (losing every key, as a Redis without persistence does) and change ACLs on,
 * without disturbing the shared Redis other tests use.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./process.js";

export interface TestRedisServer {
  readonly port: number;
  /** redis://[user:password@]127.0.0.1:<port> */
  url(user?: string, password?: string): string;
  /** Runs one command as the default user. */
  command(...args: string[]): Promise<unknown>;
  /** SIGKILL, then starts again on the same port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisServer(): Promise<TestRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 200; i++) {
      const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => null });
      probe.on("error", () => {});
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    port,
    url: (user, password) =>
      user ? `redis://${user}:${password}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`,
    async command(...args) {
      const r = new Redis({ port, host: "127.0.0.1" });
      try {
        return await r.call(args[0]!, ...args.slice(1));
      } finally {
        r.disconnect();
      }
    },
    async restart() {
      await kill();
      await start();
    },
    stop: kill,
  };
}
