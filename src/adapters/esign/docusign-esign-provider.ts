/**
 * The DocuSign adapter of the esign port: eSignature REST API v2.1 envelopes with embedded signing
 * (recipient views), authenticated by the OAuth JWT grant, completion learned from Connect webhooks
 * (HMAC) and status fetches. Every call goes through the SSRF-guarded HttpClient.
 */
import { createHash, createPrivateKey } from "node:crypto";
import { SignJWT } from "jose";
import {
  type HttpClient,
  type HttpFullResult,
  OutboundBlockedError,
  OutboundError,
} from "../http-client/http-client.js";
import { verifyConnectMessage } from "./docusign-connect.js";
import {
  type DocuSignCredentials,
  DocuSignCredentialsSchema,
  validateDocuSignCredentials,
} from "./docusign-credentials.js";
import {
  type CreateEnvelopeInput,
  type EnvelopeInput,
  type EnvelopeState,
  type EnvelopeStatus,
  type EsignField,
  type EsignProvider,
  ProviderRejectedError,
  ProviderUnavailableError,
  type SignerStatus,
  type SigningReturnHint,
  type SigningUrl,
  type SigningUrlInput,
  type WebhookInput,
  type WebhookVerification,
} from "./esign-provider.js";

/** Settings of the DocuSign adapter (not per account: those are the credentials). */
export interface DocuSignProviderOptions {
  /** The SSRF-guarded client every call goes through. */
  http: HttpClient;
  /** Current time; replaceable in tests. Default: the system clock. */
  now?: () => Date;
  /** Time limit of each API call, in milliseconds. Default 20 000. */
  timeoutMs?: number;
  /** Time limit of the calls that carry a whole PDF (envelope creation, signed PDF download), in ms. Default 120 000. */
  transferTimeoutMs?: number;
  /** Largest signed PDF accepted, in bytes. Default 64 MiB. */
  maxPdfBytes?: number;
  /** OAuth hosts whose connections count as test mode. Default ["account-d.docusign.com"]. */
  testOAuthHosts?: readonly string[];
  /** Accept http:// base URIs (development and tests against a local fake). Default false. */
  allowInsecureHttp?: boolean;
}

const PROVIDER = "docusign" as const;
const JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const JWT_LIFETIME_SECONDS = 3600;
// A token this close to its end is not used: the call it authenticates may outlive it.
const TOKEN_MARGIN_MS = 60_000;
const TOKEN_CACHE_LIMIT = 1000;
// DocuSign: "The returned URL can be used only once and expires after 5 minutes."
const SIGNING_URL_LIFETIME_MS = 5 * 60_000;
const SAFE_VENDOR_CODE = /^[A-Za-z0-9_]{1,64}$/;
const DOCUMENT_ID = "1";

const NOT_FOUND_CODES = new Set([
  "ENVELOPE_DOES_NOT_EXIST",
  "ENVELOPE_NOT_FOUND",
  "UNKNOWN_ENVELOPE_RECIPIENT",
]);
const STATE_CONFLICT_CODES = new Set([
  "ENVELOPE_CANNOT_VOID_INVALID_STATE",
  "ENVELOPE_INVALID_STATUS",
  "RECIPIENT_NOT_IN_SEQUENCE",
  "ENVELOPE_IS_INCOMPLETE",
]);

interface CachedToken {
  token: string;
  expiresAtMs: number;
}

/** Builds the DocuSign adapter; one instance serves every connection (tokens are cached per connection). */
export function createDocuSignEsignProvider(
  options: DocuSignProviderOptions,
): EsignProvider<DocuSignCredentials> {
  return new DocuSignEsignProvider(options);
}

class DocuSignEsignProvider implements EsignProvider<DocuSignCredentials> {
  readonly name = PROVIDER;
  readonly credentialsSchema = DocuSignCredentialsSchema;
  readonly #http: HttpClient;
  readonly #now: () => Date;
  readonly #timeoutMs: number;
  readonly #transferTimeoutMs: number;
  readonly #maxPdfBytes: number;
  readonly #testOAuthHosts: ReadonlySet<string>;
  readonly #allowInsecureHttp: boolean;
  readonly #tokens = new Map<string, CachedToken>();
  readonly #grants = new Map<string, Promise<CachedToken>>();

  constructor(options: DocuSignProviderOptions) {
    this.#http = options.http;
    this.#now = options.now ?? (() => new Date());
    this.#timeoutMs = options.timeoutMs ?? 20_000;
    this.#transferTimeoutMs = options.transferTimeoutMs ?? 120_000;
    this.#maxPdfBytes = options.maxPdfBytes ?? 64 * 1024 * 1024;
    this.#testOAuthHosts = new Set((options.testOAuthHosts ?? ["account-d.docusign.com"]).map(lower));
    this.#allowInsecureHttp = options.allowInsecureHttp ?? false;
  }

  validateCredentials(value: unknown) {
    return validateDocuSignCredentials(value, { allowHttp: this.#allowInsecureHttp });
  }

  isTestMode(credentials: DocuSignCredentials): boolean {
    return this.#testOAuthHosts.has(lower(new URL(credentials.oauthBaseUri).host));
  }

  async createEnvelope(input: CreateEnvelopeInput<DocuSignCredentials>): Promise<{ envelopeId: string }> {
    checkEnvelopeInput(input);
    const signers = input.signers.map((signer, index) => ({
      recipientId: String(index + 1),
      clientUserId: signer.key,
      name: signer.name,
      email: signer.email,
      routingOrder: String(signer.routingOrder),
      tabs: tabsOf(signer.key, signer.fields),
    }));
    const body = {
      emailSubject: truncate(`Please sign: ${input.documentName}`, 100),
      documents: [
        {
          documentId: DOCUMENT_ID,
          name: truncate(input.documentName, 100),
          fileExtension: "pdf",
          documentBase64: Buffer.from(input.documentPdf).toString("base64"),
        },
      ],
      recipients: { signers },
      customFields: {
        textCustomFields: [
          { name: "ferry_envelope_key", value: input.envelopeKey, show: "false", required: "false" },
        ],
      },
      status: "sent",
    };
    const answer = await this.#api(input.credentials, "POST", "/envelopes", {
      body,
      timeoutMs: this.#transferTimeoutMs,
    });
    const envelopeId = readJson(answer).envelopeId;
    if (typeof envelopeId !== "string" || !/^[A-Za-z0-9-]{1,100}$/.test(envelopeId)) {
      throw unexpected("the envelope answer had no envelope id");
    }
    return { envelopeId };
  }

  async signingUrl(input: SigningUrlInput<DocuSignCredentials>): Promise<SigningUrl> {
    const requestedAt = this.#now().getTime();
    const answer = await this.#api(
      input.credentials,
      "POST",
      `/envelopes/${encodeURIComponent(input.envelopeId)}/views/recipient`,
      {
        body: {
          returnUrl: input.returnUrl,
          // Ferry authenticated the signer (link, two-factor code); DocuSign records it on its certificate.
          authenticationMethod: "none",
          userName: input.name,
          email: input.email,
          clientUserId: input.signerKey,
        },
      },
    );
    const url = readJson(answer).url;
    if (typeof url !== "string" || !/^https?:\/\//.test(url))
      throw unexpected("the recipient view had no URL");
    return { url, expiresAt: new Date(requestedAt + SIGNING_URL_LIFETIME_MS) };
  }

  async fetchStatus(input: EnvelopeInput<DocuSignCredentials>): Promise<EnvelopeState> {
    const answer = await this.#api(
      input.credentials,
      "GET",
      `/envelopes/${encodeURIComponent(input.envelopeId)}?include=recipients`,
    );
    const envelope = readJson(answer);
    const recipients = envelope.recipients as { signers?: unknown } | undefined;
    const signers = Array.isArray(recipients?.signers) ? recipients.signers : [];
    const state: EnvelopeState = {
      status: envelopeStatus(envelope.status),
      signers: signers.flatMap((signer) => signerStatus(signer as Record<string, unknown>)),
    };
    const completedAt = dateOf(envelope.completedDateTime);
    if (state.status === "completed" && completedAt) state.completedAt = completedAt;
    if (state.status === "voided" && typeof envelope.voidedReason === "string") {
      state.voidedReason = envelope.voidedReason;
    }
    return state;
  }

  async fetchSignedPdf(input: EnvelopeInput<DocuSignCredentials>): Promise<Uint8Array> {
    const answer = await this.#api(
      input.credentials,
      "GET",
      `/envelopes/${encodeURIComponent(input.envelopeId)}/documents/combined`,
      { accept: "application/pdf", maxResponseBytes: this.#maxPdfBytes, timeoutMs: this.#transferTimeoutMs },
    );
    if (answer.body.subarray(0, 5).toString("latin1") !== "%PDF-")
      throw unexpected("the document was not a PDF");
    return new Uint8Array(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
  }

  async voidEnvelope(input: EnvelopeInput<DocuSignCredentials> & { reason: string }): Promise<void> {
    await this.#api(input.credentials, "PUT", `/envelopes/${encodeURIComponent(input.envelopeId)}`, {
      body: { status: "voided", voidedReason: truncate(input.reason, 200) },
    });
  }

  verifyWebhook(input: WebhookInput<DocuSignCredentials>): WebhookVerification {
    return verifyConnectMessage(
      input.rawBody,
      input.headers,
      input.credentials.hmacKeys,
      input.credentials.accountId,
    );
  }

  describeReturn(query: Record<string, unknown>): SigningReturnHint {
    switch (query.event) {
      case "signing_complete":
        return "finished";
      case "decline":
        return "declined";
      case "cancel":
        return "canceled";
      case "ttl_expired":
      case "session_timeout":
        return "expired";
      case "exception":
      case "id_check_failed":
      case "access_code_failed":
      case "fax_pending":
        return "failed";
      default:
        return "unknown";
    }
  }

  /**
   * One eSignature REST call under the account's base. A 401 with a cached JWT-grant token drops the token
   * and retries once with a fresh one (revoked or rotated tokens); every other failure is mapped.
   */
  async #api(
    credentials: DocuSignCredentials,
    method: "GET" | "POST" | "PUT",
    path: string,
    options: { body?: unknown; accept?: string; maxResponseBytes?: number; timeoutMs?: number } = {},
  ): Promise<HttpFullResult> {
    const url = `${origin(credentials.baseUri)}/restapi/v2.1/accounts/${encodeURIComponent(credentials.accountId)}${path}`;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    for (let attempt = 1; ; attempt += 1) {
      const token = await this.#accessToken(credentials);
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        accept: options.accept ?? "application/json",
      };
      if (body !== undefined) headers["content-type"] = "application/json";
      const answer = await this.#send(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        timeoutMs: options.timeoutMs ?? this.#timeoutMs,
        maxResponseBytes: options.maxResponseBytes ?? 1024 * 1024,
      });
      if (answer.status >= 200 && answer.status < 300) return answer;
      if (answer.status === 401 && credentials.rsaPrivateKey !== undefined && attempt === 1) {
        this.#tokens.delete(tokenKey(credentials));
        continue;
      }
      throw apiFailure(answer);
    }
  }

  async #send(url: string, init: Parameters<HttpClient["request"]>[1]): Promise<HttpFullResult> {
    // Credentials saved before a deployment stopped allowing http are refused here too.
    if (!this.#allowInsecureHttp && !url.startsWith("https://")) {
      throw new ProviderRejectedError(
        "blocked_destination",
        PROVIDER,
        "This connection's DocuSign address must use https.",
      );
    }
    try {
      return await this.#http.request(url, init);
    } catch (error) {
      throw outboundFailure(error);
    }
  }

  /** The access token: the given one, or a cached JWT-grant token, granted anew near its expiry. */
  async #accessToken(credentials: DocuSignCredentials): Promise<string> {
    if (credentials.rsaPrivateKey === undefined) return credentials.accessToken ?? "";
    const key = tokenKey(credentials);
    const cached = this.#tokens.get(key);
    if (cached && cached.expiresAtMs - TOKEN_MARGIN_MS > this.#now().getTime()) return cached.token;
    // Concurrent calls of one connection share one grant.
    let grant = this.#grants.get(key);
    if (grant === undefined) {
      grant = this.#grant(credentials).finally(() => this.#grants.delete(key));
      this.#grants.set(key, grant);
    }
    const fresh = await grant;
    if (this.#tokens.size >= TOKEN_CACHE_LIMIT) this.#tokens.delete(this.#tokens.keys().next().value!);
    this.#tokens.set(key, fresh);
    return fresh.token;
  }

  /** POST /oauth/token with an RS256 assertion (iss integration key, sub user, aud the OAuth host). */
  async #grant(credentials: DocuSignCredentials): Promise<CachedToken> {
    const issuedAt = Math.floor(this.#now().getTime() / 1000);
    let assertion: string;
    try {
      assertion = await new SignJWT({ scope: "signature impersonation" })
        .setProtectedHeader({ alg: "RS256", typ: "JWT" })
        .setIssuer(credentials.integrationKey)
        .setSubject(credentials.userId)
        .setAudience(new URL(credentials.oauthBaseUri).host)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + JWT_LIFETIME_SECONDS)
        .sign(createPrivateKey(credentials.rsaPrivateKey!));
    } catch (error) {
      throw new ProviderRejectedError(
        "auth_failed",
        PROVIDER,
        "The DocuSign RSA private key of this connection cannot sign.",
        undefined,
        { cause: error },
      );
    }
    const answer = await this.#send(`${origin(credentials.oauthBaseUri)}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ grant_type: JWT_GRANT, assertion }).toString(),
      timeoutMs: this.#timeoutMs,
      maxResponseBytes: 64 * 1024,
    });
    if (answer.status >= 500 || answer.status === 429) {
      throw new ProviderUnavailableError(
        PROVIDER,
        `DocuSign's authentication service answered ${answer.status}.`,
      );
    }
    const json = readJsonLoose(answer);
    if (answer.status !== 200) {
      const code =
        typeof json.error === "string" && SAFE_VENDOR_CODE.test(json.error) ? json.error : undefined;
      const detail =
        code === "consent_required"
          ? "The DocuSign user has not consented to this integration key yet (consent_required)."
          : `DocuSign refused the JWT grant${code ? ` (${code})` : ""}: check the integration key, user ID and RSA key.`;
      throw new ProviderRejectedError("auth_failed", PROVIDER, detail, code);
    }
    const { access_token: token, expires_in: expiresIn } = json;
    if (typeof token !== "string" || token === "" || typeof expiresIn !== "number" || expiresIn <= 0) {
      throw unexpected("the token answer had no access token");
    }
    return { token, expiresAtMs: this.#now().getTime() + expiresIn * 1000 };
  }
}

/** Refuses input DocuSign would refuse less clearly (or accept wrongly), before anything is sent. */
function checkEnvelopeInput(input: CreateEnvelopeInput<DocuSignCredentials>): void {
  const refuse = (detail: string): never => {
    throw new ProviderRejectedError("invalid_request", PROVIDER, detail);
  };
  if (input.signers.length === 0 || input.signers.length > 100) refuse("An envelope needs 1 to 100 signers.");
  const keys = new Set(input.signers.map((signer) => signer.key));
  if (keys.size !== input.signers.length) refuse("Two signers have the same key.");
  if (input.documentPdf.byteLength === 0) refuse("The document is empty.");
  for (const signer of input.signers) {
    if (signer.key.length === 0 || signer.key.length > 100)
      refuse("A signer key must have 1 to 100 characters.");
    if (!Number.isInteger(signer.routingOrder) || signer.routingOrder < 1 || signer.routingOrder > 999) {
      refuse("A signer's routing order must be an integer from 1 to 999.");
    }
    for (const field of signer.fields) {
      const numbers = [field.x, field.y, field.width, field.height];
      if (
        !Number.isInteger(field.page) ||
        field.page < 1 ||
        numbers.some((n) => !Number.isFinite(n) || n < 0)
      ) {
        refuse("A field has a page below 1 or a negative or non-finite position or size.");
      }
    }
  }
}

/** The DocuSign tabs of one signer's fields, positioned in points (DocuSign's unit: 1/72 inch, top-left). */
function tabsOf(signerKey: string, fields: EsignField[]): Record<string, Record<string, string>[]> {
  const tabs: Record<string, Record<string, string>[]> = {};
  fields.forEach((field, index) => {
    const base: Record<string, string> = {
      documentId: DOCUMENT_ID,
      pageNumber: String(field.page),
      xPosition: String(Math.round(field.x)),
      yPosition: String(Math.round(field.y)),
      tabLabel: truncate(`${signerKey}_${field.type}_${index + 1}`, 100),
    };
    const sized = {
      ...base,
      width: String(Math.round(field.width)),
      height: String(Math.round(field.height)),
    };
    const [group, tab] = ((): [string, Record<string, string>] => {
      switch (field.type) {
        case "signature":
          return ["signHereTabs", base];
        case "initials":
          return ["initialHereTabs", base];
        case "date":
          return ["dateSignedTabs", sized];
        case "text":
          return ["textTabs", { ...sized, required: "true" }];
        case "checkbox":
          return ["checkboxTabs", base];
      }
    })();
    const list = tabs[group] ?? [];
    list.push(tab);
    tabs[group] = list;
  });
  return tabs;
}

function envelopeStatus(value: unknown): EnvelopeStatus {
  switch (value) {
    case "completed":
      return "completed";
    case "declined":
      return "declined";
    case "voided":
    case "deleted":
      return "voided";
    // "signed": every signer signed but DocuSign has not finished the envelope; its PDF is not final yet.
    case "delivered":
    case "signed":
      return "delivered";
    case "created":
    case "sent":
      return "sent";
    default:
      throw unexpected("the envelope had an unknown status");
  }
}

function signerStatus(signer: Record<string, unknown>): SignerStatus[] {
  if (typeof signer.clientUserId !== "string") return [];
  const status: SignerStatus["status"] =
    signer.status === "completed" || signer.status === "signed"
      ? "signed"
      : signer.status === "declined"
        ? "declined"
        : signer.status === "delivered"
          ? "delivered"
          : "sent";
  const result: SignerStatus = { key: signer.clientUserId, status };
  const signedAt = dateOf(signer.signedDateTime);
  if (status === "signed" && signedAt) result.signedAt = signedAt;
  const declinedAt = dateOf(signer.declinedDateTime);
  if (status === "declined" && declinedAt) result.declinedAt = declinedAt;
  if (status === "declined" && typeof signer.declinedReason === "string") {
    result.declinedReason = signer.declinedReason.slice(0, 2000);
  }
  return [result];
}

function apiFailure(answer: HttpFullResult): Error {
  if (answer.status >= 500 || answer.status === 429) {
    return new ProviderUnavailableError(PROVIDER, `DocuSign answered ${answer.status}; try again later.`);
  }
  const json = readJsonLoose(answer);
  const code =
    typeof json.errorCode === "string" && SAFE_VENDOR_CODE.test(json.errorCode) ? json.errorCode : undefined;
  const label = code ? ` (${code})` : "";
  if (answer.status === 401 || answer.status === 403 || code === "USER_AUTHENTICATION_FAILED") {
    return new ProviderRejectedError(
      "auth_failed",
      PROVIDER,
      `DocuSign refused this connection's credentials${label}.`,
      code,
    );
  }
  if (answer.status === 404 || (code && NOT_FOUND_CODES.has(code))) {
    return new ProviderRejectedError(
      "not_found",
      PROVIDER,
      `DocuSign does not know this envelope${label}.`,
      code,
    );
  }
  if (code && STATE_CONFLICT_CODES.has(code)) {
    return new ProviderRejectedError(
      "state_conflict",
      PROVIDER,
      `The DocuSign envelope's state does not allow this${label}.`,
      code,
    );
  }
  return new ProviderRejectedError(
    "invalid_request",
    PROVIDER,
    `DocuSign refused the request${label}.`,
    code,
  );
}

function outboundFailure(error: unknown): Error {
  if (error instanceof OutboundBlockedError) {
    return new ProviderRejectedError(
      "blocked_destination",
      PROVIDER,
      "This connection's DocuSign address is not allowed (it must be a public https address).",
      undefined,
      { cause: error },
    );
  }
  if (error instanceof OutboundError) {
    return new ProviderUnavailableError(
      PROVIDER,
      `DocuSign could not be reached (${error.kind}).`,
      undefined,
      {
        cause: error,
      },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

function unexpected(what: string): ProviderUnavailableError {
  return new ProviderUnavailableError(PROVIDER, `DocuSign gave an unexpected answer: ${what}.`);
}

function readJson(answer: HttpFullResult): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(answer.body.toString("utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw unexpected("the answer was not a JSON object");
}

function readJsonLoose(answer: HttpFullResult): Record<string, unknown> {
  try {
    return readJson(answer);
  } catch {
    return {};
  }
}

function dateOf(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Cache key of a connection's token: the grant's inputs, the key hashed so it is not kept twice. */
function tokenKey(credentials: DocuSignCredentials): string {
  return createHash("sha256")
    .update(
      JSON.stringify([
        credentials.oauthBaseUri,
        credentials.integrationKey,
        credentials.userId,
        credentials.rsaPrivateKey ?? "",
      ]),
    )
    .digest("hex");
}

function origin(uri: string): string {
  return uri.replace(/\/+$/, "");
}

function truncate(text: string, max: number): string {
  return [...text].slice(0, max).join("");
}

function lower(text: string): string {
  return text.toLowerCase();
}
