import { existsSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";

/**
 * Ferry's one configuration schema. Every setting is read from the environment here and nowhere
 * else; `loadConfig` reports every problem at once (ConfigError) so an operator fixes them in one go.
 */

/** Where a setting appears in the generated docs (README and .env.example). */
export type SettingGroup =
  | "server"
  | "database"
  | "security"
  | "limits"
  | "storage"
  | "email"
  | "sms"
  | "callbacks"
  | "worker"
  | "audit"
  | "recipient"
  | "esign";

interface SettingSpec<T> {
  group: SettingGroup;
  doc: string;
  /** Default as written in docs; undefined means "unset". */
  example?: string;
  parse(raw: string | undefined, name: string): T;
}

class SettingProblem extends Error {}

const str =
  (def?: string) =>
  (raw: string | undefined): string | undefined =>
    raw === undefined || raw === "" ? def : raw;

const reqStr =
  (def: string) =>
  (raw: string | undefined): string =>
    raw === undefined || raw === "" ? def : raw;

const int =
  (def: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (raw: string | undefined): number => {
    if (raw === undefined || raw === "") return def;
    if (!/^-?\d+$/.test(raw.trim())) throw new SettingProblem(`must be an integer, got "${raw}"`);
    const n = Number(raw.trim());
    if (n < min || n > max) throw new SettingProblem(`must be between ${min} and ${max}, got ${n}`);
    return n;
  };

const bool =
  (def: boolean) =>
  (raw: string | undefined): boolean => {
    if (raw === undefined || raw === "") return def;
    const v = raw.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
    throw new SettingProblem(`must be true or false, got "${raw}"`);
  };

/** Names proxy-addr (Fastify's trustProxy) accepts for address ranges. */
const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** TRUST_PROXY in Fastify's trustProxy forms: true/false, a hop count, or addresses/CIDRs. */
function trustProxy(raw: string | undefined): boolean | number | string[] {
  if (raw === undefined || raw.trim() === "") return false;
  const v = raw.trim().toLowerCase();
  if (["true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > 32) throw new SettingProblem(`hop count must be at most 32, got ${hops}`);
    return hops;
  }
  const list = raw
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const bad = list.filter((entry) => !PROXY_RANGE_NAMES.has(entry) && !isAddressOrCidr(entry));
  if (bad.length)
    throw new SettingProblem(
      `must be true, false, a hop count or a comma-separated list of proxy addresses or CIDRs, got "${bad.join(", ")}"`,
    );
  return list;
}

function isAddressOrCidr(entry: string): boolean {
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

const oneOf =
  <const T extends string>(values: readonly T[], def: T) =>
  (raw: string | undefined): T => {
    if (raw === undefined || raw === "") return def;
    if (!(values as readonly string[]).includes(raw)) {
      throw new SettingProblem(`must be one of ${values.join(", ")}, got "${raw}"`);
    }
    return raw as T;
  };

const url =
  (protocols: string[], required = false) =>
  (raw: string | undefined): string | undefined => {
    if (raw === undefined || raw === "") {
      if (required) throw new SettingProblem("is required");
      return undefined;
    }
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new SettingProblem(`must be a URL, got "${redactUrl(raw)}"`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new SettingProblem(`must use ${protocols.join(" or ")}, got "${parsed.protocol}"`);
    }
    return raw;
  };

const intList =
  (def: number[]) =>
  (raw: string | undefined): number[] => {
    if (raw === undefined || raw === "") return def;
    const parts = raw.split(",").map((p) => p.trim());
    if (parts.some((p) => !/^\d+$/.test(p))) throw new SettingProblem(`must be comma-separated integers`);
    return parts.map(Number);
  };

/** Paths of existing files (comma-separated); unset or empty is none. */
const filePaths =
  () =>
  (raw: string | undefined): string[] => {
    if (raw === undefined || raw.trim() === "") return [];
    const paths = raw
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean);
    const missing = paths.filter((p) => !existsSync(p));
    if (missing.length) throw new SettingProblem(`names files that do not exist: ${missing.join(", ")}`);
    return paths.map((p) => resolve(p));
  };

function redactUrl(raw: string): string {
  return raw.replace(/\/\/[^@/]*@/, "//***@");
}

/** The table of settings: name → how to parse it and what it means. */
export const settings = {
  // server
  PORT: { group: "server", doc: "HTTP port.", example: "8080", parse: int(8080, 0, 65535) },
  HOST: { group: "server", doc: "Interface to listen on.", example: "0.0.0.0", parse: reqStr("0.0.0.0") },
  PUBLIC_BASE_URL: {
    group: "server",
    doc: "Absolute base URL clients and recipients use (links, pagination, recipient pages). Default http://localhost:PORT.",
    example: "http://localhost:8080",
    parse: url(["http:", "https:"]),
  },
  DASHBOARD_BASE_URL: {
    group: "server",
    doc: "Optional own origin of the owner's dashboard, e.g. https://dashboard.example.com (another host than PUBLIC_BASE_URL's, no path). When set, /dashboard/ answers only on this host (a GET elsewhere is redirected here) and recipient and session pages never on it, so the stylesheets accounts put on recipient pages never share an origin with the dashboard. Unset: the dashboard is served on PUBLIC_BASE_URL. See docs/dashboard.md.",
    parse: url(["http:", "https:"]),
  },
  FERRY_ENVIRONMENT: {
    group: "server",
    doc: "sandbox (default: messages captured, SANDBOX markers, dev account on first start) or live.",
    example: "sandbox",
    parse: oneOf(["sandbox", "live"] as const, "sandbox"),
  },
  FERRY_DATA_DIR: {
    group: "server",
    doc: "Directory for the SQLite database, local blobs and the key file. Created 0700, its files 0600 (the database holds session tokens); an existing one's looser modes are tightened at start, with a log line (the folder itself only when it holds nothing but Ferry's data).",
    example: "./data",
    parse: reqStr("./data"),
  },
  LOG_LEVEL: {
    group: "server",
    doc: "pino log level (fatal, error, warn, info, debug, trace, silent).",
    example: "info",
    parse: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info"),
  },
  CORS_ORIGINS: {
    group: "server",
    doc: "Comma-separated origins allowed to call the API from browsers, or * for any.",
    example: "*",
    parse: reqStr("*"),
  },
  TRUST_PROXY: {
    group: "server",
    doc: "Which X-Forwarded-* hops to trust: false (none: the client is the socket's peer); a hop count (1 behind one load balancer); or a comma-separated list of proxy addresses or CIDRs (10.0.0.0/8, loopback). The client address is the first untrusted hop from the right. true trusts every hop, so the client is the LEFTMOST X-Forwarded-For address, which any client can forge (a forged header evades the per-IP rate limits): use it only behind a proxy that overwrites the header; `ferry serve` logs a warning at start when it is set.",
    example: "false",
    parse: trustProxy,
  },
  HTTP_IDLE_TIMEOUT_MS: {
    group: "server",
    doc: "A connection with no bytes moving for this long is closed (slow clients cannot hold sockets).",
    example: "60000",
    parse: int(60_000, 1000),
  },
  // database
  DATABASE_URL: {
    group: "database",
    doc: "postgres://user:pass@host:5432/db to use PostgreSQL; unset for SQLite at FERRY_DATA_DIR/ferry.db.",
    parse: url(["postgres:", "postgresql:"]),
  },
  DATABASE_POOL_SIZE: {
    group: "database",
    doc: "PostgreSQL pool size.",
    example: "10",
    parse: int(10, 1, 200),
  },
  REDIS_URL: {
    group: "database",
    doc: "redis://host:6379 to share rate-limit counters and, on PostgreSQL, application revocations between nodes (ADR 0036); unset, rate limits count in memory and on PostgreSQL every call reads its application.",
    parse: url(["redis:", "rediss:"]),
  },
  REVOCATION_CHECK_SECONDS: {
    group: "database",
    doc: "With Redis on PostgreSQL: how often each node reads the database's revocation epoch (ADR 0067). A revoked application is refused by every node within this, even when Redis restarted and lost the revocation; normally at once through Redis.",
    example: "2",
    parse: int(2, 1, 300),
  },
  // security
  FERRY_MASTER_KEY: {
    group: "security",
    doc: "Master key ring: 'kid:base64key[,kid:base64key...]' (32-byte keys, first is active). Unset: a key file is created in FERRY_DATA_DIR with mode 0600.",
    parse: str(),
  },
  TOKEN_TTL_SECONDS: { group: "security", doc: "JWT lifetime.", example: "28800", parse: int(28_800, 60) },
  TOKEN_REFRESH_WINDOW_SECONDS: {
    group: "security",
    doc: "A token may be refreshed while its orig_iat is this recent.",
    example: "604800",
    parse: int(604_800, 60),
  },
  // limits
  RATE_LIMIT_WINDOW_SECONDS: {
    group: "limits",
    doc: "Rate-limit window.",
    example: "60",
    parse: int(60, 1, 86_400),
  },
  RATE_LIMIT_PER_APPLICATION: {
    group: "limits",
    doc: "Authenticated API calls per application per window.",
    example: "1200",
    parse: int(1200, 1),
  },
  SANDBOX_MAX_GENERATED_BYTES: {
    group: "limits",
    doc: "Total bytes of files one sandbox complete helper call may generate or send (request and container feature helpers); more is 400.",
    example: "20971520",
    parse: int(20 * 1024 * 1024, 0),
  },
  RATE_LIMIT_PER_IP: {
    group: "limits",
    doc: "API calls per client IP per window (all routes, authenticated or not).",
    example: "1200",
    parse: int(1200, 1),
  },
  RATE_LIMIT_AUTH_PER_IP: {
    group: "limits",
    doc: "Token operations (get_token, refresh, verify) per client IP per window.",
    example: "60",
    parse: int(60, 1),
  },
  MAX_JSON_BODY_BYTES: {
    group: "limits",
    doc: "Largest JSON or form body accepted on API routes (media routes have their own limits).",
    example: "1048576",
    parse: int(1_048_576, 1024),
  },
  // storage: encrypted media
  BLOB_STORE: {
    group: "storage",
    doc: "Where encrypted media blobs live: local (files under FERRY_BLOB_DIR), s3 (S3-compatible object storage) or memory (tests only: lost on exit).",
    example: "local",
    parse: oneOf(["local", "s3", "memory"] as const, "local"),
  },
  FERRY_BLOB_DIR: {
    group: "storage",
    doc: "Directory of the local blob store. Default FERRY_DATA_DIR/blobs.",
    parse: str(),
  },
  BLOB_DIRECT_IO: {
    group: "storage",
    doc: "Write and read local blobs with direct I/O (O_DIRECT), around the page cache, where the file system allows it; false uses the page cache (ADR 0016).",
    example: "true",
    parse: bool(true),
  },
  S3_ENDPOINT: {
    group: "storage",
    doc: "Endpoint of an S3-compatible service (MinIO, R2, Ceph...); unset for AWS S3.",
    parse: url(["http:", "https:"]),
  },
  S3_BUCKET: {
    group: "storage",
    doc: "Bucket holding the blobs (required with BLOB_STORE=s3).",
    parse: str(),
  },
  S3_REGION: { group: "storage", doc: "S3 region.", example: "us-east-1", parse: reqStr("us-east-1") },
  S3_ACCESS_KEY_ID: {
    group: "storage",
    doc: "S3 access key id; unset uses the SDK's default credential chain (instance role, env, profile).",
    parse: str(),
  },
  S3_SECRET_ACCESS_KEY: { group: "storage", doc: "S3 secret access key.", parse: str() },
  S3_FORCE_PATH_STYLE: {
    group: "storage",
    doc: "Address the bucket as a path (endpoint/bucket/key), as most S3-compatible services need.",
    example: "false",
    parse: bool(false),
  },
  S3_TIMEOUT_MS: {
    group: "storage",
    doc: "Longest an S3 call may go without progress (connecting, or waiting for bytes) before it is abandoned; the SDK tries a failed call twice, so a call takes at most about twice this. Uploads and downloads then answer 503 with Retry-After and keep nothing. Keep twice this below your clients' and load balancer's timeouts.",
    example: "15000",
    parse: int(15_000, 100, 600_000),
  },
  MAX_FILE_BYTES: {
    group: "storage",
    doc: "Largest file (whole or the sum of its chunks), in bytes.",
    example: "10737418240",
    parse: int(10 * 1024 ** 3, 1),
  },
  MAX_CHUNK_BYTES: {
    group: "storage",
    doc: "Largest chunk of a chunked upload (and largest form-urlencoded file), in bytes.",
    example: "4194304",
    parse: int(4 * 1024 ** 2, 1024, 64 * 1024 ** 2),
  },
  ACCOUNT_STORAGE_QUOTA_BYTES: {
    group: "storage",
    doc: "Bytes of media (not removed) an account may hold; 0 = unlimited.",
    example: "0",
    parse: int(0, 0),
  },
  UPLOAD_STALE_HOURS: {
    group: "storage",
    doc: "Incomplete uploads untouched for this long are deleted by the cleanup job (also the grace period of orphan blobs).",
    example: "24",
    parse: int(24, 1, 24 * 365),
  },
  DOWNLOAD_GRACE_SECONDS: {
    group: "storage",
    doc: "After a download of a file with a download limit ends (complete or cut), the downloader may resume it with Range for this long, as the same download; at the limit the file is destroyed after it.",
    example: "600",
    parse: int(600, 10, 7 * 24 * 3600),
  },
  S3_ABORT_INCOMPLETE_UPLOADS_HOURS: {
    group: "storage",
    doc: "With BLOB_STORE=s3, the storage cleanup (and `ferry storage gc`) aborts S3 multipart uploads started this many hours ago or earlier and never completed (left by a killed process), freeing their parts; 0 aborts every one, including uploads in progress.",
    example: "24",
    parse: int(24, 0, 24 * 365),
  },
  UPLOAD_DIGEST_STATE: {
    group: "storage",
    doc: "Whether a chunked upload's running MD5/SHA-256 state is saved with each in-order chunk so that any node finishes the upload without reading it back (ADR 0075): on, off, or auto (on with DATABASE_URL, the scale-out setup). Saving needs hash-wasm's hashes, which cost about 5x the CPU of the native SHA-256; off keeps native hashing and a node that did not see the earlier chunks reads them back.",
    example: "auto",
    parse: oneOf(["auto", "on", "off"] as const, "auto"),
  },
  STORAGE_GC_INTERVAL_MINUTES: {
    group: "storage",
    doc: "How often the worker runs the storage cleanup (stale uploads, orphan blobs).",
    example: "60",
    parse: int(60, 1, 24 * 60),
  },
  // email: notifications
  SMTP_HOST: {
    group: "email",
    doc: "SMTP server that delivers email. Unset: emails are captured (stored, listed by GET /v1/sandbox/messages/ in sandbox) instead of sent.",
    parse: str(),
  },
  SMTP_PORT: { group: "email", doc: "SMTP port.", example: "587", parse: int(587, 1, 65535) },
  SMTP_TLS: {
    group: "email",
    doc: "SMTP transport security: starttls (upgrade required), tls (implicit TLS, port 465) or none.",
    example: "starttls",
    parse: oneOf(["none", "starttls", "tls"] as const, "starttls"),
  },
  SMTP_MAX_CONNECTIONS: {
    group: "email",
    doc: "SMTP connections a process keeps open to SMTP_HOST at once (unset: JOB_CONCURRENCY, so no running job waits for a connection).",
    parse: (raw: string | undefined) => (raw === undefined || raw === "" ? undefined : int(4, 1, 64)(raw)),
  },
  SMTP_USER: { group: "email", doc: "SMTP user name (unset: no authentication).", parse: str() },
  SMTP_PASSWORD: { group: "email", doc: "SMTP password.", parse: str() },
  MAIL_FROM: {
    group: "email",
    doc: "Sender address of notification emails, e.g. 'Ferry <no-reply@example.com>'. Default no-reply@<PUBLIC_BASE_URL host>.",
    parse: str(),
  },
  DKIM_DOMAIN: {
    group: "email",
    doc: "DKIM signing domain (signing is on when all three DKIM_* are set).",
    parse: str(),
  },
  DKIM_SELECTOR: { group: "email", doc: "DKIM key selector.", parse: str() },
  DKIM_PRIVATE_KEY: {
    group: "email",
    doc: "DKIM private key: PEM text or a path to a PEM file.",
    parse: str(),
  },
  TEMPLATE_RENDER_WORKERS: {
    group: "email",
    doc: "Worker threads that render email templates (previews and emails); the event loop never runs one.",
    example: "2",
    parse: int(2, 1, 64),
  },
  TEMPLATE_RENDER_TIMEOUT_MS: {
    group: "email",
    doc: "Wall-clock limit of one template render; past it the render fails and its worker is replaced.",
    example: "2000",
    parse: int(2000, 100, 60_000),
  },
  TEMPLATE_RENDERS_PER_ACCOUNT: {
    group: "email",
    doc: "Template renders of one account that may run at once (the rest wait), so no account holds every worker.",
    example: "1",
    parse: int(1, 1, 64),
  },
  SMTP_CUSTOM_ALLOW_PRIVATE: {
    group: "email",
    doc: "Let accounts' custom SMTP settings point at private or loopback addresses (development only).",
    example: "false",
    parse: bool(false),
  },
  // sms
  SMS_PROVIDER: {
    group: "sms",
    doc: "capture (default: SMS are stored, not sent) or twilio (Twilio-compatible Messages REST API).",
    example: "capture",
    parse: oneOf(["capture", "twilio"] as const, "capture"),
  },
  TWILIO_BASE_URL: {
    group: "sms",
    doc: "Base URL of the Twilio-compatible API.",
    example: "https://api.twilio.com",
    parse: (raw: string | undefined) => url(["http:", "https:"])(raw) ?? "https://api.twilio.com",
  },
  TWILIO_ACCOUNT_SID: { group: "sms", doc: "Twilio account SID.", parse: str() },
  TWILIO_AUTH_TOKEN: { group: "sms", doc: "Twilio auth token.", parse: str() },
  SMS_FROM: {
    group: "sms",
    doc: "Sender number (E.164) of SMS; or set SMS_MESSAGING_SERVICE_SID.",
    parse: str(),
  },
  SMS_MESSAGING_SERVICE_SID: {
    group: "sms",
    doc: "Twilio messaging service SID used instead of SMS_FROM.",
    parse: str(),
  },
  // callbacks
  FERRY_ALLOW_PRIVATE_CALLBACKS: {
    group: "callbacks",
    doc: "Let callbacks reach loopback, private, link-local and other non-public addresses (development and tests only).",
    example: "false",
    parse: bool(false),
  },
  CALLBACK_TIMEOUT_MS: {
    group: "callbacks",
    doc: "Time a callback receiver has to answer (DNS, connect and response), in milliseconds.",
    example: "10000",
    parse: int(10_000, 100, 120_000),
  },
  CALLBACK_RETRY_SCHEDULE_SECONDS: {
    group: "callbacks",
    doc: "Delays before each retry of a failed callback, comma-separated seconds (each gets up to +10% jitter); after the last one the delivery is marked failed.",
    example: "5,30,120,600,1800,3600,7200,14400,28800,43200",
    parse: intList([5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 43_200]),
  },
  CALLBACK_SECRET_OVERLAP_HOURS: {
    group: "callbacks",
    doc: "After a callback secret rotation, the previous secret keeps signing (a second signature) for this many hours.",
    example: "24",
    parse: int(24, 0, 24 * 90),
  },
  // callbacks: request validation
  ALLOW_HTTP_CALLBACKS_IN_LIVE: {
    group: "callbacks",
    doc: "Accept plain http:// callback_url values on a live deployment (by default live requires https://; sandbox accepts both).",
    example: "false",
    parse: bool(false),
  },
  CONTAINER_FEATURE_EXPIRY_HOURS: {
    group: "worker",
    doc: "Hours after creation a container feature expires when its create call gives no expiration.",
    example: "72",
    parse: int(72, 1, 87_600),
  },
  ENRICHMENT_PROVIDERS_ALLOW_PRIVATE: {
    group: "worker",
    doc: "Let enrichment providers' API calls reach loopback and private addresses, over http too (development and tests against local fakes only).",
    example: "false",
    parse: bool(false),
  },
  ENRICHMENT_RECONCILE_SECONDS: {
    group: "worker",
    doc: "How often the worker asks providers for the status of enrichment steps still open at a vendor (recovers missed webhooks).",
    example: "300",
    parse: int(300, 5, 86_400),
  },
  ENRICHMENT_PURGE_SECONDS: {
    group: "worker",
    doc: "How often the worker destroys enrichment results past their kind's retention.",
    example: "3600",
    parse: int(3600, 5, 86_400),
  },
  LIFECYCLE_SWEEP_INTERVAL_SECONDS: {
    group: "worker",
    doc: "How often the worker looks for push requests past their expires_at (expiry happens within this delay).",
    example: "60",
    parse: int(60, 1, 86_400),
  },
  // worker
  JOB_LEASE_SECONDS: {
    group: "worker",
    doc: "How long a claimed job stays leased to a worker before another may take it.",
    example: "60",
    parse: int(60, 1),
  },
  JOB_POLL_INTERVAL_MS: {
    group: "worker",
    doc: "Worker polling interval when no wake-up arrives.",
    example: "1000",
    parse: int(1000, 10),
  },
  JOB_CONCURRENCY: {
    group: "worker",
    doc: "Jobs run at once per worker.",
    example: "4",
    parse: int(4, 1, 64),
  },
  JOB_MAX_ATTEMPTS: {
    group: "worker",
    doc: "Attempts before a job is marked dead.",
    example: "8",
    parse: int(8, 1, 100),
  },
  JOB_BACKOFF_BASE_MS: {
    group: "worker",
    doc: "Retry delay base: attempt n waits base * 2^(n-1), with jitter.",
    example: "5000",
    parse: int(5000, 1),
  },
  JOB_RETENTION_HOURS: {
    group: "worker",
    doc: "Finished jobs (done or dead) are deleted this long after they finish.",
    example: "168",
    parse: int(168, 1),
  },
  JOB_SHUTDOWN_GRACE_MS: {
    group: "worker",
    doc: "On SIGTERM, how long running jobs may finish before they are released to other workers.",
    example: "10000",
    parse: int(10_000, 0),
  },
  // audit log
  AUDIT_RETENTION_DAYS: {
    group: "audit",
    doc: "Delete audit entries older than this many days (hourly worker job; the hash chain stays verifiable from a checkpoint). 0 keeps every entry.",
    example: "0",
    parse: int(0, 0, 36_500),
  },
  AUDIT_EXACT_COUNT_LIMIT: {
    group: "audit",
    doc: "Log search with two or more filters: total_pages is exact while the narrowest filter matches at most this many entries, estimated above (marked total_pages_estimated).",
    example: "10000",
    parse: int(10_000, 1, 1_000_000),
  },
  // recipient pages
  RECIPIENT_RATE_LIMIT_PER_IP: {
    group: "recipient",
    doc: "Recipient page calls (pages, downloads, upload chunks) per client IP per RATE_LIMIT_WINDOW_SECONDS.",
    example: "1200",
    parse: int(1200, 1),
  },
  RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: {
    group: "recipient",
    doc: "Recipient page calls per request identifier per RATE_LIMIT_WINDOW_SECONDS (a 4 MB chunk is one call).",
    example: "3000",
    parse: int(3000, 1),
  },
  SESSION_CHAT_REPLIES_PER_LINK: {
    group: "recipient",
    doc: "Chat replies one container session link may send per RATE_LIMIT_WINDOW_SECONDS (each is stored and sent as a message_reply callback); more are 429 with Retry-After.",
    example: "20",
    parse: int(20, 1),
  },
  TFA_CODE_TTL_SECONDS: {
    group: "recipient",
    doc: "How long a recipient two-factor code stays valid.",
    example: "600",
    parse: int(600, 30, 86_400),
  },
  TFA_MAX_ATTEMPTS: {
    group: "recipient",
    doc: "Wrong entries that lock a two-factor code (a new code must be sent).",
    example: "5",
    parse: int(5, 1, 100),
  },
  TFA_MAX_FAILURES: {
    group: "recipient",
    doc: "Wrong two-factor codes in a row, over every code, that lock a link until the owner sends it again or changes its two-factor setting.",
    example: "20",
    parse: int(20, 1, 1000),
  },
  TFA_MAX_SENDS: {
    group: "recipient",
    doc: "Two-factor codes a recipient may have sent per TFA_SEND_WINDOW_SECONDS.",
    example: "3",
    parse: int(3, 1, 100),
  },
  TFA_SEND_WINDOW_SECONDS: {
    group: "recipient",
    doc: "Window of the two-factor send limit.",
    example: "900",
    parse: int(900, 60, 86_400),
  },
  TFA_SESSION_SECONDS: {
    group: "recipient",
    doc: "Lifetime of the recipient session cookie set after a correct two-factor code.",
    example: "28800",
    parse: int(28_800, 60, 604_800),
  },
  // document signing
  ESIGN_SIGNING_P12: {
    group: "esign",
    doc: "Path of the PKCS#12 file (certificate and private key, RSA or EC) that seals signed PDFs; a start stops when it cannot be opened with ESIGN_SIGNING_P12_PASSPHRASE. Unset: a self-signed one is created in FERRY_DATA_DIR (esign-seal.p12 and esign-seal.passphrase, mode 0600) the first time a document is sealed or verified.",
    parse: (raw: string | undefined) => filePaths()(raw)[0],
  },
  ESIGN_SIGNING_P12_PASSPHRASE: {
    group: "esign",
    doc: "Passphrase of ESIGN_SIGNING_P12.",
    parse: str(),
  },
  ESIGN_PREVIOUS_CERTIFICATES: {
    group: "esign",
    doc: "Comma-separated paths of earlier sealing certificates (PEM or DER) whose seals /verify/document still accepts after a change of ESIGN_SIGNING_P12.",
    parse: filePaths(),
  },
  ESIGN_PDF_WORKERS: {
    group: "esign",
    doc: "Worker threads that inspect, seal and verify PDFs (each holds one document of up to 50 MB at a time; the event loop never parses one).",
    example: "1",
    parse: int(1, 1, 16),
  },
  ESIGN_RETENTION_DAYS: {
    group: "esign",
    doc: "Days a finished signing step keeps its result and its sealed PDF; then both are destroyed (audited). 0 keeps them as long as the step.",
    example: "0",
    parse: int(0, 0, 36_500),
  },
  VERIFY_DOCUMENT_RATE_LIMIT_PER_IP: {
    group: "esign",
    doc: "Checks of an uploaded PDF at /verify/document per client IP per RATE_LIMIT_WINDOW_SECONDS; more are 429 with Retry-After.",
    example: "20",
    parse: int(20, 1),
  },
} satisfies Record<string, SettingSpec<unknown>>;

type Settings = typeof settings;
type Parsed = { [K in keyof Settings]: ReturnType<Settings[K]["parse"]> };

/** The parsed, frozen configuration passed down from the composition root. */
export interface Config extends Readonly<Parsed> {
  /** Absolute data directory. */
  readonly dataDir: string;
  /** PUBLIC_BASE_URL without a trailing slash (defaults to http://localhost:PORT). */
  readonly publicBaseUrl: string;
  /** DASHBOARD_BASE_URL without a trailing slash; undefined when the dashboard shares PUBLIC_BASE_URL. */
  readonly dashboardBaseUrl: string | undefined;
  readonly isSandbox: boolean;
  readonly corsOrigins: "*" | string[];
}

/** Thrown by loadConfig with every problem found, one per line. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** Parses the environment into a Config; throws ConfigError listing all problems at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(settings) as [string, SettingSpec<unknown>][]) {
    try {
      out[name] = spec.parse(env[name], name);
    } catch (err) {
      if (err instanceof SettingProblem) problems.push(`${name} ${err.message}`);
      else throw err;
    }
  }
  const parsed = out as Parsed;
  const publicBaseUrl = (parsed.PUBLIC_BASE_URL ?? `http://localhost:${parsed.PORT}`).replace(/\/+$/, "");
  const dashboardBaseUrl = parsed.DASHBOARD_BASE_URL?.replace(/\/+$/, "");
  if (dashboardBaseUrl && problems.length === 0) {
    const dashboard = new URL(dashboardBaseUrl);
    if (dashboard.host === new URL(publicBaseUrl).host)
      problems.push("DASHBOARD_BASE_URL must name another host than PUBLIC_BASE_URL (or be unset)");
    else if (dashboard.pathname !== "/" || dashboard.search || dashboard.hash)
      problems.push("DASHBOARD_BASE_URL must be an origin only, without a path");
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const corsOrigins =
    parsed.CORS_ORIGINS.trim() === "*"
      ? ("*" as const)
      : parsed.CORS_ORIGINS.split(",")
          .map((o) => o.trim())
          .filter(Boolean);
  return Object.freeze({
    ...parsed,
    dataDir: resolve(parsed.FERRY_DATA_DIR),
    publicBaseUrl,
    dashboardBaseUrl,
    isSandbox: parsed.FERRY_ENVIRONMENT === "sandbox",
    corsOrigins,
  });
}

/** Renders the README's configuration reference (a Markdown table per group) from the settings table. */
export function renderConfigReference(): string {
  const lines: string[] = [];
  let group = "";
  for (const [name, spec] of Object.entries(settings) as [string, SettingSpec<unknown>][]) {
    if (spec.group !== group) {
      group = spec.group;
      lines.push("", `**${group}**`, "", "| Variable | Default | Meaning |", "|---|---|---|");
    }
    lines.push(
      `| \`${name}\` | ${spec.example === undefined ? "unset" : `\`${spec.example}\``} | ${spec.doc.replaceAll("|", "\\|")} |`,
    );
  }
  return `${lines.join("\n").trim()}\n`;
}

/** Renders `.env.example` content from the settings table (kept in sync by a test). */
export function renderEnvExample(): string {
  const lines = [
    "# Ferry configuration. Every variable is optional; defaults are shown.",
    "# Ferry reads the process environment only: it does not read a .env file. Export these, or load",
    "# a copy of this file with `node --env-file=.env bin/ferry.mjs serve`, Docker's --env-file or",
    "# systemd's EnvironmentFile=.",
    "",
  ];
  let group = "";
  for (const [name, spec] of Object.entries(settings) as [string, SettingSpec<unknown>][]) {
    if (spec.group !== group) {
      group = spec.group;
      lines.push(`# --- ${group} ---`);
    }
    lines.push(`# ${spec.doc}`);
    lines.push(spec.example === undefined ? `# ${name}=` : `${name}=${spec.example}`);
  }
  return `${lines.join("\n")}\n`;
}
