import type { FastifyInstance } from "fastify";
import pino from "pino";
import { buildServer } from "../../src/app/build-server.js";
import { createFerry, type Ferry } from "../../src/app/ferry.js";
import { loadConfig } from "../../src/config/config.js";
import { createDatabase, databaseOptionsFromConfig } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrator.js";
import type { EnrichmentKind } from "../../src/features/enrichments/index.js";
import type { JobRow } from "../../src/jobs/queue.js";
import { FixedClock } from "../../src/shared/clock.js";
import type { RouteModule } from "../../src/shared/feature.js";
import { randomId } from "../../src/shared/ids.js";
import { createTestDatabase, type TestDatabase } from "./db.js";

/** A server under test: the Fastify app (use app.inject), its Ferry, clock and database. */
export interface TestApp {
  app: FastifyInstance;
  ferry: Ferry;
  clock: FixedClock;
  database: TestDatabase;
  close(): Promise<void>;
}

/**
 * Starts `app` listening on a free port of 127.0.0.1, for tests that need a real socket; returns
 * its base URL (`http://127.0.0.1:PORT`) and port.
 */
export async function listenOnLoopback(app: FastifyInstance): Promise<{ base: string; port: number }> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (typeof address !== "object" || !address) throw new Error("the test server has no TCP address");
  return { base: `http://127.0.0.1:${address.port}`, port: address.port };
}

/**
 * Builds a full Ferry app on a fresh database of the current dialect, with a fixed clock, quiet
 * logs and generous rate limits. `env` overrides any setting.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: {
    extraRoutes?: RouteModule[];
    rateLimitPrefix?: string;
    onQuery?: (sql: string, parameters: readonly unknown[]) => void;
    /** Enrichment kinds to serve instead of the registered ones (a test kind beside them). */
    enrichmentKinds?: readonly EnrichmentKind[];
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  return buildTestApp(database, env, options, async () => database.drop());
}

/**
 * A second node of `t`: its own Ferry, connections and server over the same database and data
 * directory (keys), with `env` over the usual settings. Closing it leaves the database to `t`.
 */
export async function createPeerApp(t: TestApp, env: Record<string, string> = {}): Promise<TestApp> {
  return buildTestApp(t.database, env, {}, async () => {});
}

async function buildTestApp(
  database: TestDatabase,
  env: Record<string, string>,
  options: {
    extraRoutes?: RouteModule[];
    rateLimitPrefix?: string;
    onQuery?: (sql: string, parameters: readonly unknown[]) => void;
    enrichmentKinds?: readonly EnrichmentKind[];
  },
  drop: () => Promise<void>,
): Promise<TestApp> {
  const config = loadConfig({
    PUBLIC_BASE_URL: "http://ferry.test",
    RATE_LIMIT_PER_APPLICATION: "100000",
    RATE_LIMIT_PER_IP: "100000",
    RATE_LIMIT_AUTH_PER_IP: "100000",
    ...database.env,
    ...env,
  });
  const clock = new FixedClock(env.TEST_CLOCK_START ?? "2026-01-15T10:00:00.000Z");
  const db = createDatabase({ ...databaseOptionsFromConfig(config), onQuery: options.onQuery });
  await migrateToLatest(db.db);
  const ferry = await createFerry(config, db, {
    clock,
    logger: pino({ level: process.env.FERRY_TEST_LOG ?? "silent" }),
    rateLimitPrefix: options.rateLimitPrefix ?? `ferry-test-${randomId(6)}`,
    ...(options.enrichmentKinds ? { enrichmentKinds: options.enrichmentKinds } : {}),
  });
  const app = await buildServer(ferry, options);
  await app.ready();
  return {
    app,
    ferry,
    clock,
    database,
    async close() {
      await app.close();
      await ferry.close();
      await drop();
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
  const account = await t.ferry.auth.createAccount(email, "Test Owner");
  const { application, apiKey } = await t.ferry.auth.createApplication(email, "Test app", opts.scopes);
  const created: TestAccount = {
    accountId: account.id,
    applicationId: application.id,
    email,
    apiKey,
    token: "",
    headers: {},
  };
  await renewToken(t, created);
  return created;
}

/**
 * Takes a fresh token for `account` through the API (tokens live 8 hours: tests that move the
 * clock on renew them) and puts it in `account.token` and `account.headers`.
 */
export async function renewToken(t: TestApp, account: TestAccount): Promise<string> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/auth/get_token/",
    payload: { api_key: account.apiKey, email: account.email },
  });
  if (res.statusCode !== 200) throw new Error(`get_token failed: ${res.statusCode} ${res.body}`);
  account.token = res.json().token as string;
  account.headers = { authorization: `JWT ${account.token}` };
  return account.token;
}

/** Runs the handler of job `kind` once, as the worker would with `row` (a job row or a stand-in). */
export async function runJobHandler(ferry: Ferry, kind: string, payload: object, row: JobRow): Promise<void> {
  const handler = ferry.jobHandlers.find((h) => h.kind === kind);
  if (!handler) throw new Error(`no handler for job kind ${kind}`);
  await handler.run(payload, row);
}
