import { createRequire } from "node:module";
import type { Redis } from "ioredis";
import pino, { type Logger } from "pino";
import { type BlobStore, createBlobStore } from "../adapters/blob-store/blob-store.js";
import { type KeyRing, openKeyRing } from "../adapters/key-ring/key-ring.js";
import { createMailer, mailerDeliveryWarning } from "../adapters/mailer/mailer.js";
import { createSmsSender, smsDeliveryWarning } from "../adapters/sms/sms-sender.js";
import type { Config } from "../config/config.js";
import type { Database } from "../db/database.js";
import { listCountCommands } from "../db/list-counts.js";
import { type AuditLog, auditCommands, createAuditFeature } from "../features/audit/index.js";
import { type AuthService, adminCommands, createAuthFeature } from "../features/auth/index.js";
import { type BrandingService, createBrandingFeature } from "../features/branding/index.js";
import { type CallbackService, createCallbacksFeature } from "../features/callbacks/index.js";
import { type ContactsService, createContactsFeature } from "../features/contacts/index.js";
import {
  type Containers,
  createContainerRecords,
  createContainersFeature,
} from "../features/containers/index.js";
import {
  createDashboardFeature,
  type Dashboard,
  dashboardCommands,
  dashboardOwnerPages,
} from "../features/dashboard/index.js";
import {
  createEnrichmentsFeature,
  type EnrichmentKind,
  type Enrichments,
} from "../features/enrichments/index.js";
import { createLifecycleFeature, type LifecycleService } from "../features/lifecycle/index.js";
import {
  blobStoreOptionsFromConfig,
  createMediaFeature,
  type MediaService,
  mediaCommands,
} from "../features/media/index.js";
import { createNotificationsFeature, type Notifications } from "../features/notifications/index.js";
import { createRecipientFeature, type RecipientPages } from "../features/recipient/index.js";
import { createRequestersFeature, type RequestersService } from "../features/requesters/index.js";
import {
  createRequestRecords,
  createRequestsFeature,
  type RequestRecords,
  type RequestsService,
} from "../features/requests/index.js";
import { createSessionFeature } from "../features/session/index.js";
import {
  createRenderPool,
  createTemplatesFeature,
  type EmailTemplatesService,
} from "../features/templates/index.js";
import { createVerifyDocumentFeature } from "../features/verify-document/index.js";
import { RateLimiter } from "../http/rate-limit.js";
import type { JobHandler } from "../jobs/job.js";
import { JobQueue } from "../jobs/queue.js";
import { createPdfEngine, type PdfEngine } from "../pdf/index.js";
import { type Clock, systemClock } from "../shared/clock.js";
import { bindCommands, type Command, type Feature, type RouteModule } from "../shared/feature.js";
import { webStaticRoutes } from "../web/static.routes.js";
import { tightenDataModes, tightenedModesMessage } from "./data-folders.js";

/**
 * One Ferry process: the adapters chosen by configuration and every feature, built in dependency
 * order (each from the narrow dependencies it declares), with what they contribute gathered for the
 * HTTP server, the worker and the command line.
 */
export interface Ferry {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly database: Database;
  readonly keyRing: KeyRing;
  readonly redis: Redis | undefined;
  readonly jobs: JobQueue;
  readonly rateLimiter: RateLimiter;
  readonly blobStore: BlobStore;
  readonly audit: AuditLog;
  readonly auth: AuthService;
  readonly branding: BrandingService;
  readonly contacts: ContactsService;
  readonly requesters: RequestersService;
  readonly templates: EmailTemplatesService;
  readonly media: MediaService;
  readonly callbacks: CallbackService;
  readonly records: RequestRecords;
  readonly requests: RequestsService;
  readonly notifications: Notifications;
  readonly lifecycle: LifecycleService;
  readonly recipient: RecipientPages;
  readonly containers: Containers;
  readonly enrichments: Enrichments;
  readonly dashboard: Dashboard;
  /** The PDF engine: inspects, seals and verifies signed documents on worker threads. */
  readonly pdf: PdfEngine;
  /** Every feature's routes and pages, in registration order. */
  readonly routes: readonly RouteModule[];
  /** Every job kind's handler. */
  readonly jobHandlers: readonly JobHandler[];
  /** Every feature command. */
  readonly commands: readonly Command[];
  /** Queues every feature's recurring jobs (idempotent); called when a worker starts. */
  scheduleRecurringJobs(): Promise<void>;
  /** Closes connections and transports (mail, blob store, Redis, database). */
  close(): Promise<void>;
}

/** What tests (or special commands) may replace. */
export interface FerryOverrides {
  clock?: Clock;
  logger?: Logger;
  keyRing?: KeyRing;
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
  /** The enrichment kinds to serve instead of the registered ones (tests add a test kind). */
  enrichmentKinds?: readonly EnrichmentKind[];
}

/** Every feature command's name and usage, in `ferry help` order (no services needed to list them). */
export const commandCatalog: readonly { name: string; usage: string }[] = [
  ...dashboardCommands,
  ...adminCommands.filter((c) => !dashboardCommands.some((d) => d.name === c.name)),
  ...auditCommands,
  ...mediaCommands,
  ...listCountCommands,
];

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

/**
 * Builds every adapter and feature over `database` (already migrated: see `migrateToLatest`).
 * Nothing is listened to or run; the server and the worker are built from the result.
 */
export async function createFerry(
  config: Config,
  database: Database,
  overrides: FerryOverrides = {},
): Promise<Ferry> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config);
  const keyRing =
    overrides.keyRing ?? openKeyRing({ masterKeyEnv: config.FERRY_MASTER_KEY, dataDir: config.dataDir });
  const pdf = createPdfEngine({
    identity: {
      dataDir: config.dataDir,
      p12Path: config.ESIGN_SIGNING_P12,
      p12Passphrase: config.ESIGN_SIGNING_P12_PASSPHRASE,
      previousCertificates: config.ESIGN_PREVIOUS_CERTIFICATES,
    },
    workers: config.ESIGN_PDF_WORKERS,
    verifyUrl: `${config.publicBaseUrl}/verify/document`,
  });
  // An operator's P12 that cannot be opened stops the start, like a bad setting, before anything
  // is connected (the self-signed one is made on first use: a start that never seals makes no key).
  if (config.ESIGN_SIGNING_P12) await pdf.sealingCertificateFingerprint();
  const redis = await connectRedis(config, logger);
  const jobs = new JobQueue(database, clock, {
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    backoffBaseMs: config.JOB_BACKOFF_BASE_MS,
  });
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const rateLimiter = new RateLimiter(
    [
      { name: "app", points: config.RATE_LIMIT_PER_APPLICATION, windowSeconds: window },
      { name: "ip", points: config.RATE_LIMIT_PER_IP, windowSeconds: window },
      { name: "auth-ip", points: config.RATE_LIMIT_AUTH_PER_IP, windowSeconds: window },
      { name: "recipient-ip", points: config.RECIPIENT_RATE_LIMIT_PER_IP, windowSeconds: window },
      { name: "recipient-id", points: config.RECIPIENT_RATE_LIMIT_PER_IDENTIFIER, windowSeconds: window },
      { name: "session-reply", points: config.SESSION_CHAT_REPLIES_PER_LINK, windowSeconds: window },
      { name: "verify-document-ip", points: config.VERIFY_DOCUMENT_RATE_LIMIT_PER_IP, windowSeconds: window },
    ],
    redis,
    overrides.rateLimitPrefix ?? "ferry",
  );
  const blobOptions = blobStoreOptionsFromConfig(config);
  const blobStore = overrides.blobStore ?? (await createBlobStore(blobOptions));
  const startupWarnings = overrides.startupWarnings ?? overrides.logger === undefined;
  const modes = tightenedModesMessage(tightenDataModes(config, blobOptions));
  if (modes) {
    // Commands keep stdout for their output: there the line goes to stderr.
    if (startupWarnings) logger.warn({ component: "storage" }, modes);
    else console.error(modes);
  }
  if (startupWarnings) {
    for (const warning of [mailerDeliveryWarning(config), smsDeliveryWarning(config)]) {
      if (warning) logger.warn({ component: "notifications" }, warning);
    }
  }
  const base = { database, config, clock };

  // Features, each after the ones it uses.
  const audit = createAuditFeature({
    database,
    clock,
    jobs,
    keyRing,
    retentionDays: config.AUDIT_RETENTION_DAYS,
    exactCountLimit: config.AUDIT_EXACT_COUNT_LIMIT,
  });
  const writer = audit.service.writer;
  const auth = createAuthFeature({
    ...base,
    keyRing,
    audit: writer,
    rateLimiter,
    redis,
    onError: (err) => logger.warn({ err: err.message }, "redis revocation channel error"),
  });
  const accounts = auth.service.accounts;
  const records = createRequestRecords(database);
  const containerRecords = createContainerRecords(clock);
  const branding = createBrandingFeature({ ...base, audit: writer });
  const contacts = createContactsFeature({
    database,
    clock,
    audit: writer,
    usage: records,
    publicBaseUrl: config.publicBaseUrl,
  });
  const requesters = createRequestersFeature({
    database,
    clock,
    audit: writer,
    publicBaseUrl: config.publicBaseUrl,
  });
  const renderer = createRenderPool({
    workers: config.TEMPLATE_RENDER_WORKERS,
    timeLimitMs: config.TEMPLATE_RENDER_TIMEOUT_MS,
    perAccount: config.TEMPLATE_RENDERS_PER_ACCOUNT,
    maxWaitingPerAccount: 32,
    memoryMb: 256,
  });
  const templates = createTemplatesFeature({
    ...base,
    audit: writer,
    renderer,
    accounts,
    branding: branding.service,
    usage: records,
  });
  const media = createMediaFeature({
    ...base,
    logger: logger.child({ component: "media" }),
    blobStore,
    keyRing,
    jobs,
    audit: writer,
    targets: records,
    features: containerRecords,
  });
  const callbacks = createCallbacksFeature({
    ...base,
    jobs,
    audit: writer,
    keyRing,
    accounts,
    subjects: records,
  });
  const requests = createRequestsFeature({
    ...base,
    audit: writer,
    accounts,
    contacts: contacts.service,
    requesters: requesters.service,
    branding: branding.service,
    templates: templates.service,
    media: media.service,
  });
  const notifications = createNotificationsFeature({
    ...base,
    logger: logger.child({ component: "notifications" }),
    keyRing,
    audit: writer,
    jobs,
    transports: (sink) => ({ mailer: createMailer(config, sink), sms: createSmsSender(config, sink) }),
    renderer,
    accounts,
    branding: branding.service,
    requesters: requesters.service,
    templates: templates.service,
    callbacks: callbacks.service,
    records,
    requests: requests.service,
    media: media.service,
  });
  const dashboard = createDashboardFeature({
    ...base,
    keyRing,
    audit: writer,
    rateLimiter,
    auth: auth.service,
    smtpSettings: notifications.service.smtpSettings,
  });
  const lifecycle = createLifecycleFeature({
    database,
    clock,
    logger: logger.child({ component: "lifecycle" }),
    jobs,
    audit: writer,
    callbacks: callbacks.service,
    records,
    requests: requests.service,
    media: media.service,
    sweepIntervalSeconds: config.LIFECYCLE_SWEEP_INTERVAL_SECONDS,
  });
  const recipient = createRecipientFeature({
    ...base,
    keyRing,
    audit: writer,
    rateLimiter,
    accounts,
    branding: branding.service,
    requesters: requesters.service,
    records,
    requests: requests.service,
    media: media.service,
    lifecycle: lifecycle.service,
    direct: notifications.service.direct,
  });

  const containers = createContainersFeature({
    ...base,
    logger: logger.child({ component: "containers" }),
    jobs,
    audit: writer,
    records,
    requesters: requesters.service,
    media: media.service,
    notifications: notifications.service.composed,
    callbacks: callbacks.service,
    branding: branding.service,
    accounts,
  });

  const enrichments = createEnrichmentsFeature({
    ...base,
    keyRing,
    audit: writer,
    jobs,
    logger: logger.child({ component: "enrichments" }),
    containers: containers.service,
    files: media.service.files,
    pdf,
    ...(overrides.enrichmentKinds ? { kinds: overrides.enrichmentKinds } : {}),
  });

  const session = createSessionFeature({
    ...base,
    audit: writer,
    rateLimiter,
    accounts,
    branding: branding.service,
    requesters: requesters.service,
    media: media.service,
    sessions: containers.service.sessions,
    tokens: recipient.service.tokens,
    twoFactor: recipient.service.twoFactor,
    steps: enrichments.service.steps,
  });

  const verifyDocument = createVerifyDocumentFeature({ config, keyRing, rateLimiter, pdf });

  // The dashboard's owner pages use the features above through the dashboard's kit.
  const ownerPages = dashboardOwnerPages({
    kit: dashboard.service.kit,
    sandbox: config.isSandbox,
    outbox: notifications.service.outbox,
    audit: audit.service,
    requests: requests.service,
    containers: containers.service,
    enrichments: enrichments.service,
    callbacks: callbacks.service,
    notificationLog: notifications.service.log,
    media: media.service,
    templates: templates.service,
    preview: notifications.service.preview,
    branding: branding.service,
    publicBaseUrl: config.publicBaseUrl,
  });

  const features: Feature<unknown>[] = [
    auth,
    audit,
    contacts,
    requesters,
    requests,
    callbacks,
    notifications,
    templates,
    branding,
    recipient,
    media,
    lifecycle,
    containers,
    enrichments,
    session,
    dashboard,
    verifyDocument,
  ];
  return {
    config,
    clock,
    logger,
    database,
    keyRing,
    redis,
    jobs,
    rateLimiter,
    blobStore,
    audit: audit.service,
    auth: auth.service,
    branding: branding.service,
    contacts: contacts.service,
    requesters: requesters.service,
    templates: templates.service,
    media: media.service,
    callbacks: callbacks.service,
    records,
    requests: requests.service,
    notifications: notifications.service,
    lifecycle: lifecycle.service,
    recipient: recipient.service,
    containers: containers.service,
    enrichments: enrichments.service,
    dashboard: dashboard.service,
    pdf,
    routes: [...features.flatMap((f) => f.routes ?? []), ...ownerPages, webStaticRoutes],
    jobHandlers: features.flatMap((f) => f.jobs ?? []),
    // The dashboard's `admin create-account` (with a setup link) comes first: it wins over auth's.
    commands: [
      ...[dashboard, ...features].flatMap((f) => f.commands ?? []),
      ...bindCommands(listCountCommands, database),
    ],
    async scheduleRecurringJobs() {
      for (const feature of features) {
        await feature.scheduleRecurringJobs?.().catch((err: Error) => {
          logger.warn({ err: err.message }, "could not schedule a recurring job");
        });
      }
    },
    async close() {
      await blobStore.close();
      await notifications.service.close();
      await renderer.close();
      await pdf.close();
      auth.service.close();
      redis?.disconnect();
      await database.destroy();
    },
  };
}

/** Connects to Redis when REDIS_URL is set; until it answers, rate limits count in this node's memory. */
async function connectRedis(config: Config, logger: Logger): Promise<Redis | undefined> {
  if (!config.REDIS_URL) return undefined;
  // Loaded only when configured: a server without Redis never evaluates the client (about 1.7 MB).
  const { Redis } = createRequire(import.meta.url)("ioredis") as typeof import("ioredis");
  const redis = new Redis(config.REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  });
  redis.on("error", (err) => logger.warn({ err: err.message }, "redis error"));
  // Connect before serving: until then every count would fall back to this node's memory.
  await redis
    .connect()
    .catch((err: Error) =>
      logger.warn({ err: err.message }, "redis not reachable; counting in memory until it is"),
    );
  return redis;
}
