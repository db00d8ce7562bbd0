import type { FastifyInstance } from "fastify";
import pino from "pino";
import { buildServer } from "../../src/app/build-server.js";
import { type Container, createContainer } from "../../src/app/container.js";
import type { RoutePlugin } from "../../src/app/routes.js";
import { loadConfig } from "../../src/config/config.js";
import { FixedClock } from "../../src/shared/clock.js";
import { randomId } from "../../src/shared/ids.js";
import { createTestDatabase, type TestDatabase } from "./db.js";

/** A server under test: the Fastify app (use app.inject), its container, clock and database. */
export interface TestApp {
  app: FastifyInstance;
  container: Container;
  clock: FixedClock;
  database: TestDatabase;
  close(): Promise<void>;
}

/**
 * Builds a full Ferry app on a fresh database of the current dialect, with a fixed clock, quiet
 * logs and generous rate limits. `env` overrides any setting.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { extraRoutes?: RoutePlugin[]; rateLimitPrefix?: string } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = loadConfig({
    PUBLIC_BASE_URL: "http://ferry.test",
    RATE_LIMIT_PER_APPLICATION: "100000",
    RATE_LIMIT_PER_IP: "100000",
    RATE_LIMIT_AUTH_PER_IP: "100000",
    ...database.env,
    ...env,
  });
  const clock = new FixedClock(env.TEST_CLOCK_START ?? "2026-01-15T10:00:00.000Z");
  const container = await createContainer(config, {
    clock,
    logger: pino({ level: process.env.FERRY_TEST_LOG ?? "silent" }),
    rateLimitPrefix: options.rateLimitPrefix ?? `ferry-test-${randomId(6)}`,
  });
  const app = await buildServer(container, options);
  await app.ready();
  return {
    app,
    container,
    clock,
    database,
    async close() {
      await app.close();
      await container.close();
      await database.drop();
    },
  };
}

/** An account with one application and a token, made through the services. */
export interface TestAccount {
  accountId: number;
  applicationId: number;
  email: string;
  apiKey: string;
  token: string;
  /** `{ authorization: "JWT <token>" }` */
  headers: Record<string, string>;
}

/** Creates an account + application (optionally scoped) and gets a token through the API. */
export async function createTestAccount(
  t: TestApp,
  opts: { email?: string; scopes?: string[] } = {},
): Promise<TestAccount> {
  const email = opts.email ?? `owner-${randomId(4).toLowerCase()}@example.com`;
  const account = await t.container.auth.createAccount(email, "Test Owner");
  const { application, apiKey } = await t.container.auth.createApplication(email, "Test app", opts.scopes);
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/auth/get_token/",
    payload: { api_key: apiKey, email },
  });
  if (res.statusCode !== 200) throw new Error(`get_token failed: ${res.statusCode} ${res.body}`);
  const token = res.json().token as string;
  return {
    accountId: account.id,
    applicationId: application.id,
    email,
    apiKey,
    token,
    headers: { authorization: `JWT ${token}` },
  };
}
