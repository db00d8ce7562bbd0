/**
 * Audit entries are durable before the answer leaves, also when concurrent calls share one commit:
 * a server killed with SIGKILL under load has an AAA-0010 entry for every call it answered, and
 * every chain still verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/db.js";
import {
  type FerryProcess,
  freePort,
  runFerry,
  spawnFerry,
  waitForHttp,
} from "../../../test/helpers/process.js";

const CLIENTS = 8;
const ANSWERS_BEFORE_KILL = 400;

describe("audit entries of answered calls after kill -9 under load", () => {
  let database: TestDatabase;
  let server: FerryProcess | undefined;
  let env: Record<string, string>;
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = { ...database.env, PORT: String(port), HOST: "127.0.0.1", PUBLIC_BASE_URL: base };
    expect((await runFerry(["migrate"], env)).code).toBe(0);
    const email = "owner@example.com";
    expect((await runFerry(["admin", "create-account", "--email", email, "--json"], env)).code).toBe(0);
    const app = await runFerry(["admin", "create-app", "--email", email, "--name", "Load", "--json"], env);
    env.API_KEY = JSON.parse(app.stdout).api_key;
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
    await database?.drop();
  });

  it("has an entry for every answered call and intact chains", async () => {
    server = spawnFerry(["serve", "--no-worker"], env);
    await waitForHttp(`${base}/readyz`, server);
    const tokenRes = await fetch(`${base}/v1/auth/get_token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_key: env.API_KEY, email: "owner@example.com" }),
    });
    const { token } = (await tokenRes.json()) as { token: string };
    const headers = { authorization: `JWT ${token}` };

    let answered = 0;
    let killed = false;
    const exited = server.exited;
    const client = async () => {
      while (!killed) {
        try {
          const res = await fetch(`${base}/v1/account/`, { headers });
          await res.arrayBuffer();
          if (res.status === 200) answered += 1;
        } catch {
          // Calls in flight when the server dies get no answer: they need no entry.
        }
        if (answered >= ANSWERS_BEFORE_KILL && !killed) {
          killed = true;
          server?.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    await exited;
    expect(answered).toBeGreaterThanOrEqual(ANSWERS_BEFORE_KILL);

    const exported = await runFerry(["audit", "export", "--since", "2000-01-01"], env);
    expect(exported.code, exported.stderr).toBe(0);
    const calls = exported.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { code: string; path: string; value: string })
      .filter((e) => e.code === "AAA-0010" && e.path === "/v1/account/" && e.value === "200");
    expect(calls.length).toBeGreaterThanOrEqual(answered);

    const verified = await runFerry(["audit", "verify", "--json"], env);
    expect(verified.code, verified.stdout).toBe(0);
    expect(JSON.parse(verified.stdout).ok).toBe(true);
  });
});
