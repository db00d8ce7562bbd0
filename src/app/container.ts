import { Redis } from "ioredis";
import pino, { type Logger } from "pino";
import { type KeyRing, openKeyRing } from "../adapters/key-ring/key-ring.js";
import type { Config } from "../config/config.js";
import { createDatabase, type Database, databaseOptionsFromConfig } from "../db/database.js";
import { migrateToLatest } from "../db/migrator.js";
import { AuditWriter } from "../features/audit/audit.writer.js";
import { AuthService } from "../features/auth/auth.service.js";
import { RateLimiter } from "../http/rate-limit.js";
import { JobQueue } from "../jobs/queue.js";
import { type Clock, systemClock } from "../shared/clock.js";

/**
 * The composition root: every adapter and service, built once from the configuration. Routes,
 * pages, CLI commands and jobs take what they need from here.
 */
export interface Container {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly database: Database;
  readonly keyRing: KeyRing;
  readonly redis: Redis | undefined;
  readonly jobs: JobQueue;
  readonly audit: AuditWriter;
  readonly auth: AuthService;
  readonly rateLimiter: RateLimiter;
  /** Closes connections (database, Redis). */
  close(): Promise<void>;
}

/** What tests (or special commands) may replace. */
export interface ContainerOverrides {
  clock?: Clock;
  logger?: Logger;
  keyRing?: KeyRing;
  database?: Database;
  /** Redis key prefix of the rate-limit counters (tests isolate themselves with it). */
  rateLimitPrefix?: string;
}

/** Paths and headers whose values never reach the logs. */
export const LOG_REDACT = [
  "req.headers.authorization",
  "req.headers.cookie",
  "res.headers['set-cookie']",
  "api_key",
  "token",
  "password",
  "*.api_key",
  "*.token",
  "*.password",
];

/** Builds the logger: JSON lines on stdout with secrets redacted. */
export function createLogger(config: Config): Logger {
  return pino({ level: config.LOG_LEVEL, redact: { paths: LOG_REDACT, censor: "[redacted]" } });
}

/** Builds every adapter and service and applies pending migrations. */
export async function createContainer(
  config: Config,
  overrides: ContainerOverrides = {},
): Promise<Container> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config);
  const database = overrides.database ?? createDatabase(databaseOptionsFromConfig(config));
  await migrateToLatest(database.db);
  const keyRing =
    overrides.keyRing ?? openKeyRing({ masterKeyEnv: config.FERRY_MASTER_KEY, dataDir: config.dataDir });
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false })
    : undefined;
  redis?.on("error", (err) => logger.warn({ err: err.message }, "redis error"));
  const audit = new AuditWriter(database, clock);
  const jobs = new JobQueue(database, clock, {
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    backoffBaseMs: config.JOB_BACKOFF_BASE_MS,
  });
  const auth = new AuthService(database, config, clock, keyRing, audit);
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const rateLimiter = new RateLimiter(
    [
      { name: "app", points: config.RATE_LIMIT_PER_APPLICATION, windowSeconds: window },
      { name: "ip", points: config.RATE_LIMIT_PER_IP, windowSeconds: window },
      { name: "auth-ip", points: config.RATE_LIMIT_AUTH_PER_IP, windowSeconds: window },
    ],
    redis,
    overrides.rateLimitPrefix ?? "ferry",
  );
  return {
    config,
    clock,
    logger,
    database,
    keyRing,
    redis,
    jobs,
    audit,
    auth,
    rateLimiter,
    async close() {
      redis?.disconnect();
      await database.destroy();
    },
  };
}
