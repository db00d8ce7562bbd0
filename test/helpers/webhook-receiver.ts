import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { eventually } from "./process.js";

/** One request the receiver got. */
export interface ReceivedWebhook {
  /** Path and query string as received. */
  url: string;
  method: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
  /** The answer given: a status, or "hang" when the request was held open. */
  answer: number | "hang";
}

/** What the receiver answers: an HTTP status, or "hang" to hold the request open without answering. */
export type ReceiverAnswer = number | "hang";

/** A local HTTP server on 127.0.0.1 recording every request, with programmable answers. */
export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Queues answers for the next requests, in order; when the queue is empty `defaultAnswer` is used. */
  answerNext(...answers: ReceiverAnswer[]): void;
  /** Answer once the queue is empty (initially 200). */
  defaultAnswer: ReceiverAnswer;
  /** Resolves when at least `count` requests arrived (polls; throws after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Answers every held request with `status` (default 200). */
  releaseHeld(status?: number): void;
  close(): Promise<void>;
}

/** Starts a receiver on a free port of 127.0.0.1. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const queue: ReceiverAnswer[] = [];
  const held: ServerResponse[] = [];
  const receiver = { defaultAnswer: 200 as ReceiverAnswer };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const answer = queue.length > 0 ? (queue.shift() as ReceiverAnswer) : receiver.defaultAnswer;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        headers[k] = Array.isArray(v) ? v.join(", ") : (v ?? "");
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      received.push({ url: req.url ?? "", method: req.method ?? "", headers, body, json, answer });
      if (answer === "hang") {
        held.push(res);
        return;
      }
      res.writeHead(answer, { "content-type": "text/plain" });
      res.end(answer >= 200 && answer < 300 ? "ok" : `answer ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    answerNext: (...answers) => queue.push(...answers),
    get defaultAnswer() {
      return receiver.defaultAnswer;
    },
    set defaultAnswer(a: ReceiverAnswer) {
      receiver.defaultAnswer = a;
    },
    async waitFor(count, timeoutMs = 20_000) {
      await eventually(() => received.length >= count, timeoutMs, 20);
      return received;
    },
    releaseHeld(status = 200) {
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(status).end();
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Verifies a received webhook with the `standardwebhooks` package and `secret`, as if the
 * receiver's clock read `at` (default: now; pass the test's fixed clock). Returns the parsed body;
 * throws WebhookVerificationError when no signature matches or the timestamp is off by > 5 minutes.
 */
export function verifyWebhook(received: ReceivedWebhook, secret: string, at: Date = new Date()): unknown {
  // The package checks the timestamp against Date.now(); the call is synchronous, so nothing else
  // observes the substitution.
  const realNow = Date.now;
  Date.now = () => at.getTime();
  try {
    return new Webhook(secret).verify(received.body, received.headers);
  } finally {
    Date.now = realNow;
  }
}

/** True when `verifyWebhook` accepts the webhook with `secret` at `at`. */
export function isSignedWith(received: ReceivedWebhook, secret: string, at: Date = new Date()): boolean {
  try {
    verifyWebhook(received, secret, at);
    return true;
  } catch {
    return false;
  }
}
