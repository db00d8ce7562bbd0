import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/db.js";
import { type FerryProcess, freePort, runFerry, spawnFerry, waitForHttp } from "../helpers/process.js";

describe("ferry as a process: admin CLI, serve, token round trip, graceful shutdown", () => {
  let database: TestDatabase;
  let server: FerryProcess | undefined;
  let base: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = { ...database.env, PORT: String(port), HOST: "127.0.0.1", PUBLIC_BASE_URL: base };
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
    await database?.drop();
  });

  it("migrates, then creates an account and an application with --json output", async () => {
    const migrate = await runFerry(["migrate"], env);
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toMatch(/Applied: 0001_foundation|Database is up to date/);

    const account = await runFerry(
      ["admin", "create-account", "--email", "owner@example.com", "--name", "Owner Ltd", "--json"],
      env,
    );
    expect(account.code).toBe(0);
    expect(JSON.parse(account.stdout)).toEqual({
      account_id: 1,
      email: "owner@example.com",
      name: "Owner Ltd",
      setup_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/setup\/[A-Za-z0-9_-]{43}$/),
    });

    const invite = await runFerry(
      ["admin", "invite", "--account", "1", "--email", "colleague@example.com", "--json"],
      env,
    );
    expect(invite.code).toBe(0);
    expect(JSON.parse(invite.stdout)).toMatchObject({
      account_id: 1,
      email: "colleague@example.com",
      setup_url: expect.stringContaining("/dashboard/setup/"),
    });
    const noAccount = await runFerry(["admin", "invite", "--account", "99", "--email", "x@example.com"], env);
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain("No account with id 99");

    const app = await runFerry(
      ["admin", "create-app", "--email", "owner@example.com", "--name", "CRM", "--json"],
      env,
    );
    expect(app.code).toBe(0);
    const created = JSON.parse(app.stdout);
    expect(created).toEqual({
      account_id: 1,
      application_id: 1,
      email: "owner@example.com",
      name: "CRM",
      scopes: "*",
      api_key: expect.stringMatching(/^fry_sbx_[A-Za-z0-9_-]{43}$/),
    });
    env.API_KEY = created.api_key;

    const dup = await runFerry(["admin", "create-account", "--email", "owner@example.com", "--json"], env);
    expect(dup.code).toBe(1);
    expect(JSON.parse(dup.stdout).error).toContain("already exists");

    const badScope = await runFerry(
      ["admin", "create-app", "--email", "owner@example.com", "--name", "X", "--scopes", "nope", "--json"],
      env,
    );
    expect(badScope.code).not.toBe(0);
  });

  it("serves get_token → authenticated call → token_refresh → token_verify over a real socket", async () => {
    server = spawnFerry(["serve"], env);
    await waitForHttp(`${base}/readyz`, server);
    // Not an empty database: no development account is printed.
    expect(server.stdout()).not.toContain("development account");

    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const tokenRes = await post("/v1/auth/get_token", { api_key: env.API_KEY, email: "owner@example.com" });
    expect(tokenRes.status).toBe(200);
    const { token } = (await tokenRes.json()) as { token: string };

    const me = await fetch(`${base}/v1/account/`, { headers: { authorization: `JWT ${token}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get("x-request-id")).toBeTruthy();
    expect(await me.json()).toEqual({
      id: 1,
      email: "owner@example.com",
      name: "Owner Ltd",
      environment: "sandbox",
      default_language: "en",
      application: { id: 1, name: "CRM", scopes: "*" },
    });

    const refreshed = await post("/v1/auth/token_refresh/", { token });
    expect(refreshed.status).toBe(200);
    const { token: token2 } = (await refreshed.json()) as { token: string };
    const verified = await post("/v1/auth/token_verify/", { token: token2 });
    expect(verified.status).toBe(200);
    expect(await verified.json()).toEqual({ token: token2 });
    env.TOKEN = token2;
  });

  it("lists and revokes applications from the CLI; the running server refuses the revoked token at once", async () => {
    const list = await runFerry(["admin", "list-apps", "--json"], env);
    expect(list.code).toBe(0);
    const apps = JSON.parse(list.stdout).applications;
    expect(apps).toHaveLength(1);
    expect(apps[0]).toMatchObject({
      application_id: 1,
      email: "owner@example.com",
      name: "CRM",
      revoked_at: null,
    });
    expect(list.stdout).not.toContain(env.API_KEY!);

    const revoke = await runFerry(["admin", "revoke-app", "--id", "1", "--json"], env);
    expect(revoke.code).toBe(0);
    expect(JSON.parse(revoke.stdout)).toEqual({ application_id: 1, revoked: true });
    const res = await fetch(`${base}/v1/account/`, { headers: { authorization: `JWT ${env.TOKEN}` } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("AUTHENTICATION_FAILURE");
  });

  it("finishes an in-flight request on SIGTERM, then exits 0", async () => {
    const s = server!;
    const body = JSON.stringify({ api_key: "fry_sbx_unknown", email: "owner@example.com" });
    const half = Math.floor(body.length / 2);
    const url = new URL(`${base}/v1/auth/get_token/`);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.on("data", (d) => {
            text += d;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, half));
      setTimeout(() => {
        s.child.kill("SIGTERM");
        setTimeout(() => req.end(body.slice(half)), 500);
      }, 300);
    });
    const res = await answer;
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).code).toBe("AUTHENTICATION_FAILURE");
    expect(await s.exited).toBe(0);
  });
});

describe("first start of a deployment", () => {
  it("sandbox with an empty database creates a development account and prints its key once", async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    const env = { ...database.env, PORT: String(port), HOST: "127.0.0.1" };
    try {
      const first = spawnFerry(["serve", "--no-worker"], env);
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, first);
      const key = /api_key: (fry_sbx_\S+)/.exec(first.stdout())?.[1];
      expect(first.stdout()).toContain("email:   dev@ferry.local");
      expect(key).toBeTruthy();
      const setup = /dashboard setup link \(one use, valid 7 days\): (\S+)/.exec(first.stdout())?.[1];
      const setupPage = await fetch(setup!);
      expect(setupPage.status).toBe(200);
      expect(await setupPage.text()).toContain("dev@ferry.local");
      const res = await fetch(`http://127.0.0.1:${port}/v1/auth/get_token/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: key, email: "dev@ferry.local" }),
      });
      expect(res.status).toBe(200);
      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);

      const second = spawnFerry(["serve", "--no-worker"], env);
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, second);
      expect(second.stdout()).not.toContain("api_key:");
      expect(second.stdout()).not.toContain("dashboard setup link");
      second.child.kill("SIGTERM");
      await second.exited;
    } finally {
      await database.drop();
    }
  });

  it("live never creates a development account", async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    try {
      const live = spawnFerry(["serve", "--no-worker"], {
        ...database.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        FERRY_ENVIRONMENT: "live",
      });
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, live);
      expect(live.stdout()).not.toContain("api_key:");
      live.child.kill("SIGTERM");
      await live.exited;
      const list = await runFerry(["admin", "list-apps", "--json"], {
        ...database.env,
        FERRY_ENVIRONMENT: "live",
      });
      expect(JSON.parse(list.stdout)).toEqual({ applications: [] });
    } finally {
      await database.drop();
    }
  });

  it("reports every configuration problem at once and exits 2", async () => {
    const res = await runFerry(["serve"], {
      PORT: "eighty",
      FERRY_ENVIRONMENT: "prod",
      DATABASE_URL: "mysql://x",
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("PORT must be an integer");
    expect(res.stderr).toContain("FERRY_ENVIRONMENT must be one of sandbox, live");
    expect(res.stderr).toContain("DATABASE_URL must use postgres: or postgresql:");
  });
});
