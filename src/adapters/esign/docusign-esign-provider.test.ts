import { execFile } from "node:child_process";
import { createHmac, generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DocuSignFake, startDocuSignFake } from "../../../test/helpers/fakes/docusign.js";
import { createHttpClient } from "../http-client/http-client.js";
import type { DocuSignCredentials } from "./docusign-credentials.js";
import { runEsignProviderContract } from "./esign-provider.contract.js";
import {
  type EsignProvider,
  EsignProviderError,
  ProviderRejectedError,
  ProviderUnavailableError,
  SigningUrlExpiredError,
} from "./esign-provider.js";
import { esignProviders } from "./esign-providers.js";

const START = Date.parse("2026-03-02T10:00:00Z");
let nowMs = START;
const clock = () => nowMs;

const PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n",
  "latin1",
);

let fake: DocuSignFake;
let docusign: EsignProvider<DocuSignCredentials>;
let credentials: DocuSignCredentials;

/** A receiver for Connect messages keeping raw bodies and headers exactly as they arrived. */
let receiver: Server;
let webhookUrl: string;
const deliveries: { rawBody: Buffer; headers: IncomingHttpHeaders }[] = [];

function provider(overrides: { timeoutMs?: number; allowPrivateAddresses?: boolean } = {}) {
  return esignProviders.docusign({
    http: createHttpClient({ allowPrivateAddresses: overrides.allowPrivateAddresses ?? true }),
    now: () => new Date(nowMs),
    allowInsecureHttp: true,
    ...(overrides.timeoutMs ? { timeoutMs: overrides.timeoutMs } : {}),
  }) as EsignProvider<DocuSignCredentials>;
}

const signers = [
  {
    key: "rcp_alice",
    name: "Alice Example",
    email: "alice@example.test",
    routingOrder: 1,
    fields: [
      { type: "signature" as const, page: 1, x: 72.4, y: 600.6, width: 180, height: 36 },
      { type: "date" as const, page: 1, x: 300, y: 600, width: 100, height: 20 },
      { type: "text" as const, page: 2, x: 72, y: 100, width: 200, height: 18 },
    ],
  },
  {
    key: "rcp_bob",
    name: "Bob Example",
    email: "bob@example.test",
    routingOrder: 2,
    fields: [
      { type: "initials" as const, page: 1, x: 500, y: 700, width: 40, height: 30 },
      { type: "checkbox" as const, page: 2, x: 72, y: 140, width: 12, height: 12 },
    ],
  },
];

async function createEnvelope(): Promise<string> {
  const { envelopeId } = await docusign.createEnvelope({
    credentials,
    documentPdf: new Uint8Array(PDF),
    documentName: "Lease.pdf",
    signers,
    envelopeKey: "esign_123",
  });
  return envelopeId;
}

async function failure(promise: Promise<unknown>): Promise<EsignProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EsignProviderError);
  return error as EsignProviderError;
}

beforeAll(async () => {
  fake = await startDocuSignFake({
    now: clock,
    hmacKeys: ["connect-key-old-000000000000000000000=", "connect-key-new-111111111111111111111="],
  });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      deliveries.push({ rawBody: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/providers/docusign/webhook/s3cret/`;
});

afterAll(async () => {
  await fake.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

beforeEach(() => {
  nowMs = START;
  fake.revokeTokens();
  fake.received.length = 0;
  deliveries.length = 0;
  credentials = fake.credentials();
  docusign = provider();
});

runEsignProviderContract("docusign against its fake", async () => ({
  provider: provider(),
  credentials: fake.credentials(),
  vendor: {
    completeSigner: (envelopeId, key) => fake.completeSigner(envelopeId, key),
    declineSigner: (envelopeId, key, reason) => fake.declineSigner(envelopeId, key, reason),
    signedPdf: (envelopeId) => fake.signedPdf(envelopeId),
    async completionWebhook(envelopeId, { badSignature }) {
      await fake.sendConnect(webhookUrl, "envelope-completed", envelopeId, { badSignature });
      return deliveries.at(-1)!;
    },
    failNext(kind) {
      fake.failNext(
        kind === "outage"
          ? { status: 503, body: { errorCode: "UNSPECIFIED_ERROR", message: "Service unavailable." } }
          : { status: 400, body: { errorCode: "INVALID_REQUEST_PARAMETER", message: "Invalid parameter." } },
      );
    },
    requests: () => fake.received.length,
  },
}));

describe("DocuSign adapter: envelopes", () => {
  it("creates a sent envelope with the PDF, embedded signers and their tabs in points", async () => {
    const envelopeId = await createEnvelope();
    const stored = fake.envelope(envelopeId)!;
    expect(stored.status).toBe("sent");
    expect(stored.documentPdf.equals(PDF)).toBe(true);
    expect(stored.documentName).toBe("Lease.pdf");
    expect(stored.emailSubject).toBe("Please sign: Lease.pdf");
    expect(stored.customFields).toEqual({
      textCustomFields: [
        { name: "ferry_envelope_key", value: "esign_123", show: "false", required: "false" },
      ],
    });
    expect(
      stored.signers.map(({ recipientId, clientUserId, routingOrder }) => [
        recipientId,
        clientUserId,
        routingOrder,
      ]),
    ).toEqual([
      ["1", "rcp_alice", "1"],
      ["2", "rcp_bob", "2"],
    ]);
    expect(stored.signers[0]!.tabs).toEqual({
      signHereTabs: [
        {
          documentId: "1",
          pageNumber: "1",
          xPosition: "72",
          yPosition: "601",
          tabLabel: "rcp_alice_signature_1",
        },
      ],
      dateSignedTabs: [
        {
          documentId: "1",
          pageNumber: "1",
          xPosition: "300",
          yPosition: "600",
          width: "100",
          height: "20",
          tabLabel: "rcp_alice_date_2",
        },
      ],
      textTabs: [
        {
          documentId: "1",
          pageNumber: "2",
          xPosition: "72",
          yPosition: "100",
          width: "200",
          height: "18",
          required: "true",
          tabLabel: "rcp_alice_text_3",
        },
      ],
    });
    expect(Object.keys(stored.signers[1]!.tabs)).toEqual(["initialHereTabs", "checkboxTabs"]);
  });

  it("reports status as signers sign, then the completed envelope and its signed PDF", async () => {
    const envelopeId = await createEnvelope();
    expect(await docusign.fetchStatus({ credentials, envelopeId })).toEqual({
      status: "sent",
      signers: [
        { key: "rcp_alice", status: "sent" },
        { key: "rcp_bob", status: "sent" },
      ],
    });

    nowMs += 60_000;
    fake.completeSigner(envelopeId, "rcp_alice");
    const partial = await docusign.fetchStatus({ credentials, envelopeId });
    expect(partial.status).toBe("sent");
    expect(partial.signers[0]).toEqual({ key: "rcp_alice", status: "signed", signedAt: new Date(nowMs) });

    nowMs += 60_000;
    fake.completeSigner(envelopeId, "rcp_bob");
    const done = await docusign.fetchStatus({ credentials, envelopeId });
    expect(done.status).toBe("completed");
    expect(done.completedAt).toEqual(new Date(nowMs));
    expect(done.signers.map((signer) => signer.status)).toEqual(["signed", "signed"]);

    const pdf = await docusign.fetchSignedPdf({ credentials, envelopeId });
    expect(Buffer.from(pdf).equals(fake.signedPdf(envelopeId))).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), "ferry-docusign-"));
    try {
      await writeFile(join(dir, "signed.pdf"), pdf);
      const { stdout } = await promisify(execFile)("pdfinfo", [join(dir, "signed.pdf")]);
      expect(stdout).toMatch(/Pages:\s+1/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reports a declined envelope with the signer's reason", async () => {
    const envelopeId = await createEnvelope();
    fake.declineSigner(envelopeId, "rcp_alice", "Wrong address on page 2.");
    const state = await docusign.fetchStatus({ credentials, envelopeId });
    expect(state.status).toBe("declined");
    expect(state.signers[0]).toEqual({
      key: "rcp_alice",
      status: "declined",
      declinedAt: new Date(nowMs),
      declinedReason: "Wrong address on page 2.",
    });
  });

  it("voids an open envelope with its reason, and refuses to void a completed one (409)", async () => {
    const open = await createEnvelope();
    await docusign.voidEnvelope({ credentials, envelopeId: open, reason: "Sent by mistake." });
    expect(await docusign.fetchStatus({ credentials, envelopeId: open })).toMatchObject({
      status: "voided",
      voidedReason: "Sent by mistake.",
    });

    const completed = await createEnvelope();
    fake.completeSigner(completed, "rcp_alice");
    fake.completeSigner(completed, "rcp_bob");
    const error = await failure(
      docusign.voidEnvelope({ credentials, envelopeId: completed, reason: "Too late." }),
    );
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({
      reason: "state_conflict",
      status: 409,
      code: "CONFLICT",
      retryable: false,
      vendorCode: "ENVELOPE_CANNOT_VOID_INVALID_STATE",
      detail: "The DocuSign envelope's state does not allow this (ENVELOPE_CANNOT_VOID_INVALID_STATE).",
    });
  });

  it("answers an unknown envelope with not_found (404)", async () => {
    const error = await failure(
      docusign.fetchStatus({ credentials, envelopeId: "00000000-0000-4000-8000-000000000000" }),
    );
    expect(error).toMatchObject({ reason: "not_found", status: 404, vendorCode: "ENVELOPE_DOES_NOT_EXIST" });
  });
});

describe("DocuSign adapter: signing URLs", () => {
  it("requests a single-use recipient view for an embedded signer, valid for five minutes", async () => {
    const envelopeId = await createEnvelope();
    const returnUrl = "https://ferry.test/r/abc/esign/return?step=1";
    const view = await docusign.signingUrl({
      credentials,
      envelopeId,
      signerKey: "rcp_alice",
      name: "Alice Example",
      email: "alice@example.test",
      returnUrl,
    });
    expect(view.url.startsWith(`${fake.baseUri}/Signing/MTRedeem/v1/`)).toBe(true);
    expect(view.expiresAt).toEqual(new Date(START + 5 * 60_000));

    const first = await fetch(view.url, { redirect: "manual" });
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("Signing as Alice Example");
    expect((await docusign.fetchStatus({ credentials, envelopeId })).signers[0]?.status).toBe("delivered");

    const second = await fetch(view.url, { redirect: "manual" });
    expect(second.status).toBe(302);
    const back = new URL(second.headers.get("location")!);
    expect(back.searchParams.get("event")).toBe("ttl_expired");
    expect(back.searchParams.get("step")).toBe("1");
    expect(docusign.describeReturn(Object.fromEntries(back.searchParams))).toBe("expired");
  });

  it("lets the signer finish or decline on the fake's signing page, returning with DocuSign's event", async () => {
    const envelopeId = await createEnvelope();
    const open = async (signerKey: string, name: string, email: string) => {
      const view = await docusign.signingUrl({
        credentials,
        envelopeId,
        signerKey,
        name,
        email,
        returnUrl: "https://ferry.test/back",
      });
      const page = await (await fetch(view.url)).text();
      const actions = [...page.matchAll(/action="([^"]+)"/g)].map((match) => match[1]!);
      return (verb: "finish" | "decline") =>
        new URL(actions.find((action) => action.endsWith(`/${verb}`))!, fake.baseUri);
    };
    const alice = await open("rcp_alice", "Alice Example", "alice@example.test");
    const finished = await fetch(alice("finish"), { method: "POST", redirect: "manual" });
    expect(new URL(finished.headers.get("location")!).searchParams.get("event")).toBe("signing_complete");
    expect((await docusign.fetchStatus({ credentials, envelopeId })).signers[0]?.status).toBe("signed");

    const bob = await open("rcp_bob", "Bob Example", "bob@example.test");
    const declined = await fetch(bob("decline"), {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "reason=Not+today",
    });
    const back = new URL(declined.headers.get("location")!);
    expect(docusign.describeReturn(Object.fromEntries(back.searchParams))).toBe("declined");
    const state = await docusign.fetchStatus({ credentials, envelopeId });
    expect(state.status).toBe("declined");
    expect(state.signers[1]).toMatchObject({ status: "declined", declinedReason: "Not today" });
  });

  it("sends an expired URL back with ttl_expired", async () => {
    const envelopeId = await createEnvelope();
    const view = await docusign.signingUrl({
      credentials,
      envelopeId,
      signerKey: "rcp_alice",
      name: "Alice Example",
      email: "alice@example.test",
      returnUrl: "https://ferry.test/back",
    });
    fake.expireSigningUrls();
    const answer = await fetch(view.url, { redirect: "manual" });
    expect(new URL(answer.headers.get("location")!).searchParams.get("event")).toBe("ttl_expired");
  });

  it("refuses a signer whose turn has not come (409) and an unknown signer (404)", async () => {
    const envelopeId = await createEnvelope();
    const bob = {
      credentials,
      envelopeId,
      name: "Bob Example",
      email: "bob@example.test",
      returnUrl: "https://ferry.test/back",
    };
    expect(await failure(docusign.signingUrl({ ...bob, signerKey: "rcp_bob" }))).toMatchObject({
      reason: "state_conflict",
      vendorCode: "RECIPIENT_NOT_IN_SEQUENCE",
    });
    expect(await failure(docusign.signingUrl({ ...bob, signerKey: "rcp_carol" }))).toMatchObject({
      reason: "not_found",
      vendorCode: "UNKNOWN_ENVELOPE_RECIPIENT",
    });
    fake.completeSigner(envelopeId, "rcp_alice");
    const view = await docusign.signingUrl({ ...bob, signerKey: "rcp_bob" });
    expect(view.url).toContain("/Signing/MTRedeem/v1/");
  });

  it("reads the return event as a display hint only", () => {
    expect(docusign.describeReturn({ event: "signing_complete" })).toBe("finished");
    expect(docusign.describeReturn({ event: "decline" })).toBe("declined");
    expect(docusign.describeReturn({ event: "cancel" })).toBe("canceled");
    expect(docusign.describeReturn({ event: "session_timeout" })).toBe("expired");
    expect(docusign.describeReturn({ event: "exception" })).toBe("failed");
    expect(docusign.describeReturn({ event: ["signing_complete"] })).toBe("unknown");
    expect(docusign.describeReturn({})).toBe("unknown");
    const expired = new SigningUrlExpiredError("docusign");
    expect(expired).toMatchObject({
      status: 410,
      code: "GONE",
      reason: "signing_url_expired",
      retryable: false,
    });
  });
});

describe("DocuSign adapter: Connect webhooks", () => {
  async function delivered(...args: Parameters<DocuSignFake["sendConnect"]>) {
    const sent = await fake.sendConnect(...args);
    expect(sent.status).toBe(200);
    return deliveries.at(-1)!;
  }

  it("accepts a message signed with the account's keys and gives a stable event id", async () => {
    const envelopeId = await createEnvelope();
    const generatedDateTime = "2026-03-02T10:05:00.0000000Z";
    const first = await delivered(webhookUrl, "envelope-completed", envelopeId, { generatedDateTime });
    expect(first.headers["x-docusign-signature-1"]).toBeDefined();
    expect(first.headers["x-docusign-signature-2"]).toBeDefined();
    const verified = docusign.verifyWebhook({ rawBody: first.rawBody, headers: first.headers, credentials });
    expect(verified).toEqual({
      ok: true,
      event: {
        eventId: expect.stringMatching(/^dsc_[0-9a-f]{64}$/),
        envelopeId,
        kind: "envelope_completed",
        vendorEvent: "envelope-completed",
        occurredAt: new Date("2026-03-02T10:05:00Z"),
      },
    });

    const retry = await delivered(webhookUrl, "envelope-completed", envelopeId, {
      generatedDateTime,
      retryCount: 1,
    });
    const again = docusign.verifyWebhook({ rawBody: retry.rawBody, headers: retry.headers, credentials });
    expect(again.ok && verified.ok && again.event.eventId === verified.event.eventId).toBe(true);

    const signer = await delivered(webhookUrl, "recipient-completed", envelopeId, {
      generatedDateTime,
      recipientKey: "rcp_alice",
    });
    const other = docusign.verifyWebhook({ rawBody: signer.rawBody, headers: signer.headers, credentials });
    expect(other.ok && other.event.kind).toBe("signer_completed");
    expect(other.ok && verified.ok && other.event.eventId !== verified.event.eventId).toBe(true);
  });

  it("accepts a message when any signature matches any configured key (rotation)", async () => {
    const envelopeId = await createEnvelope();
    const message = await delivered(webhookUrl, "envelope-sent", envelopeId);
    for (const hmacKeys of [
      [fake.hmacKeys[1]!],
      [fake.hmacKeys[0]!],
      ["some-other-key-2222222222222", fake.hmacKeys[1]!],
    ]) {
      const verified = docusign.verifyWebhook({
        rawBody: message.rawBody,
        headers: message.headers,
        credentials: { ...credentials, hmacKeys },
      });
      expect(verified.ok).toBe(true);
    }
    const stranger = docusign.verifyWebhook({
      rawBody: message.rawBody,
      headers: message.headers,
      credentials: { ...credentials, hmacKeys: ["some-other-key-2222222222222"] },
    });
    expect(stranger).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuses a bad signature, a changed body, no signature and another account's message", async () => {
    const envelopeId = await createEnvelope();
    const bad = await delivered(webhookUrl, "envelope-completed", envelopeId, { badSignature: true });
    expect(docusign.verifyWebhook({ rawBody: bad.rawBody, headers: bad.headers, credentials })).toEqual({
      ok: false,
      reason: "bad_signature",
    });

    const good = await delivered(webhookUrl, "envelope-completed", envelopeId);
    const changed = Buffer.from(good.rawBody.toString().replace("envelope-completed", "envelope-voided"));
    expect(docusign.verifyWebhook({ rawBody: changed, headers: good.headers, credentials })).toEqual({
      ok: false,
      reason: "bad_signature",
    });

    const unsigned = Object.fromEntries(
      Object.entries(good.headers).filter(([name]) => !name.startsWith("x-docusign-signature")),
    );
    expect(docusign.verifyWebhook({ rawBody: good.rawBody, headers: unsigned, credentials })).toEqual({
      ok: false,
      reason: "missing_signature",
    });

    const elsewhere = { ...credentials, accountId: "ffffffff-0000-4000-8000-000000000000" };
    expect(
      docusign.verifyWebhook({ rawBody: good.rawBody, headers: good.headers, credentials: elsewhere }),
    ).toEqual({
      ok: false,
      reason: "wrong_account",
    });
  });

  it("refuses a signed body that is not a Connect event", () => {
    const rawBody = Buffer.from('{"hello":"world"}');
    const signature = createHmac("sha256", fake.hmacKeys[0]!).update(rawBody).digest("base64");
    expect(
      docusign.verifyWebhook({ rawBody, headers: { "x-docusign-signature-1": signature }, credentials }),
    ).toEqual({ ok: false, reason: "malformed" });
  });
});

describe("DocuSign adapter: JWT grant and tokens", () => {
  it("grants once and reuses the token until it nears its expiry, then grants again", async () => {
    const before = fake.grants();
    const envelopeId = await createEnvelope();
    await docusign.fetchStatus({ credentials, envelopeId });
    await docusign.fetchStatus({ credentials, envelopeId });
    expect(fake.grants()).toBe(before + 1);

    nowMs += 3600_000 - 30_000;
    await docusign.fetchStatus({ credentials, envelopeId });
    expect(fake.grants()).toBe(before + 2);
    const paths = fake.received.map((request) => `${request.method} ${request.path.split("?")[0]}`);
    expect(paths.filter((path) => path === "POST /oauth/token")).toHaveLength(2);
  });

  it("shares one grant between concurrent calls", async () => {
    const envelopeId = await createEnvelope();
    fake.revokeTokens();
    const fresh = provider();
    const before = fake.grants();
    await Promise.all([1, 2, 3].map(() => fresh.fetchStatus({ credentials, envelopeId })));
    expect(fake.grants()).toBe(before + 1);
  });

  it("grants anew once when DocuSign stops honouring a cached token", async () => {
    const envelopeId = await createEnvelope();
    const before = fake.grants();
    fake.revokeTokens();
    fake.received.length = 0;
    expect((await docusign.fetchStatus({ credentials, envelopeId })).status).toBe("sent");
    expect(fake.grants()).toBe(before + 1);
    expect(fake.received.map((request) => request.method + " " + request.path.split("?")[0])).toEqual([
      `GET /restapi/v2.1/accounts/${fake.accountId}/envelopes/${envelopeId}`,
      "POST /oauth/token",
      `GET /restapi/v2.1/accounts/${fake.accountId}/envelopes/${envelopeId}`,
    ]);
  });

  it("sends the RS256 assertion and a Bearer token; a ready access token is used as given", async () => {
    const envelopeId = await createEnvelope();
    const grant = fake.received.find((request) => request.path === "/oauth/token");
    expect(grant).toBeDefined();
    expect(fake.received.at(-1)?.authorization).toMatch(/^Bearer fake-token-/);

    fake.addAccessToken("ready-made-token");
    const { rsaPrivateKey: _key, ...rest } = credentials;
    const tokenCredentials = { ...rest, accessToken: "ready-made-token" };
    const before = fake.grants();
    expect((await docusign.fetchStatus({ credentials: tokenCredentials, envelopeId })).status).toBe("sent");
    expect(fake.received.at(-1)?.authorization).toBe("Bearer ready-made-token");
    expect(fake.grants()).toBe(before);

    const error = await failure(
      docusign.fetchStatus({ credentials: { ...tokenCredentials, accessToken: "unknown" }, envelopeId }),
    );
    expect(error).toMatchObject({
      reason: "auth_failed",
      status: 422,
      vendorCode: "USER_AUTHENTICATION_FAILED",
    });
  });

  it("maps a refused grant to auth_failed without the vendor's words", async () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
      type: "pkcs8",
      format: "pem",
    });
    const error = await failure(createEnvelopeWith({ ...credentials, rsaPrivateKey: other.toString() }));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({
      reason: "auth_failed",
      vendorCode: "invalid_grant",
      detail:
        "DocuSign refused the JWT grant (invalid_grant): check the integration key, user ID and RSA key.",
    });

    fake.failNext({ status: 400, body: { error: "consent_required" } });
    const consent = await failure(createEnvelopeWith(credentials));
    expect(consent.detail).toBe(
      "The DocuSign user has not consented to this integration key yet (consent_required).",
    );
  });
});

function createEnvelopeWith(withCredentials: DocuSignCredentials) {
  return docusign.createEnvelope({
    credentials: withCredentials,
    documentPdf: new Uint8Array(PDF),
    documentName: "Lease.pdf",
    signers,
    envelopeKey: "esign_123",
  });
}

describe("DocuSign adapter: failures", () => {
  afterEach(() => {
    fake.failNext();
  });

  it.each([500, 503, 429])("maps a %i answer to ProviderUnavailable (503, retryable)", async (status) => {
    const envelopeId = await createEnvelope();
    fake.failNext({ status, body: { errorCode: "UNSPECIFIED_ERROR", message: "internal details" } });
    const error = await failure(docusign.fetchStatus({ credentials, envelopeId }));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE", retryable: true });
    expect(error.detail).not.toContain("internal details");
  });

  it("maps a 400 to ProviderRejected (422) with a safe message naming only the vendor's code", async () => {
    await createEnvelope();
    fake.failNext({
      status: 400,
      body: {
        errorCode: "INVALID_EMAIL_ADDRESS_FOR_RECIPIENT",
        message: "The email <alice@example.test> is bad.",
      },
    });
    const error = await failure(createEnvelope());
    expect(error).toMatchObject({
      reason: "invalid_request",
      status: 422,
      detail: "DocuSign refused the request (INVALID_EMAIL_ADDRESS_FOR_RECIPIENT).",
    });
  });

  it("maps a vendor that never answers to ProviderUnavailable", async () => {
    const envelopeId = await createEnvelope();
    fake.failNext({ hang: true });
    const error = await failure(provider({ timeoutMs: 300 }).fetchStatus({ credentials, envelopeId }));
    expect(error).toMatchObject({
      reason: "unavailable",
      detail: "DocuSign could not be reached (timeout).",
    });
  });

  it("maps an answer that is not DocuSign's shape to ProviderUnavailable", async () => {
    const envelopeId = await createEnvelope();
    fake.failNext({ status: 200, body: { envelopeId, status: "teleported" } });
    const error = await failure(docusign.fetchStatus({ credentials, envelopeId }));
    expect(error).toMatchObject({
      reason: "unavailable",
      detail: "DocuSign gave an unexpected answer: the envelope had an unknown status.",
    });
  });

  it("refuses http:// DocuSign addresses unless the deployment allows them, before any request", async () => {
    fake.received.length = 0;
    const strict = esignProviders.docusign({
      http: createHttpClient({ allowPrivateAddresses: true }),
    }) as EsignProvider<DocuSignCredentials>;
    expect(strict.validateCredentials(credentials)).toEqual({
      ok: false,
      errors: { baseUri: ["Must use https."], oauthBaseUri: ["Must use https."] },
    });
    const error = await failure(
      strict.fetchStatus({ credentials, envelopeId: "00000000-0000-4000-8000-000000000000" }),
    );
    expect(error).toMatchObject({
      reason: "blocked_destination",
      detail: "This connection's DocuSign address must use https.",
    });
    expect(fake.received).toHaveLength(0);
  });

  it("respects the SSRF guard: a private address is refused before any request", async () => {
    fake.received.length = 0;
    const guarded = provider({ allowPrivateAddresses: false });
    const error = await failure(
      guarded.createEnvelope({
        credentials,
        documentPdf: new Uint8Array(PDF),
        documentName: "Lease.pdf",
        signers,
        envelopeKey: "esign_1",
      }),
    );
    expect(error).toMatchObject({ reason: "blocked_destination", status: 422, retryable: false });
    expect(fake.received).toHaveLength(0);
  });
});

describe("DocuSign credentials", () => {
  it("accepts the fake's credentials and tells test mode from the OAuth host", () => {
    expect(docusign.validateCredentials(credentials)).toEqual({ ok: true, credentials });
    expect(docusign.isTestMode(credentials)).toBe(false);
    expect(docusign.isTestMode({ ...credentials, oauthBaseUri: "https://account-d.docusign.com" })).toBe(
      true,
    );
    expect(docusign.isTestMode({ ...credentials, oauthBaseUri: "https://account.docusign.com" })).toBe(false);
  });

  it("refuses incomplete, mixed or unknown settings, field by field, echoing no secret", () => {
    const { hmacKeys: _keys, ...noKeys } = credentials;
    expect(docusign.validateCredentials(noKeys)).toEqual({ ok: false, errors: { hmacKeys: ["Required."] } });
    expect(docusign.validateCredentials({ ...credentials, accessToken: "t" })).toEqual({
      ok: false,
      errors: { rsaPrivateKey: ["Give either rsaPrivateKey (JWT grant) or accessToken, not both."] },
    });
    const result = docusign.validateCredentials({ ...credentials, baseUri: "ftp://x", password: "hunter2" });
    expect(result).toEqual({
      ok: false,
      errors: {
        password: ["Not a DocuSign credential."],
        baseUri: ["Must be an http(s) origin such as https://demo.docusign.net, without a path."],
      },
    });
    expect(JSON.stringify(result)).not.toContain("hunter2");
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
      type: "pkcs8",
      format: "pem",
    });
    expect(docusign.validateCredentials({ ...credentials, rsaPrivateKey: weak.toString() })).toEqual({
      ok: false,
      errors: { rsaPrivateKey: ["The RSA key must have at least 2048 bits."] },
    });
    expect(docusign.validateCredentials("nope")).toEqual({
      ok: false,
      errors: { credentials: ["Credentials must be a JSON object."] },
    });
  });
});
