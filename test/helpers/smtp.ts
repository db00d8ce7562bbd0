import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** One message received by the test SMTP server: envelope, raw source and the parsed mail. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
  /** The AUTH user name, when the client authenticated. */
  user?: string;
}

/** How the server answers the next messages (DATA phase). */
export type SmtpMode = "accept" | "temporary-failure" | "permanent-failure";

/** A real SMTP server on 127.0.0.1 (plain, no TLS) for tests. */
export interface TestSmtpServer {
  port: number;
  messages: ReceivedMail[];
  /** Changes how DATA is answered. */
  setMode(mode: SmtpMode): void;
  /** Resolves once `count` messages were received (or rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * Starts an SMTP server on a random port of 127.0.0.1. With `auth`, clients must log in with those
 * credentials (PLAIN/LOGIN over the plain connection). `port` picks the port (default: any free one).
 */
export async function startSmtpServer(
  opts: { auth?: { user: string; pass: string }; port?: number } = {},
): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  let mode: SmtpMode = "accept";
  const server = new SMTPServer({
    secure: false,
    disabledCommands: opts.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    logger: false,
    // Pooled client connections stay open: close them soon instead of waiting 30 s.
    closeTimeout: 200,
    onAuth(auth, _session, callback) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error("Invalid username or password"));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (mode !== "accept") {
          const err = new Error(
            mode === "permanent-failure" ? "Mailbox unavailable" : "Try again later",
          ) as Error & {
            responseCode: number;
          };
          err.responseCode = mode === "permanent-failure" ? 550 : 451;
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw)
          .then((parsed) => {
            messages.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
              ...(typeof session.user === "string" ? { user: session.user } : {}),
            });
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    messages,
    setMode(next) {
      mode = next;
    },
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} emails, got ${messages.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return messages.slice(0, count);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
