import { Redis } from "ioredis";
import pino, { type Logger } from "pino";
import { type BlobStore, createBlobStore } from "../adapters/blob-store/blob-store.js";
import { type KeyRing, openKeyRing } from "../adapters/key-ring/key-ring.js";
import { createMailer, mailerDeliveryWarning } from "../adapters/mailer/mailer.js";
import { createSmsSender, smsDeliveryWarning } from "../adapters/sms/sms-sender.js";
import type { Config } from "../config/config.js";
import { createDatabase, type Database, databaseOptionsFromConfig } from "../db/database.js";
import { migrateToLatest } from "../db/migrator.js";
import { AuditService } from "../features/audit/audit.service.js";
import { AuditWriter } from "../features/audit/audit.writer.js";
import { AuditChainService } from "../features/audit/audit-chain.service.js";
import { AuditRetentionService } from "../features/audit/audit-retention.service.js";
import { AuthService } from "../features/auth/auth.service.js";
import { BrandingService } from "../features/branding/branding.service.js";
import { type CallbackService, createCallbackService } from "../features/callbacks/callbacks.service.js";
import { ContactsService } from "../features/contacts/contacts.service.js";
import { LifecycleService } from "../features/lifecycle/lifecycle.service.js";
import { blobStoreOptionsFromConfig } from "../features/media/media.context.js";
import { MediaService } from "../features/media/media.service.js";
import { DigestCache } from "../features/media/media-digest-cache.js";
import { EmailTemplatesService } from "../features/notifications/email-templates.service.js";
import { NotificationsService } from "../features/notifications/notifications.service.js";
import { SmtpSettingsService } from "../features/notifications/smtp-settings.service.js";
import { createTemplateEngine } from "../features/notifications/templates/template-engine.js";
import { RecipientService } from "../features/recipient/recipient.service.js";
import { recipientMediaPort } from "../features/recipient/recipient-media.adapter.js";
import { RecipientTokens } from "../features/recipient/recipient-tokens.js";
import { TwoFactorService } from "../features/recipient/two-factor.service.js";
import { RequestersService } from "../features/requesters/requesters.service.js";
import { RequestsService } from "../features/requests/requests.service.js";
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
  /** Audit log search (GET /v1/logentry/search/). */
  readonly auditSearch: AuditService;
  /** Audit hash-chain verification and export (ferry audit verify|export). */
  readonly auditChain: AuditChainService;
  /** Audit retention (AUDIT_RETENTION_DAYS) and its recurring job. */
  readonly auditRetention: AuditRetentionService;
  readonly auth: AuthService;
  /** Contacts and contact methods (issue 3). */
  readonly contacts: ContactsService;
  /** Requesters (issue 3). */
  readonly requesters: RequestersService;
  /** Requests: CRUD, state rules, getRequestView for messages and callbacks (issue 3). */
  readonly requests: RequestsService;
  /** Callbacks: outbox events → signed deliveries, secrets, attempts (issue 6). */
  readonly callbacks: CallbackService;
  /** Request lifecycle: push expiry, pull completion (issue 6). */
  readonly lifecycle: LifecycleService;
  /** Notifications: send_notification, email/SMS delivery, sandbox outbox, direct messages (issue 5). */
  readonly notifications: NotificationsService;
  /** Email templates: CRUD by slug, previews, requireTemplate for requests (issue 5). */
  readonly emailTemplates: EmailTemplatesService;
  /** Per-account custom SMTP settings (issue 5). */
  readonly smtpSettings: SmtpSettingsService;
  readonly rateLimiter: RateLimiter;
  /** White-label stylesheet, logo and recipient host of an account (issue 7). */
  readonly branding: BrandingService;
  /** Keyed MACs of recipient pages: code hashes, session cookies, CSRF tokens (issue 7). */
  readonly recipientTokens: RecipientTokens;
  /** Recipient two-factor codes (issue 7). */
  readonly twoFactor: TwoFactorService;
  /** Recipient pages: link resolution, page choice, files, submit (issue 7). */
  readonly recipient: RecipientService;
  /** Encrypted blob storage (BLOB_STORE: local disk or S3) (issue 4). */
  readonly blobStore: BlobStore;
  /** Media: uploads, downloads, download-once, cleanup, key re-wrapping (issue 4). */
  readonly media: MediaService;
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
  /** Blob store to use instead of the configured one. */
  blobStore?: BlobStore;
  /**
   * Log start-up warnings (a live deployment that captures emails or SMS instead of sending them).
   * Default: true unless `logger` is given (CLI commands and tests bring their own quiet logger, and
   * CLI stdout must stay parseable).
   */
  startupWarnings?: boolean;
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
    ? new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true })
    : undefined;
  redis?.on("error", (err) => logger.warn({ err: err.message }, "redis error"));
  // Connect before serving: until then every count would fall back to this node's memory.
  await redis
    ?.connect()
    .catch((err: Error) =>
      logger.warn({ err: err.message }, "redis not reachable; counting in memory until it is"),
    );
  const audit = new AuditWriter(database, clock);
  const jobs = new JobQueue(database, clock, {
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    backoffBaseMs: config.JOB_BACKOFF_BASE_MS,
  });
  const auth = new AuthService(database, config, clock, keyRing, audit);
  const contacts = new ContactsService(database, clock, audit);
  const requesters = new RequestersService(database, clock, audit);
  const branding = new BrandingService(database, config, clock, audit);
  // The templates service is built further down; the closure reads it at call time.
  const requests = new RequestsService(
    database,
    config,
    clock,
    audit,
    jobs,
    contacts,
    requesters,
    branding,
    (ex, accountId, slug) => emailTemplates.requireTemplate(ex, accountId, slug),
  );
  const callbacks = createCallbackService({ config, database, clock, jobs, audit, keyRing });
  const lifecycle = new LifecycleService(
    database,
    clock,
    jobs,
    audit,
    callbacks,
    (ex, accountId, requestId) => requests.getRequestView(ex, accountId, requestId),
    logger.child({ component: "lifecycle" }),
    config.LIFECYCLE_SWEEP_INTERVAL_SECONDS,
  );
  const smtpSettings = new SmtpSettingsService(database, clock, keyRing, audit, {
    allowPrivate: config.SMTP_CUSTOM_ALLOW_PRIVATE,
  });
  const templateEngine = createTemplateEngine();
  if (overrides.startupWarnings ?? overrides.logger === undefined) {
    for (const warning of [mailerDeliveryWarning(config), smsDeliveryWarning(config)]) {
      if (warning) logger.warn({ component: "notifications" }, warning);
    }
  }
  // The capture transports store through the service, which is built right after them.
  const captureSink = {
    capture: (m: Parameters<NotificationsService["capture"]>[0]) => notifications.capture(m),
  };
  const notifications: NotificationsService = new NotificationsService({
    database,
    config,
    clock,
    keyRing,
    audit,
    jobs,
    logger: logger.child({ component: "notifications" }),
    mailer: createMailer(config, captureSink),
    sms: createSmsSender(config, captureSink),
    engine: templateEngine,
    smtpSettings,
    presentRequest: (ex, accountId, requestId) => requests.getRequestView(ex, accountId, requestId),
    owners: requests,
    requesters,
    branding,
  });
  const emailTemplates = new EmailTemplatesService(
    database,
    config,
    clock,
    audit,
    templateEngine,
    notifications,
  );
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const rateLimiter = new RateLimiter(
    [
      { name: "app", points: config.RATE_LIMIT_PER_APPLICATION, windowSeconds: window },
      { name: "ip", points: config.RATE_LIMIT_PER_IP, windowSeconds: window },
      { name: "auth-ip", points: config.RATE_LIMIT_AUTH_PER_IP, windowSeconds: window },
      { name: "recipient-ip", points: config.RECIPIENT_RATE_LIMIT_PER_IP, windowSeconds: window },
      { name: "recipient-id", points: config.RECIPIENT_RATE_LIMIT_PER_IDENTIFIER, windowSeconds: window },
    ],
    redis,
    overrides.rateLimitPrefix ?? "ferry",
  );
  const blobStore = overrides.blobStore ?? (await createBlobStore(blobStoreOptionsFromConfig(config)));
  const media = new MediaService({
    config,
    clock,
    logger: logger.child({ component: "media" }),
    database,
    blobStore,
    keyRing,
    jobs,
    audit,
    digests: new DigestCache(),
  });
  const recipientTokens = new RecipientTokens(keyRing);
  const twoFactor = new TwoFactorService(database, config, clock, recipientTokens, () => notifications);
  const recipientMedia = recipientMediaPort(media, database);
  const recipient = new RecipientService({
    database,
    config,
    clock,
    audit,
    branding,
    owners: requests,
    requesters,
    media: () => recipientMedia,
    completePull: () => (accountId, requestId, options) =>
      lifecycle.completePullRequest(accountId, requestId, options),
  });
  return {
    config,
    clock,
    logger,
    database,
    keyRing,
    redis,
    jobs,
    audit,
    auditSearch: new AuditService(database),
    auditChain: new AuditChainService(database),
    auditRetention: new AuditRetentionService(database, clock, jobs, config.AUDIT_RETENTION_DAYS),
    auth,
    contacts,
    requesters,
    requests,
    callbacks,
    lifecycle,
    notifications,
    emailTemplates,
    smtpSettings,
    rateLimiter,
    branding,
    recipientTokens,
    twoFactor,
    recipient,
    blobStore,
    media,
    async close() {
      await blobStore.close();
      await notifications.close();
      redis?.disconnect();
      await database.destroy();
    },
  };
}
