import { createTransport } from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSmtpServer, type TestSmtpServer } from "../../../test/helpers/smtp.js";
import { loadConfig } from "../../config/config.js";
import { CaptureMailer } from "./capture-mailer.js";
import type { CapturedMessage } from "./capture-sink.js";
import { DeliveryError, type Mailer, type OutgoingEmail, smtpSettingsFromConfig } from "./mailer.js";
import { SmtpMailer } from "./smtp-mailer.js";

/** What a test can read back from where an implementation put the message. */
interface Harness {
  mailer: Mailer;
  received(): Promise<{ to: string; subject: string; text: string; html: string | undefined }[]>;
  close(): Promise<void>;
}

const email: OutgoingEmail = {
  from: "Ferry <no-reply@ferry.test>",
  to: "jane@example.com",
  subject: "Files for you: naïve café ✓",
  text: "Open https://ferry.test/r/abc/",
  html: '<p>Open <a href="https://ferry.test/r/abc/">the files</a></p>',
};

const implementations: [string, () => Promise<Harness>][] = [
  [
    "capture",
    async () => {
      const stored: CapturedMessage[] = [];
      const mailer = new CaptureMailer({ capture: async (m) => stored.push(m) });
      return {
        mailer,
        received: async () =>
          stored.map((m) => ({ to: m.to, subject: m.subject, text: m.text, html: m.html ?? undefined })),
        close: () => mailer.close(),
      };
    },
  ],
  [
    "smtp",
    async () => {
      const server = await startSmtpServer();
      const mailer = new SmtpMailer({ host: "127.0.0.1", port: server.port, tls: "none" });
      return {
        mailer,
        received: async () =>
          server.messages.map((m) => ({
            to: m.to[0] ?? "",
            subject: m.parsed.subject ?? "",
            text: (m.parsed.text ?? "").trim(),
            html: typeof m.parsed.html === "string" ? m.parsed.html.trim() : undefined,
          })),
        close: async () => {
          await mailer.close();
          await server.close();
        },
      };
    },
  ],
];

describe.each(implementations)("mailer contract: %s", (_name, make) => {
  let h: Harness;
  beforeAll(async () => {
    h = await make();
  });
  afterAll(async () => h?.close());

  it("delivers recipient, subject (UTF-8), text and HTML unchanged", async () => {
    const result = await h.mailer.send(email, { accountId: 1 });
    expect(result.messageId).not.toBe("");
    expect(await h.received()).toEqual([
      { to: "jane@example.com", subject: email.subject, text: email.text, html: email.html },
    ]);
  });
});

describe("SMTP mailer failures", () => {
  let server: TestSmtpServer;
  beforeAll(async () => {
    server = await startSmtpServer();
  });
  afterAll(async () => server?.close());

  it("reports 4xx as transient and 5xx as permanent DeliveryErrors", async () => {
    const mailer = new SmtpMailer({ host: "127.0.0.1", port: server.port, tls: "none" });
    try {
      server.setMode("temporary-failure");
      const temp = await mailer.send(email).catch((e: unknown) => e);
      expect(temp).toBeInstanceOf(DeliveryError);
      expect(temp).toMatchObject({
        permanent: false,
        message: expect.stringMatching(/^SMTP server answered 451/),
      });
      server.setMode("permanent-failure");
      const perm = await mailer.send(email).catch((e: unknown) => e);
      expect(perm).toMatchObject({
        permanent: true,
        message: expect.stringMatching(/^SMTP server answered 550/),
      });
    } finally {
      server.setMode("accept");
      await mailer.close();
    }
  });
});

describe("SMTP mailer message bytes", () => {
  it("sends the bytes nodemailer's own transport sends for the same email", async () => {
    const server = await startSmtpServer();
    const mailer = new SmtpMailer({ host: "127.0.0.1", port: server.port, tls: "none" });
    const plain = createTransport({ pool: true, host: "127.0.0.1", port: server.port, ignoreTLS: true });
    try {
      const full: OutgoingEmail = {
        ...email,
        text: `${"A line with ünïcode that goes on for a while, past the 76 columns of QP. ".repeat(30)}\n`,
        html: `${email.html}\n${"<p>Ünïcode paragraph</p>\n".repeat(200)}`,
        replyTo: "alex@example.com",
        headers: { "X-Ferry-Notification": "42", "Auto-Submitted": "auto-generated" },
      };
      await mailer.send(full);
      await plain.sendMail(full);
      const [mine, theirs] = (await server.waitFor(2)).map((m) => {
        // Boundaries, Date and Message-ID differ from one message to the next.
        let raw = m.raw.replace(/^(Date|Message-ID): .*$/gim, "$1: -");
        [...m.raw.matchAll(/boundary="([^"]+)"/g)].forEach((b, i) => {
          raw = raw.split(b[1]!).join(`boundary-${i}`);
        });
        return raw;
      });
      expect(mine!.length).toBeGreaterThan(5000);
      expect(mine).toBe(theirs);
    } finally {
      plain.close();
      await mailer.close();
      await server.close();
    }
  });
});

describe("the deployment's SMTP connection pool", () => {
  it("has a connection per job the worker runs at once, unless SMTP_MAX_CONNECTIONS sets it", () => {
    const smtp = { SMTP_HOST: "smtp.example.com" };
    expect(smtpSettingsFromConfig(loadConfig(smtp)).maxConnections).toBe(4);
    expect(smtpSettingsFromConfig(loadConfig({ ...smtp, JOB_CONCURRENCY: "8" })).maxConnections).toBe(8);
    expect(
      smtpSettingsFromConfig(loadConfig({ ...smtp, JOB_CONCURRENCY: "8", SMTP_MAX_CONNECTIONS: "2" }))
        .maxConnections,
    ).toBe(2);
    expect(() => loadConfig({ ...smtp, SMTP_MAX_CONNECTIONS: "0" })).toThrow(/SMTP_MAX_CONNECTIONS/);
  });
});
