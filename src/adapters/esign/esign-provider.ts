/**
 * The esign provider port: how Ferry's esign kind talks to a third-party signing service. Types and
 * errors only; implementations import this file, and only esign-providers.ts imports implementations.
 *
 * Lifecycle: createEnvelope when the feature starts; signingUrl each time the recipient clicks (the URL is
 * single use and short-lived, so it is never stored or emailed); fetchStatus after every verified webhook
 * and by the periodic reconciliation (a webhook is a trigger, the fetched status is the truth; the return
 * URL never completes anything); fetchSignedPdf once the envelope is completed; voidEnvelope when the
 * owner voids. Every call takes the connection's decrypted credentials, so one provider instance serves
 * every account.
 */
import type { TSchema } from "typebox";
import { AppError, type ErrorCode } from "../../shared/errors.js";

/** Every esign provider name. `local` is Ferry's own signing step (the esign kind), not an adapter here. */
export const ESIGN_PROVIDER_NAMES = ["local", "docusign"] as const;

/** A provider name an account may choose for the esign kind. */
export type EsignProviderName = (typeof ESIGN_PROVIDER_NAMES)[number];

/** A provider name implemented by an adapter of this folder (a third-party service). */
export type ExternalEsignProviderName = Exclude<EsignProviderName, "local">;

/** The kinds of field a signer fills. */
export type EsignFieldType = "signature" | "initials" | "date" | "text" | "checkbox";

/**
 * One field box, in PDF points (1/72 inch) measured from the top-left corner of the page, y growing
 * downward (the convention of the page viewer's overlays). `page` is 1-based.
 */
export interface EsignField {
  type: EsignFieldType;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One signer of an envelope. `key` is Ferry's stable id of the signer (1-100 characters). */
export interface EsignSigner {
  key: string;
  name: string;
  email: string;
  /** 1 signs first; equal orders sign in parallel. */
  routingOrder: number;
  fields: EsignField[];
}

/** What createEnvelope sends. */
export interface CreateEnvelopeInput<Credentials> {
  credentials: Credentials;
  documentPdf: Uint8Array;
  /** File name shown to signers, e.g. "Lease.pdf". */
  documentName: string;
  signers: EsignSigner[];
  /** Ferry's id of the feature, recorded on the envelope so that it can be traced back. */
  envelopeKey: string;
}

/** What signingUrl needs: the signer as it was named in createEnvelope. */
export interface SigningUrlInput<Credentials> {
  credentials: Credentials;
  envelopeId: string;
  signerKey: string;
  name: string;
  email: string;
  /** Where the provider sends the signer's browser afterwards (never trusted for the outcome). */
  returnUrl: string;
}

/** A signing URL: use it at once (redirect), never store it. */
export interface SigningUrl {
  url: string;
  /** When the provider stops honouring it (single use in any case). */
  expiresAt: Date;
}

/** Addresses one envelope. */
export interface EnvelopeInput<Credentials> {
  credentials: Credentials;
  envelopeId: string;
}

/** The envelope's state: `completed` means every signer signed and the signed PDF is final. */
export type EnvelopeStatus = "sent" | "delivered" | "completed" | "declined" | "voided";

/** One signer's state. */
export interface SignerStatus {
  key: string;
  status: "sent" | "delivered" | "signed" | "declined";
  signedAt?: Date;
  declinedAt?: Date;
  /** The signer's own words; show it to the owner only. */
  declinedReason?: string;
}

/** The authoritative state of an envelope (what reconciliation compares). */
export interface EnvelopeState {
  status: EnvelopeStatus;
  signers: SignerStatus[];
  completedAt?: Date;
  voidedReason?: string;
}

/** A webhook as received: raw body bytes (verified before parsing) and headers (lower-case names). */
export interface WebhookInput<Credentials> {
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
  credentials: Credentials;
}

/** The neutral meaning of a provider event; the job then fetches the status. */
export type EsignEventKind =
  | "envelope_sent"
  | "envelope_delivered"
  | "envelope_completed"
  | "envelope_declined"
  | "envelope_voided"
  | "signer_delivered"
  | "signer_completed"
  | "signer_declined"
  | "other";

/** A verified provider event. `eventId` is stable across the provider's redeliveries (the inbox key). */
export interface EsignEvent {
  eventId: string;
  envelopeId: string;
  kind: EsignEventKind;
  /** The provider's own event name (for the audit), e.g. "envelope-completed". */
  vendorEvent: string;
  occurredAt?: Date;
}

/** Why a webhook was refused (answer 401; never process it). */
export type WebhookRefusal = "missing_signature" | "bad_signature" | "malformed" | "wrong_account";

/** The outcome of verifyWebhook. */
export type WebhookVerification = { ok: true; event: EsignEvent } | { ok: false; reason: WebhookRefusal };

/** What the provider says happened when it sends the signer back to returnUrl: a display hint only. */
export type SigningReturnHint = "finished" | "declined" | "canceled" | "expired" | "failed" | "unknown";

/** Result of validating credentials before they are sealed and saved. */
export type CredentialsValidation<Credentials> =
  | { ok: true; credentials: Credentials }
  | { ok: false; errors: Record<string, string[]> };

/**
 * A third-party esign provider. Every method but verifyWebhook, validateCredentials and
 * describeReturn calls the provider and rejects only with EsignProviderError subclasses.
 */
export interface EsignProvider<Credentials = unknown> {
  readonly name: ExternalEsignProviderName;
  /** The JSON shape of this provider's connection credentials (strict; secrets included). */
  readonly credentialsSchema: TSchema;
  /** Checks credentials against credentialsSchema and the provider's own rules; calls nobody. */
  validateCredentials(value: unknown): CredentialsValidation<Credentials>;
  /** True when the credentials point at the provider's test environment (allowed for sandbox accounts). */
  isTestMode(credentials: Credentials): boolean;
  /** Creates and sends an envelope for embedded signing; resolves with the provider's envelope id. */
  createEnvelope(input: CreateEnvelopeInput<Credentials>): Promise<{ envelopeId: string }>;
  /** Requests a fresh signing URL for one signer, at the moment the signer clicks. */
  signingUrl(input: SigningUrlInput<Credentials>): Promise<SigningUrl>;
  /** Reads the envelope's current state from the provider. */
  fetchStatus(input: EnvelopeInput<Credentials>): Promise<EnvelopeState>;
  /** Downloads the signed PDF (all documents combined, with the provider's certificate). */
  fetchSignedPdf(input: EnvelopeInput<Credentials>): Promise<Uint8Array>;
  /** Voids an envelope that is not completed; `reason` is shown to signers (at most 200 characters). */
  voidEnvelope(input: EnvelopeInput<Credentials> & { reason: string }): Promise<void>;
  /** Verifies a webhook's signature over the raw body, then parses it. Constant-time; calls nobody. */
  verifyWebhook(input: WebhookInput<Credentials>): WebhookVerification;
  /** Reads the provider's query parameters on returnUrl; never a reason to change the feature's state. */
  describeReturn(query: Record<string, unknown>): SigningReturnHint;
}

/** Why a provider call failed, in the provider-neutral terms jobs and routes act on. */
export type EsignProviderErrorCode =
  | "unavailable"
  | "invalid_request"
  | "auth_failed"
  | "not_found"
  | "state_conflict"
  | "blocked_destination"
  | "signing_url_expired";

/**
 * Base of every error a provider call rejects with. An AppError, so a route may let it through: `detail`
 * is safe to show (no vendor message, no secrets); `vendorCode` is the vendor's error code for logs.
 */
export abstract class EsignProviderError extends AppError {
  abstract readonly reason: EsignProviderErrorCode;
  /** True when the same call may succeed later (jobs retry only these). */
  abstract readonly retryable: boolean;

  constructor(
    code: ErrorCode,
    detail: string,
    readonly provider: EsignProviderName,
    readonly vendorCode?: string,
    options?: { cause?: unknown },
  ) {
    super(code, detail);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The provider did not answer usefully (timeout, network, 5xx, 429, an unexpected answer): 503, retryable. */
export class ProviderUnavailableError extends EsignProviderError {
  override readonly name = "ProviderUnavailableError";
  readonly reason = "unavailable" as const;
  readonly retryable = true;

  constructor(
    provider: EsignProviderName,
    detail: string,
    vendorCode?: string,
    options?: { cause?: unknown },
  ) {
    super("SERVICE_UNAVAILABLE", detail, provider, vendorCode, options);
  }
}

/**
 * The provider refused the call: bad input (422), credentials or consent (422), an unknown envelope (404),
 * a state that forbids it (409), or a destination the SSRF guard refuses (422). Not retryable.
 */
export class ProviderRejectedError extends EsignProviderError {
  override readonly name = "ProviderRejectedError";
  readonly retryable = false;

  constructor(
    readonly reason: Exclude<EsignProviderErrorCode, "unavailable" | "signing_url_expired">,
    provider: EsignProviderName,
    detail: string,
    vendorCode?: string,
    options?: { cause?: unknown },
  ) {
    super(REJECTION_STATUS[reason], detail, provider, vendorCode, options);
  }
}

const REJECTION_STATUS: Record<
  Exclude<EsignProviderErrorCode, "unavailable" | "signing_url_expired">,
  ErrorCode
> = {
  invalid_request: "UNPROCESSABLE_ENTITY",
  auth_failed: "UNPROCESSABLE_ENTITY",
  not_found: "RESOURCE_NOT_FOUND",
  state_conflict: "CONFLICT",
  blocked_destination: "UNPROCESSABLE_ENTITY",
};

/**
 * A signing URL was used after it expired or a second time (the provider's return said so): 410. The
 * recipient gets a fresh one by opening the step again; thrown by the esign kind from describeReturn's
 * "expired" hint.
 */
export class SigningUrlExpiredError extends EsignProviderError {
  override readonly name = "SigningUrlExpiredError";
  readonly reason = "signing_url_expired" as const;
  readonly retryable = false;

  constructor(provider: EsignProviderName) {
    super("GONE", "The signing link has expired. Open the signing step again to get a new one.", provider);
  }
}
