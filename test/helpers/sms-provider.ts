import { createServer, type IncomingMessage } from "node:http";

/** One Messages API call received by the fake provider. */
export interface ReceivedSms {
  path: string;
  authorization: string;
  contentType: string;
  form: Record<string, string>;
}

/** A queued answer: HTTP status and JSON body. */
export interface ProviderAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A local HTTP server speaking Twilio's Messages REST shape, for tests. */
export interface TestSmsProvider {
  /** Base URL to put in TWILIO_BASE_URL. */
  baseUrl: string;
  received: ReceivedSms[];
  /** Answers the next calls with these, in order (then 201 again). */
  answerNext(...answers: ProviderAnswer[]): void;
  close(): Promise<void>;
}

/** Twilio's answer for an invalid destination number. */
export const INVALID_NUMBER_ANSWER: ProviderAnswer = {
  status: 400,
  body: {
    code: 21211,
    message: "The 'To' number is not a valid phone number.",
    more_info: "https://www.twilio.com/docs/errors/21211",
    status: 400,
  },
};

/** A provider outage. */
export const SERVER_ERROR_ANSWER: ProviderAnswer = {
  status: 500,
  body: { code: 20500, message: "Internal Server Error", status: 500 },
};

/**
 * Starts the fake provider on 127.0.0.1. POST /2010-04-01/Accounts/<sid>/Messages.json answers 201
 * with a message resource (`sid` SM…) unless an answer was queued; other paths answer 404.
 */
export async function startSmsProvider(): Promise<TestSmsProvider> {
  const received: ReceivedSms[] = [];
  const queue: ProviderAnswer[] = [];
  let counter = 0;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? "");
    if (req.method !== "POST" || !match) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ status: 404 }));
      return;
    }
    const form = Object.fromEntries(new URLSearchParams(body));
    received.push({
      path: req.url ?? "",
      authorization: req.headers.authorization ?? "",
      contentType: req.headers["content-type"] ?? "",
      form,
    });
    const answer = queue.shift();
    if (answer) {
      res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
      return;
    }
    counter += 1;
    const sid = `SM${String(counter).padStart(32, "0")}`;
    res.writeHead(201, { "content-type": "application/json" }).end(
      JSON.stringify({
        sid,
        account_sid: match[1],
        to: form.To,
        from: form.From ?? null,
        messaging_service_sid: form.MessagingServiceSid ?? null,
        body: form.Body,
        status: "queued",
        num_segments: "1",
        direction: "outbound-api",
        uri: `/2010-04-01/Accounts/${match[1]}/Messages/${sid}.json`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    received,
    answerNext: (...answers) => queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
