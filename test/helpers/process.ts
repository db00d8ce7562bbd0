import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";

/** The repository root. */
export const repoRoot = resolve(import.meta.dirname, "../..");

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? res(addr.port) : rej(new Error("no port"))));
    });
  });
}

/** A `ferry` child process with its collected output. */
export interface FerryProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Runs `node bin/ferry.mjs <args>` with `env` added to the current environment. */
export function spawnFerry(
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
): FerryProcess {
  // Run the bin as users do (its shebang carries Ferry's node flags); extra node flags (a CPU
  // profile for the benchmarks) go on an explicit node command line with the same flags and
  // environment.
  const bin = resolve(repoRoot, "bin/ferry.mjs");
  // The environment the shebang sets for glibc's malloc (ADR 0040) goes on the explicit command too.
  const mallocEnv = nodeArgs.length === 0 ? {} : { MALLOC_ARENA_MAX: "2", MALLOC_TRIM_THRESHOLD_: "131072" };
  const options = {
    cwd: repoRoot,
    env: { ...process.env, ...mallocEnv, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"] as ("ignore" | "pipe")[],
  };
  const child =
    nodeArgs.length === 0
      ? spawn(bin, args, options)
      : spawn(
          process.execPath,
          ["--max-semi-space-size=2", "--heap-growing-percent=30", ...nodeArgs, bin, ...args],
          options,
        );
  return collect(child);
}

/** Collects a child's output and exit code. */
function collect(child: ChildProcess): FerryProcess {
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs a ferry command to completion; returns exit code and output. */
export async function runFerry(args: string[], env: Record<string, string>) {
  const p = spawnFerry(args, env);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** Polls `url` until it answers 200 or `timeoutMs` passes (then throws with the process output). */
export async function waitForHttp(url: string, proc?: FerryProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (proc && proc.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up.\nstdout: ${proc?.stdout()}\nstderr: ${proc?.stderr()}`);
}

/** Waits until `check` returns true, polling every `everyMs`; throws after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error("condition not met in time");
}

/** Runs a worker process with the diagnostic job kind (test/helpers/diagnostic-worker.ts). */
export function spawnDiagnosticWorker(env: Record<string, string>): FerryProcess {
  const child = spawn(process.execPath, ["bin/run-ts.mjs", "test/helpers/diagnostic-worker.ts"], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}
