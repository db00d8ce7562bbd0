/** Starts `ferry serve` as a process on a fresh database of the test dialect, with one sandbox account. */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/db.js";
import {
  type FerryProcess,
  freePort,
  repoRoot,
  runFerry,
  spawnFerry,
  waitForHttp,
} from "../../../test/helpers/process.js";

export interface ServerUnderTest {
  base: string;
  email: string;
  apiKey: string;
  env: Record<string, string>;
  database: TestDatabase;
  process: FerryProcess;
  stop(): Promise<void>;
}

/** The package directory and its CLI's bin. */
export const packageDir = resolve(repoRoot, "packages/client");
export const cliBin = resolve(packageDir, "bin/ferry-client.mjs");

/** Builds dist/ when it is missing or older than the sources (npm ci builds it; this covers edits). */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [resolve(packageDir, "scripts/build.mjs")], { cwd: packageDir });
  if (!existsSync(resolve(packageDir, "dist/cli.js"))) throw new Error("the client was not built");
}

export async function startServer(extraEnv: Record<string, string> = {}): Promise<ServerUnderTest> {
  const database = await createTestDatabase();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const email = "owner@example.com";
  const env = {
    ...database.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_APPLICATION: "100000",
    RATE_LIMIT_PER_IP: "100000",
    RATE_LIMIT_AUTH_PER_IP: "100000",
    FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
    ...extraEnv,
  };
  const account = await runFerry(
    ["admin", "create-account", "--email", email, "--name", "Owner Ltd", "--json"],
    env,
  );
  if (account.code !== 0) throw new Error(`create-account failed: ${account.stdout}${account.stderr}`);
  const app = await runFerry(["admin", "create-app", "--email", email, "--name", "sdk", "--json"], env);
  if (app.code !== 0) throw new Error(`create-app failed: ${app.stdout}${app.stderr}`);
  const apiKey = JSON.parse(app.stdout).api_key as string;
  const proc = spawnFerry(["serve"], env);
  await waitForHttp(`${base}/readyz`, proc);
  return {
    base,
    email,
    apiKey,
    env,
    database,
    process: proc,
    async stop() {
      if (proc.child.exitCode === null) {
        proc.child.kill("SIGTERM");
        await proc.exited;
      }
      await database.drop();
    },
  };
}
