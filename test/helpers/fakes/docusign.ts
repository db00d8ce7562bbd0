/**
 * A fake DocuSign for tests: one local HTTP server speaking the shapes Ferry's DocuSign adapter uses —
 * the OAuth JWT grant (`POST /oauth/token`, RS256 assertion checked against the configured public key),
 * eSignature REST v2.1 envelopes, recipients, recipient views, the combined document and voiding — with
 * in-memory state, Bearer tokens required, DocuSign-shaped errors, a minimal signing page behind each
 * recipient view URL, and Connect messages signed with HMAC-SHA256 the way DocuSign signs them.
 */
import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { jwtVerify } from "jose";

/** A queued answer for the next API or OAuth request: a status and JSON body, or no answer at all. */
export type FakeAnswer = { status: number; body: Record<string, unknown> } | { hang: true };

/** One request the fake received. */
export interface FakeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

/** One signer as the fake stores it (DocuSign's field names). */
export interface FakeSigner {
  recipientId: string;
  clientUserId: string | undefined;
  name: string;
  email: string;
  routingOrder: string;
  status: "sent" | "delivered" | "completed" | "declined";
  tabs: Record<string, Record<string, string>[]>;
  deliveredDateTime?: string;
  signedDateTime?: string;
  declinedDateTime?: string;
  declinedReason?: string;
}

/** One envelope as the fake stores it. */
export interface FakeEnvelope {
  envelopeId: string;
  status: "sent" | "delivered" | "completed" | "declined" | "voided";
  emailSubject: string;
  documentName: string;
  documentPdf: Buffer;
  signers: FakeSigner[];
  customFields: unknown;
  createdDateTime: string;
  completedDateTime?: string;
  voidedDateTime?: string;
  voidedReason?: string;
}

/** What sendConnect posted and what the receiver answered. */
export interface ConnectDelivery {
  status: number;
  responseBody: string;
  rawBody: string;
  headers: Record<string, string>;
}

/** Options of startDocuSignFake; every field has a default. */
export interface DocuSignFakeOptions {
  accountId?: string;
  userId?: string;
  integrationKey?: string;
  /** PEM of the integration key's public key; default: a fresh pair whose private half is `privateKeyPem`. */
  publicKeyPem?: string;
  /** Connect HMAC keys of the account; sendConnect signs with each of them (one header per key). */
  hmacKeys?: string[];
  /** Lifetime of granted access tokens, in seconds. Default 3600. */
  tokenLifetimeSeconds?: number;
  /** The fake's clock in milliseconds (token and signing URL expiry). Default Date.now. */
  now?: () => number;
}

/** The running fake and its test controls. */
export interface DocuSignFake {
  /** http://127.0.0.1:<port>: both the REST base URI and the OAuth base URI of the fake. */
  baseUri: string;
  accountId: string;
  userId: string;
  integrationKey: string;
  hmacKeys: string[];
  /** PEM (PKCS#8) of the generated private key; undefined when publicKeyPem was given. */
  privateKeyPem: string | undefined;
  /** Credentials for the adapter that reach this fake with the JWT grant. */
  credentials(): {
    accountId: string;
    baseUri: string;
    oauthBaseUri: string;
    integrationKey: string;
    userId: string;
    rsaPrivateKey: string;
    hmacKeys: string[];
  };
  /** Every request received, in order. */
  received: FakeRequest[];
  /** How many access tokens the OAuth endpoint granted. */
  grants(): number;
  /** Adds a ready access token (the credentials' accessToken mode). */
  addAccessToken(token: string): void;
  /** Invalidates every granted token (the next API call answers 401). */
  revokeTokens(): void;
  /** Answers the next requests (API or OAuth, signing pages excepted) with these, in order. */
  failNext(...answers: FakeAnswer[]): void;
  /** The stored envelope, or undefined. */
  envelope(envelopeId: string): FakeEnvelope | undefined;
  /** Marks a signer (by clientUserId) as signed; the envelope completes when every signer has signed. */
  completeSigner(envelopeId: string, key: string): void;
  /** Marks a signer as declined with a reason; the envelope is declined. */
  declineSigner(envelopeId: string, key: string, reason?: string): void;
  /** Makes every recipient view URL handed out so far expired. */
  expireSigningUrls(): void;
  /** The signed PDF the combined document endpoint returns for this envelope. */
  signedPdf(envelopeId: string): Buffer;
  /**
   * POSTs a Connect JSON message (SIM, v2.1) for the envelope to `webhookUrl`, signed with every HMAC key
   * (`X-DocuSign-Signature-1..N`), or with a wrong key when `badSignature`; `recipientKey` adds the
   * signer's recipientId; `generatedDateTime` fixes the time (redeliveries keep it).
   */
  sendConnect(
    webhookUrl: string,
    event: string,
    envelopeId: string,
    options?: {
      badSignature?: boolean;
      recipientKey?: string;
      generatedDateTime?: string;
      retryCount?: number;
    },
  ): Promise<ConnectDelivery>;
  close(): Promise<void>;
}

const REST_PREFIX = "/restapi/v2.1/accounts/";
const JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const SIGNING_URL_LIFETIME_MS = 5 * 60_000;
const MAX_BODY_BYTES = 100 * 1024 * 1024;

const ERRORS = {
  auth: {
    errorCode: "USER_AUTHENTICATION_FAILED",
    message: "One or both of Username and Password are invalid. Invalid access token",
  },
  account: { errorCode: "USER_AUTHORIZATION_FAILED", message: "The user is not authorized for the account." },
  noEnvelope: {
    errorCode: "ENVELOPE_DOES_NOT_EXIST",
    message: "The envelope specified either does not exist or you have no rights to it.",
  },
  badBody: (detail: string) => ({
    errorCode: "INVALID_REQUEST_BODY",
    message: `The request body is missing or improperly formatted. ${detail}`,
  }),
  cannotVoid: {
    errorCode: "ENVELOPE_CANNOT_VOID_INVALID_STATE",
    message: "Only envelopes in the 'Sent' or 'Delivered' states may be voided.",
  },
  unknownRecipient: {
    errorCode: "UNKNOWN_ENVELOPE_RECIPIENT",
    message: "The recipient you have identified is not a valid recipient of the specified envelope.",
  },
  notInSequence: {
    errorCode: "RECIPIENT_NOT_IN_SEQUENCE",
    message: "The token for an out of sequence recipient can not be generated.",
  },
  invalidStatus: { errorCode: "ENVELOPE_INVALID_STATUS", message: "Invalid envelope status." },
  notFound: {
    errorCode: "INVALID_REQUEST_PARAMETER",
    message: "The request contained at least one invalid parameter.",
  },
} as const;

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startDocuSignFake(options: DocuSignFakeOptions = {}): Promise<DocuSignFake> {
  const now = options.now ?? Date.now;
  const accountId = options.accountId ?? "a1b2c3d4-0000-4000-8000-00000000acc1";
  const userId = options.userId ?? "a1b2c3d4-0000-4000-8000-0000000user1";
  const integrationKey = options.integrationKey ?? "a1b2c3d4-0000-4000-8000-00000000ikey";
  const hmacKeys = options.hmacKeys ?? ["fake-connect-hmac-key-one-0123456789abcdef="];
  const tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? 3600;
  let publicKey: KeyObject;
  let privateKeyPem: string | undefined;
  if (options.publicKeyPem) {
    publicKey = createPublicKey(options.publicKeyPem);
  } else {
    const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
    publicKey = pair.publicKey;
    privateKeyPem = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  }

  const tokens = new Map<string, number>();
  const envelopes = new Map<string, FakeEnvelope>();
  const views = new Map<
    string,
    { envelopeId: string; recipientId: string; returnUrl: string; expiresAt: number; used: boolean }
  >();
  const sessions = new Map<
    string,
    { envelopeId: string; recipientId: string; returnUrl: string; done: boolean }
  >();
  const queue: FakeAnswer[] = [];
  const received: FakeRequest[] = [];
  let grantCount = 0;
  let baseUri = "";

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { errorCode: "UNSPECIFIED_ERROR", message: String(error) });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<undefined> {
    const url = new URL(req.url ?? "/", "http://fake.invalid");
    const method = req.method ?? "GET";
    const body = await readBody(req);
    if (url.pathname.startsWith("/Signing/")) return signingPage(method, url, body, res);
    received.push({ method, path: url.pathname + url.search, authorization: req.headers.authorization });
    const queued = queue.shift();
    if (queued) {
      if ("hang" in queued) return;
      return json(res, queued.status, queued.body);
    }
    if (method === "POST" && url.pathname === "/oauth/token") return grant(req, body, res);
    if (!url.pathname.startsWith(REST_PREFIX)) return json(res, 404, ERRORS.notFound);

    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    const expiresAt = bearer === undefined ? undefined : tokens.get(bearer);
    if (expiresAt === undefined || expiresAt <= now()) return json(res, 401, ERRORS.auth);

    const [account, ...rest] = url.pathname.slice(REST_PREFIX.length).split("/");
    if (account !== accountId) return json(res, 401, ERRORS.account);
    const path = rest.join("/");
    if (method === "POST" && path === "envelopes") return createEnvelope(body, res);
    const match = /^envelopes\/([^/]+)(\/.*)?$/.exec(path);
    const envelope = match ? envelopes.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match) return json(res, 404, ERRORS.notFound);
    if (!envelope) return json(res, 400, ERRORS.noEnvelope);
    const tail = match[2] ?? "";
    if (method === "GET" && tail === "")
      return json(res, 200, envelopeJson(envelope, url.searchParams.get("include")));
    if (method === "GET" && tail === "/recipients") return json(res, 200, recipientsJson(envelope));
    if (method === "POST" && tail === "/views/recipient") return recipientView(envelope, body, res);
    if (method === "GET" && tail === "/documents/combined") {
      res.writeHead(200, { "content-type": "application/pdf" }).end(signedPdf(envelope));
      return;
    }
    if (method === "PUT" && tail === "") return updateEnvelope(envelope, body, res);
    return json(res, 404, ERRORS.notFound);
  }

  async function grant(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<undefined> {
    if (!/^application\/x-www-form-urlencoded/.test(req.headers["content-type"] ?? "")) {
      return json(res, 400, { error: "invalid_request" });
    }
    const form = new URLSearchParams(body.toString("utf8"));
    if (form.get("grant_type") !== JWT_GRANT) return json(res, 400, { error: "unsupported_grant_type" });
    const assertion = form.get("assertion") ?? "";
    try {
      const { payload } = await jwtVerify(assertion, publicKey, {
        algorithms: ["RS256"],
        issuer: integrationKey,
        subject: userId,
        audience: new URL(baseUri).host,
        currentDate: new Date(now()),
      });
      if (
        typeof payload.iat !== "number" ||
        typeof payload.exp !== "number" ||
        payload.exp - payload.iat > 3600
      ) {
        return json(res, 400, { error: "invalid_grant", error_description: "invalid_lifetime" });
      }
      const scopes = String(payload.scope ?? "").split(" ");
      if (!scopes.includes("signature") || !scopes.includes("impersonation")) {
        return json(res, 400, { error: "consent_required" });
      }
    } catch {
      return json(res, 400, { error: "invalid_grant", error_description: "no_valid_keys_or_signatures" });
    }
    grantCount += 1;
    const token = `fake-token-${randomUUID()}`;
    tokens.set(token, now() + tokenLifetimeSeconds * 1000);
    return json(res, 200, { access_token: token, token_type: "Bearer", expires_in: tokenLifetimeSeconds });
  }

  function createEnvelope(body: Buffer, res: ServerResponse): undefined {
    const request = parseJson(body);
    if (!request) return json(res, 400, ERRORS.badBody("Not JSON."));
    const documents = request.documents as Record<string, unknown>[] | undefined;
    const document = Array.isArray(documents) && documents.length === 1 ? documents[0] : undefined;
    const pdf =
      typeof document?.documentBase64 === "string"
        ? Buffer.from(document.documentBase64, "base64")
        : undefined;
    if (
      !document ||
      !pdf ||
      pdf.subarray(0, 5).toString("latin1") !== "%PDF-" ||
      document.fileExtension !== "pdf"
    ) {
      return json(res, 400, ERRORS.badBody("A PDF document is required."));
    }
    if (typeof request.emailSubject !== "string" || request.emailSubject.length > 100) {
      return json(res, 400, {
        errorCode: "EMAIL_SUBJECT_REQUIRED",
        message: "An email subject is required.",
      });
    }
    if (request.status !== "sent")
      return json(res, 400, ERRORS.badBody("Only sent envelopes are supported."));
    const signers = (request.recipients as { signers?: unknown } | undefined)?.signers;
    if (!Array.isArray(signers) || signers.length === 0) return json(res, 400, ERRORS.badBody("No signers."));
    const stored: FakeSigner[] = [];
    for (const raw of signers as Record<string, unknown>[]) {
      const { recipientId, clientUserId, name, email, routingOrder, tabs } = raw;
      if (
        typeof recipientId !== "string" ||
        !/^[0-9]+$/.test(recipientId) ||
        typeof name !== "string" ||
        typeof email !== "string" ||
        !/^[^@\s]+@[^@\s]+$/.test(email) ||
        typeof routingOrder !== "string" ||
        !/^[0-9]+$/.test(routingOrder) ||
        (clientUserId !== undefined && (typeof clientUserId !== "string" || clientUserId.length > 100))
      ) {
        return json(res, 400, ERRORS.badBody("A signer is incomplete."));
      }
      if (!validTabs(tabs)) return json(res, 400, { errorCode: "INVALID_TAB", message: "A tab is invalid." });
      stored.push({
        recipientId,
        clientUserId,
        name,
        email,
        routingOrder,
        status: "sent",
        tabs: tabs as Record<string, Record<string, string>[]>,
      });
    }
    const envelope: FakeEnvelope = {
      envelopeId: randomUUID(),
      status: "sent",
      emailSubject: request.emailSubject,
      documentName: String(document.name ?? "document.pdf"),
      documentPdf: pdf,
      signers: stored,
      customFields: request.customFields,
      createdDateTime: new Date(now()).toISOString(),
    };
    envelopes.set(envelope.envelopeId, envelope);
    json(res, 201, {
      envelopeId: envelope.envelopeId,
      uri: `/envelopes/${envelope.envelopeId}`,
      statusDateTime: envelope.createdDateTime,
      status: "sent",
    });
  }

  function recipientView(envelope: FakeEnvelope, body: Buffer, res: ServerResponse): undefined {
    const request = parseJson(body);
    if (
      !request ||
      typeof request.returnUrl !== "string" ||
      typeof request.authenticationMethod !== "string"
    ) {
      return json(res, 400, ERRORS.badBody("returnUrl and authenticationMethod are required."));
    }
    const signer = envelope.signers.find(
      (one) =>
        one.clientUserId !== undefined &&
        one.clientUserId === request.clientUserId &&
        one.name === request.userName &&
        one.email === request.email,
    );
    if (!signer) return json(res, 400, ERRORS.unknownRecipient);
    if (envelope.status !== "sent" && envelope.status !== "delivered")
      return json(res, 400, ERRORS.invalidStatus);
    if (Number(signer.routingOrder) > currentRoutingOrder(envelope))
      return json(res, 400, ERRORS.notInSequence);
    const token = randomUUID();
    views.set(token, {
      envelopeId: envelope.envelopeId,
      recipientId: signer.recipientId,
      returnUrl: request.returnUrl,
      expiresAt: now() + SIGNING_URL_LIFETIME_MS,
      used: false,
    });
    json(res, 201, { url: `${baseUri}/Signing/MTRedeem/v1/${token}?slt=${randomUUID()}` });
  }

  function updateEnvelope(envelope: FakeEnvelope, body: Buffer, res: ServerResponse): undefined {
    const request = parseJson(body);
    if (request?.status !== "voided") return json(res, 400, ERRORS.badBody("Only voiding is supported."));
    if (
      typeof request.voidedReason !== "string" ||
      request.voidedReason === "" ||
      request.voidedReason.length > 200
    ) {
      return json(res, 400, { errorCode: "VOIDED_REASON_REQUIRED", message: "A voided reason is required." });
    }
    if (envelope.status !== "sent" && envelope.status !== "delivered")
      return json(res, 400, ERRORS.cannotVoid);
    envelope.status = "voided";
    envelope.voidedReason = request.voidedReason;
    envelope.voidedDateTime = new Date(now()).toISOString();
    json(res, 200, { envelopeId: envelope.envelopeId });
  }

  function signingPage(method: string, url: URL, body: Buffer, res: ServerResponse): undefined {
    const redeem = /^\/Signing\/MTRedeem\/v1\/([^/]+)$/.exec(url.pathname);
    if (method === "GET" && redeem) {
      const view = views.get(redeem[1]!);
      if (!view) return void res.writeHead(404, { "content-type": "text/plain" }).end("Unknown signing link");
      if (view.used || view.expiresAt <= now()) return redirect(res, view.returnUrl, "ttl_expired");
      view.used = true;
      const envelope = envelopes.get(view.envelopeId)!;
      const signer = envelope.signers.find((one) => one.recipientId === view.recipientId)!;
      if (signer.status === "sent") {
        signer.status = "delivered";
        signer.deliveredDateTime = new Date(now()).toISOString();
      }
      if (envelope.status === "sent") envelope.status = "delivered";
      const session = randomUUID();
      sessions.set(session, { ...view, done: false });
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(
          `<!doctype html><title>Fake DocuSign signing</title><h1>${escapeHtml(envelope.documentName)}</h1>` +
            `<p>Signing as ${escapeHtml(signer.name)}</p>` +
            `<form method="post" action="/Signing/session/${session}/finish"><button>Finish</button></form>` +
            `<form method="post" action="/Signing/session/${session}/decline">` +
            `<input name="reason" aria-label="Reason"><button>Decline</button></form>`,
        );
      return;
    }
    const action = /^\/Signing\/session\/([^/]+)\/(finish|decline)$/.exec(url.pathname);
    const session = action ? sessions.get(action[1]!) : undefined;
    if (method !== "POST" || !action || !session || session.done) {
      return void res.writeHead(404, { "content-type": "text/plain" }).end("Unknown signing session");
    }
    session.done = true;
    const envelope = envelopes.get(session.envelopeId)!;
    const signer = envelope.signers.find((one) => one.recipientId === session.recipientId)!;
    if (action[2] === "finish") {
      complete(envelope, signer);
      return redirect(res, session.returnUrl, "signing_complete");
    }
    decline(envelope, signer, new URLSearchParams(body.toString("utf8")).get("reason") ?? "");
    return redirect(res, session.returnUrl, "decline");
  }

  function complete(envelope: FakeEnvelope, signer: FakeSigner): void {
    signer.status = "completed";
    signer.signedDateTime = new Date(now()).toISOString();
    if (envelope.signers.every((one) => one.status === "completed")) {
      envelope.status = "completed";
      envelope.completedDateTime = signer.signedDateTime;
    }
  }

  function decline(envelope: FakeEnvelope, signer: FakeSigner, reason: string): void {
    signer.status = "declined";
    signer.declinedDateTime = new Date(now()).toISOString();
    signer.declinedReason = reason;
    envelope.status = "declined";
  }

  function signerOf(envelopeId: string, key: string): { envelope: FakeEnvelope; signer: FakeSigner } {
    const envelope = envelopes.get(envelopeId);
    const signer = envelope?.signers.find((one) => one.clientUserId === key);
    if (!envelope || !signer) throw new Error(`fake DocuSign: no signer ${key} in envelope ${envelopeId}`);
    return { envelope, signer };
  }

  function signedPdf(envelope: FakeEnvelope): Buffer {
    const signed = envelope.signers.filter((one) => one.status === "completed").map((one) => one.name);
    return minimalPdf([
      `Fake DocuSign envelope ${envelope.envelopeId}`,
      `Signed by: ${signed.join(", ") || "nobody"}`,
    ]);
  }

  function envelopeJson(envelope: FakeEnvelope, include: string | null): Record<string, unknown> {
    return {
      envelopeId: envelope.envelopeId,
      status: envelope.status,
      emailSubject: envelope.emailSubject,
      createdDateTime: envelope.createdDateTime,
      sentDateTime: envelope.createdDateTime,
      statusChangedDateTime: new Date(now()).toISOString(),
      ...(envelope.completedDateTime ? { completedDateTime: envelope.completedDateTime } : {}),
      ...(envelope.voidedReason
        ? { voidedReason: envelope.voidedReason, voidedDateTime: envelope.voidedDateTime }
        : {}),
      ...(include?.split(",").includes("recipients") ? { recipients: recipientsJson(envelope) } : {}),
    };
  }

  function recipientsJson(envelope: FakeEnvelope): Record<string, unknown> {
    return {
      signers: envelope.signers.map(({ tabs: _tabs, ...signer }) => ({
        ...signer,
        recipientIdGuid: randomUUIDFor(envelope.envelopeId, signer.recipientId),
        recipientType: "signer",
      })),
      agents: [],
      editors: [],
      intermediaries: [],
      carbonCopies: [],
      certifiedDeliveries: [],
      inPersonSigners: [],
      seals: [],
      witnesses: [],
      notaries: [],
      recipientCount: String(envelope.signers.length),
      currentRoutingOrder: String(currentRoutingOrder(envelope)),
    };
  }

  async function sendConnect(
    webhookUrl: string,
    event: string,
    envelopeId: string,
    connectOptions: {
      badSignature?: boolean;
      recipientKey?: string;
      generatedDateTime?: string;
      retryCount?: number;
    } = {},
  ): Promise<ConnectDelivery> {
    const envelope = envelopes.get(envelopeId);
    const recipientId =
      connectOptions.recipientKey === undefined
        ? undefined
        : signerOf(envelopeId, connectOptions.recipientKey).signer.recipientId;
    const message = {
      event,
      apiVersion: "v2.1",
      uri: `/restapi/v2.1/accounts/${accountId}/envelopes/${envelopeId}`,
      retryCount: connectOptions.retryCount ?? 0,
      configurationId: 10_501_234,
      generatedDateTime: connectOptions.generatedDateTime ?? new Date(now()).toISOString(),
      data: {
        accountId,
        userId,
        envelopeId,
        ...(recipientId ? { recipientId } : {}),
        ...(envelope
          ? { envelopeSummary: { status: envelope.status, emailSubject: envelope.emailSubject } }
          : {}),
      },
    };
    const rawBody = JSON.stringify(message);
    const keys = connectOptions.badSignature ? ["not-the-connect-key-of-this-account"] : hmacKeys;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-authorization-digest": "HMACSHA256",
      "x-docusign-account-id": accountId,
    };
    keys.forEach((key, index) => {
      headers[`x-docusign-signature-${index + 1}`] = createHmac("sha256", key)
        .update(rawBody, "utf8")
        .digest("base64");
    });
    const response = await fetch(webhookUrl, { method: "POST", headers, body: rawBody });
    return { status: response.status, responseBody: await response.text(), rawBody, headers };
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUri,
    accountId,
    userId,
    integrationKey,
    hmacKeys,
    privateKeyPem,
    credentials() {
      if (privateKeyPem === undefined)
        throw new Error("fake DocuSign: the private key was given by the test");
      return {
        accountId,
        baseUri,
        oauthBaseUri: baseUri,
        integrationKey,
        userId,
        rsaPrivateKey: privateKeyPem,
        hmacKeys,
      };
    },
    received,
    grants: () => grantCount,
    addAccessToken(token) {
      tokens.set(token, Number.MAX_SAFE_INTEGER);
    },
    revokeTokens() {
      tokens.clear();
    },
    failNext(...answers) {
      queue.push(...answers);
    },
    envelope: (envelopeId) => envelopes.get(envelopeId),
    completeSigner(envelopeId, key) {
      const { envelope, signer } = signerOf(envelopeId, key);
      complete(envelope, signer);
    },
    declineSigner(envelopeId, key, reason = "I do not agree.") {
      const { envelope, signer } = signerOf(envelopeId, key);
      decline(envelope, signer, reason);
    },
    expireSigningUrls() {
      for (const view of views.values()) view.expiresAt = Number.MIN_SAFE_INTEGER;
    },
    signedPdf(envelopeId) {
      const envelope = envelopes.get(envelopeId);
      if (!envelope) throw new Error(`fake DocuSign: no envelope ${envelopeId}`);
      return signedPdf(envelope);
    },
    sendConnect,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function currentRoutingOrder(envelope: FakeEnvelope): number {
  const pending = envelope.signers
    .filter((one) => one.status !== "completed")
    .map((one) => Number(one.routingOrder));
  return pending.length === 0 ? 0 : Math.min(...pending);
}

const TAB_GROUPS = new Set(["signHereTabs", "initialHereTabs", "dateSignedTabs", "textTabs", "checkboxTabs"]);

function validTabs(tabs: unknown): boolean {
  if (tabs === undefined) return true;
  if (typeof tabs !== "object" || tabs === null) return false;
  for (const [group, list] of Object.entries(tabs)) {
    if (!TAB_GROUPS.has(group) || !Array.isArray(list)) return false;
    for (const tab of list as Record<string, unknown>[]) {
      for (const field of ["documentId", "pageNumber", "xPosition", "yPosition"]) {
        if (typeof tab[field] !== "string" || !/^[0-9]+$/.test(tab[field] as string)) return false;
      }
      if (Number(tab.pageNumber) < 1) return false;
    }
  }
  return true;
}

function randomUUIDFor(envelopeId: string, recipientId: string): string {
  const hex = createHmac("sha256", envelopeId).update(recipientId).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function redirect(res: ServerResponse, returnUrl: string, event: string): undefined {
  const target = new URL(returnUrl);
  target.searchParams.set("event", event);
  res.writeHead(302, { location: target.toString() }).end();
  return undefined;
}

function json(res: ServerResponse, status: number, body: unknown): undefined {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
  return undefined;
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A one-page PDF (Helvetica text lines) with a correct cross-reference table. */
export function minimalPdf(lines: string[]): Buffer {
  const text = lines
    .map(
      (line, index) =>
        `BT /F1 12 Tf 72 ${720 - index * 18} Td (${line.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET`,
    )
    .join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Length ${Buffer.byteLength(text, "latin1")} >>\nstream\n${text}\nendstream`,
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(pdf, "latin1"));
    pdf += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, "latin1");
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}
