/**
 * The provider port every enrichment kind shares (ADR 0063): types and errors only. A kind's own port
 * (`src/adapters/<kind>/`) extends `EnrichmentProvider` with its verbs; implementations import the
 * port, never the reverse, and only a kind's provider map imports implementations.
 */

/** What a started provider step asks the recipient's browser to do next. */
export type NextStep =
  | { type: "redirect"; url: string }
  | { type: "embed"; token: string }
  | { type: "none" };

/**
 * A vendor's answer reduced to what Ferry applies: the kind's status, whether it is final (the feature
 * then completes, or stays pending), and the result to keep (sealed when the kind says it is sensitive).
 */
export interface NeutralOutcome {
  status: string;
  final: boolean;
  result?: Record<string, unknown> | undefined;
}

/** One webhook event after verification: its vendor id (the inbox key) and the step it concerns. */
export interface WebhookEvent {
  eventId: string;
  /** The provider's reference of the step (what `start` returned), or undefined for unrelated events. */
  ref: string | undefined;
  outcome: NeutralOutcome | undefined;
}

/** The raw webhook as it arrived: headers (lower-case names) and the body's exact bytes. */
export interface RawWebhook {
  headers: Record<string, string | undefined>;
  body: Buffer;
  /** The public URL the provider posted to (some schemes sign it). */
  url: string;
}

/** What a provider is built with: the account connection's mode and its opened settings. */
export interface ProviderSettings {
  mode: "test" | "live";
  /** The connection's settings as saved (validated by the provider's schema); {} for `local`. */
  credentials: Record<string, unknown>;
  /** The connection's webhook secret (local providers sign their simulated events with it). */
  webhookSecret: string;
  /** Ferry's public base URL (for return and webhook URLs). */
  publicBaseUrl: string;
  /**
   * The deployment lets provider calls reach loopback and private addresses over plain http
   * (development and tests against local fakes only; `ENRICHMENT_PROVIDERS_ALLOW_PRIVATE`).
   */
  allowPrivateAddresses?: boolean;
}

/** A file a kind hands to its provider when the step starts (a document to sign). */
export interface StartFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** A recipient of the step's container, as providers name people (signers, applicants). */
export interface StartPerson {
  id: number;
  name: string;
}

/** The input of `start`: the feature, what the owner gave, who the recipient is, where to come back. */
export interface StartInput {
  featureId: number;
  payload: Record<string, unknown>;
  recipient: { id: number; name: string; email: string | null };
  returnUrl: string;
  /** Every recipient of the container (a provider naming several people needs them all). */
  people: StartPerson[];
  /** Files the kind read for the start (media objects: the document to sign). */
  files: StartFile[];
}

/** The lifecycle every provider of every kind implements. */
export interface EnrichmentProvider {
  /** The provider id (`local`, `docusign`, ...), as in webhook URLs and connections. */
  readonly id: string;
  /** Starts the step at the vendor; the reference is stored, the next step is never stored. */
  start(input: StartInput): Promise<{ ref: string; next: NextStep }>;
  /** The polling fallback of missed webhooks (the reconciliation job). */
  status(ref: string): Promise<NeutralOutcome>;
  /** Cancels the step at the vendor (voiding, deleting a pending feature). */
  cancel(ref: string): Promise<void>;
  /**
   * Verifies a webhook with the vendor's own scheme before anything is stored; throws ProviderError
   * `auth_failed` when the signature is missing or wrong. Returns the events it carries.
   */
  verifyWebhook(raw: RawWebhook): WebhookEvent[];
}

/** The closed set of provider failure codes. */
export type ProviderErrorCode =
  | "invalid_input"
  | "auth_failed"
  | "not_found"
  | "state_conflict"
  | "rate_limited"
  | "unavailable"
  | "unexpected";

/** A provider call failed: jobs retry only `retryable` ones. The message is safe to log. */
export class ProviderError extends Error {
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly provider: string,
    readonly retryable = code === "rate_limited" || code === "unavailable",
    readonly vendorCode?: string,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

/** Builds a provider from a connection's settings. */
export type ProviderFactory = (settings: ProviderSettings) => EnrichmentProvider;
