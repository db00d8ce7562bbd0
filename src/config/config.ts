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
  | "audit";

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
  FERRY_ENVIRONMENT: {
    group: "server",
    doc: "sandbox (default: messages captured, SANDBOX markers, dev account on first start) or live.",
    example: "sandbox",
    parse: oneOf(["sandbox", "live"] as const, "sandbox"),
  },
  FERRY_DATA_DIR: {
    group: "server",
    doc: "Directory for the SQLite database, local blobs and the key file.",
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
    doc: "Trust X-Forwarded-* headers (set when behind a load balancer).",
    example: "false",
    parse: bool(false),
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
    doc: "redis://host:6379 to share rate-limit counters between nodes; unset keeps them in memory.",
    parse: url(["redis:", "rediss:"]),
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
  FERRY_TEST_JOBS: {
    group: "worker",
    doc: "Registers the diagnostic job kinds used by Ferry's own tests. Never enable in production.",
    example: "false",
    parse: bool(false),
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
  if (problems.length > 0) throw new ConfigError(problems);
  const parsed = out as Parsed;
  const publicBaseUrl = (parsed.PUBLIC_BASE_URL ?? `http://localhost:${parsed.PORT}`).replace(/\/+$/, "");
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
    isSandbox: parsed.FERRY_ENVIRONMENT === "sandbox",
    corsOrigins,
  });
}

/** Renders `.env.example` content from the settings table (kept in sync by a test). */
export function renderEnvExample(): string {
  const lines = ["# Ferry configuration. Every variable is optional; defaults are shown.", ""];
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
