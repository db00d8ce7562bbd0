/**
 * The mailer port: SMTP via nodemailer, or a capture mailer that stores messages instead
 * of sending them (the default when SMTP_HOST is unset). `createMailer(config, sink)` picks one.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Config } from "../../config/config.js";
import { CaptureMailer, type CaptureSink } from "./capture-mailer.js";
import { SmtpMailer } from "./smtp-mailer.js";

/** One email to send. `html` is optional (text-only mail); headers are extra MIME headers. */
export interface OutgoingEmail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  replyTo?: string;
  headers?: Record<string, string>;
}

/** Who a message is sent for: the owning account and, when it is one, the notification. */
export interface SendContext {
  accountId: number;
  notificationId?: number;
}

/** What a transport answers for an accepted message. */
export interface SendResult {
  /** Provider or SMTP message id. */
  messageId: string;
}

/** Sends email. Throws DeliveryError (transient or permanent); never throws for a sent message. */
export interface Mailer {
  /** "smtp" delivers; "capture" stores. */
  readonly kind: "smtp" | "capture";
  send(email: OutgoingEmail, context: SendContext): Promise<SendResult>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}

/**
 * A failed send. `permanent` true means retrying cannot help (a 5xx SMTP answer, a provider's
 * "invalid number"); false means retry later (connection refused, timeout, 4xx, provider 5xx/429).
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

/** SMTP connection settings: the deployment's from config, or an account's own. */
export interface SmtpSettings {
  host: string;
  port: number;
  tls: "none" | "starttls" | "tls";
  user?: string | undefined;
  password?: string | undefined;
  dkim?: { domainName: string; keySelector: string; privateKey: string } | undefined;
  /** TLS server name when `host` is a resolved address (custom SMTP settings). */
  servername?: string | undefined;
  /** Pooled connections open at once (default 4). */
  maxConnections?: number | undefined;
}

/** The deployment's mailer: SMTP when SMTP_HOST is set, the capture mailer otherwise. */
export function createMailer(config: Config, sink: CaptureSink): Mailer {
  const kind: "smtp" | "capture" = config.SMTP_HOST ? "smtp" : "capture";
  switch (kind) {
    case "smtp":
      return new SmtpMailer(smtpSettingsFromConfig(config));
    case "capture":
      return new CaptureMailer(sink);
  }
}

/**
 * The start-up warning of a live deployment whose emails are captured instead of delivered (no
 * SMTP_HOST), or undefined when there is nothing to warn about (SMTP configured, or a sandbox).
 */
export function mailerDeliveryWarning(config: Config): string | undefined {
  if (config.isSandbox || config.SMTP_HOST) return undefined;
  return "SMTP_HOST is not set in this live deployment: emails (notifications, two-factor codes) are captured in the database and NOT delivered to anyone. Set SMTP_HOST to send them.";
}

/** SMTP settings from config (SMTP_*, DKIM_*); throws Error when DKIM_PRIVATE_KEY names a missing file. */
export function smtpSettingsFromConfig(config: Config): SmtpSettings {
  const dkim =
    config.DKIM_DOMAIN && config.DKIM_SELECTOR && config.DKIM_PRIVATE_KEY
      ? {
          domainName: config.DKIM_DOMAIN,
          keySelector: config.DKIM_SELECTOR,
          privateKey: readPem(config.DKIM_PRIVATE_KEY),
        }
      : undefined;
  return {
    host: config.SMTP_HOST ?? "localhost",
    port: config.SMTP_PORT,
    tls: config.SMTP_TLS,
    user: config.SMTP_USER,
    password: config.SMTP_PASSWORD,
    dkim,
    // One connection per job the worker runs at once: with fewer, sending jobs queue for a
    // connection while the others wait on the server's replies (ADR 0042).
    maxConnections: config.SMTP_MAX_CONNECTIONS ?? config.JOB_CONCURRENCY,
  };
}

function readPem(value: string): string {
  if (value.includes("-----BEGIN")) return value.replace(/\\n/g, "\n");
  if (!existsSync(value)) throw new Error("DKIM_PRIVATE_KEY is neither PEM text nor a readable file path");
  return readFileSync(value, "utf8");
}

/** The sender address of deployment email: MAIL_FROM, else no-reply@<PUBLIC_BASE_URL host>. */
export function defaultFromAddress(config: Config): string {
  return config.MAIL_FROM ?? `Ferry <no-reply@${new URL(config.publicBaseUrl).hostname}>`;
}
