import { createRequire } from "node:module";
import { Readable } from "node:stream";
import type { Transporter } from "nodemailer";
import {
  DeliveryError,
  type Mailer,
  type OutgoingEmail,
  type SendResult,
  type SmtpSettings,
} from "./mailer.js";

/** Sends email over SMTP with nodemailer (pooled connections, optional DKIM signing). */
export class SmtpMailer implements Mailer {
  readonly kind = "smtp" as const;
  private readonly transport: Transporter;

  constructor(settings: SmtpSettings, options: { timeoutMs?: number } = {}) {
    const timeout = options.timeoutMs ?? 20_000;
    // Loaded with the first SMTP mailer: a server that only captures email never evaluates nodemailer.
    const { createTransport } = createRequire(import.meta.url)("nodemailer") as typeof import("nodemailer");
    this.transport = createTransport({
      pool: true,
      maxConnections: settings.maxConnections ?? 4,
      host: settings.host,
      port: settings.port,
      secure: settings.tls === "tls",
      requireTLS: settings.tls === "starttls",
      ignoreTLS: settings.tls === "none",
      ...(settings.servername ? { tls: { servername: settings.servername } } : {}),
      auth: settings.user ? { user: settings.user, pass: settings.password ?? "" } : undefined,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      ...(settings.dkim ? { dkim: settings.dkim } : {}),
    } as Parameters<typeof createTransport>[0]);
    // nodemailer streams a message in many small pieces (headers, boundaries, each encoded part),
    // and its SMTP connection writes each piece to the socket on its own: a dozen writes per email.
    // Handing it the message as one buffer makes that one write (and one for the final dot), with
    // the same bytes. A DKIM signature, added after this, reads the whole message anyway.
    this.transport.use("stream", (mail, done) => {
      mail.message.processFunc(wholeMessage);
      done();
    });
  }

  /** Sends one message; SMTP 5xx answers are permanent DeliveryErrors, everything else transient. */
  async send(email: OutgoingEmail): Promise<SendResult> {
    try {
      const info = await this.transport.sendMail({
        from: email.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        ...(email.html !== undefined ? { html: email.html } : {}),
        ...(email.replyTo ? { replyTo: email.replyTo } : {}),
        ...(email.headers ? { headers: email.headers } : {}),
      });
      return { messageId: String(info.messageId ?? "") };
    } catch (err) {
      throw toDeliveryError(err);
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** The message `input` streams, as one chunk once it has ended; its errors end the output. */
function wholeMessage(input: Readable): Readable {
  const chunks: Buffer[] = [];
  const output = new Readable({ read() {} });
  input.on("data", (chunk: Buffer | string) => {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  });
  input.once("end", () => {
    output.push(Buffer.concat(chunks));
    output.push(null);
  });
  input.once("error", (err) => output.destroy(err));
  return output;
}

function toDeliveryError(err: unknown): DeliveryError {
  const e = err as { message?: string; responseCode?: number; code?: string };
  const code = typeof e.responseCode === "number" ? e.responseCode : undefined;
  const permanent = code !== undefined && code >= 500 && code < 600;
  // The SMTP reply text is safe to show the owner; socket errors are summarised.
  const message = code
    ? `SMTP server answered ${code}: ${String(e.message ?? "")
        .replace(/^.*?(\d{3}[ -])/s, "$1")
        .slice(0, 300)}`
    : `SMTP delivery failed: ${e.code ?? "error"} ${String(e.message ?? "").slice(0, 200)}`.trim();
  return new DeliveryError(message, permanent);
}
