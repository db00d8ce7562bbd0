/**
 * The descriptor of an enrichment kind (ADR 0063): everything the engine, the generic routes, the
 * session page and the dashboard need to know about one kind. A new kind is one folder
 * (`kinds/<kind>/`) exporting one `EnrichmentKind`, plus one line in `kinds.ts`. Kinds never import
 * each other; they import only this file, the provider port and shared helpers.
 */
import type { VNode } from "preact";
import type { TProperties, TSchema } from "typebox";
import type {
  EnrichmentProvider,
  NeutralOutcome,
  NextStep,
  ProviderFactory,
  ProviderSettings,
  StartFile,
} from "../../adapters/enrichment-provider/enrichment-provider.js";
import type { Config } from "../../config/config.js";
import type { Executor } from "../../db/database.js";
import type { JobHandler, JobKind } from "../../jobs/job.js";
import type { PdfEngine } from "../../pdf/index.js";
import type { RouteModule } from "../../shared/feature.js";
import type { Translator } from "../../shared/i18n/i18n.js";

/** Thrown by `StepServices.start` when another request is starting the same step right now. */
export { StepStartingError } from "./enrichment-errors.js";

/** An enrichment feature as kinds see it: the common feature fields plus the kind's own row. */
export interface EnrichmentView<P = Record<string, unknown>> {
  id: number;
  accountId: number;
  containerId: number;
  kind: string;
  /** The container feature's state: pending, complete or expired. */
  state: "pending" | "complete" | "expired";
  /** The kind's own status (one of `statuses`). */
  status: string;
  title: string;
  description: string;
  payload: P;
  /** The outcome (opened when sealed); null before any, or once purged. */
  result: Record<string, unknown> | null;
  provider: string;
  providerRef: string | null;
  resultPurgedAt: string | null;
  expiresAt: string | null;
  completedAt: string | null;
  created: string;
  updated: string;
}

/** Media objects as kinds see them: the media feature's storage (blob store, key ring, audit). */
export interface KindMedia {
  /**
   * The bytes of the account's media object `mediaId` (NotFound if it is not the account's; 410
   * removed, 409 still uploading, 413 over 64 MiB).
   */
  read(accountId: number, mediaId: number): Promise<Buffer>;
  /** Stores bytes as a new media object of the feature (encrypted at rest like every blob); returns its id. */
  store(feature: EnrichmentView, file: { name: string; contentType: string; bytes: Buffer }): Promise<number>;
}

/** What `readPayload` may consult. */
export interface PayloadContext {
  config: Config;
  /** True on create (required fields required), false on update (every field optional). */
  creating: boolean;
  /** The payload stored so far (update). */
  current?: Record<string, unknown> | undefined;
}

/** What `prepareCreate` may use before the create transaction. */
export interface PrepareContext {
  accountId: number;
  readonly media: KindMedia;
  readonly pdf: PdfEngine;
  /** The database, for the kind's own tables (through its repository). */
  readonly db: Executor;
}

/** Queues a kind's job inside the transaction that changed the status. */
export interface KindQueue {
  enqueue<Q extends object>(job: JobKind<Q>, payload: Q): Promise<void>;
}

/** A recipient of a container as a kind names it (certificate pages, signer lists). */
export interface KindRecipient {
  id: number;
  name: string;
  /** The recipient's first email item, or null. */
  email: string | null;
}

/** What `checkCreate` may consult about the new step's container. */
export interface CreateContext {
  /** The ids of the container's recipients. */
  containerRecipientIds(): Promise<number[]>;
  /** The provider the step will use (`local`, or the account's connection's). */
  provider: string;
}

/** A provider a kind offers: `local` always; vendors load lazily so the core never imports them. */
export interface ProviderDefinition {
  /** The provider id (`local`, `docusign`, ...). */
  id: string;
  /** A sandbox account may use this provider only in test mode (`local` is always allowed). */
  testModeOnly?: boolean;
  /** The connection settings this provider needs (validated when a connection is saved). */
  credentials: TProperties;
  /** Loads the implementation (dynamic import in the kind's provider map). */
  load(): Promise<ProviderFactory>;
  /**
   * What makes saved settings unusable beyond their schema (the vendor's own rules), in words
   * naming the settings, or undefined; asked when a step is created. Calls nobody.
   */
  check?(settings: ProviderSettings): string | undefined;
}

/** The recipient's session as a step page sees it. */
export interface StepSession {
  /** `/s/<token>/`: the session page (links back). */
  base: string;
  containerId: number;
  recipientId: number;
  recipientItemId: number;
  recipientName: string;
  /** How the recipient was authenticated (`link`, `link+email_code`, `link+sms_code`). */
  authMethod: string;
  ip: string;
  userAgent: string;
}

/** What a kind's step handlers may do, through the engine (each in one transaction with its audit). */
export interface StepServices {
  /** The current time as stored text (the engine's clock). */
  now(): string;
  /** Media objects: read the account's, store the feature's own. */
  readonly media: KindMedia;
  /** Sets the kind's status; a final status completes the feature (callback, container settled). */
  setStatus(status: string, opts?: { result?: Record<string, unknown>; auditValue?: string }): Promise<void>;
  /**
   * A signed, single-use return link for this feature bound to the recipient's browser (a cookie
   * set on the act's answer); its path holds no session token (ADR 0065).
   */
  returnLink(): string;
  /** Records a disclosure the recipient accepted in the consent ledger (reused across the session). */
  recordConsent(disclosure: Disclosure): Promise<void>;
  /** True when this recipient already accepted `disclosure` (same id, version and text) in this session. */
  hasConsent(disclosure: Disclosure): Promise<boolean>;
  /** The provider of this step (the account's connection for the kind, else `local`). */
  provider(): Promise<EnrichmentProvider>;
  /**
   * Starts the step at its provider with a fresh return link, stores the provider's reference
   * (the reconciliation job and webhooks find the step by it) and returns the next step, which is
   * never stored (a signing URL, an embed token). `files` go to the provider with the start.
   */
  start(extra?: { files?: StartFile[] }): Promise<NextStep>;
}

/** What the act of a step answers: where the browser goes next (303). */
export type StepActResult =
  | { redirect: string }
  | { back: true; notice?: string | undefined }
  | { error: string; status?: number | undefined };

/** The context of a step page or an act. */
export interface StepContext<P = Record<string, unknown>> {
  feature: EnrichmentView<P>;
  session: StepSession;
  /** The recipient's CSRF token for the step's forms. */
  csrf: string;
  /** `/s/<token>/steps/<featureId>/`: the step page; acts POST to `<stepBase>act`. */
  stepBase: string;
  i18n: Translator;
}

/** A disclosure the recipient accepts (ESIGN consent, FCRA instructions, biometric notice...). */
export interface Disclosure {
  id: string;
  version: string;
  /** The exact text shown (its SHA-256 is recorded). */
  text: string;
}

/** A file a step page shows (its document), read-only, served to the recipient by the session. */
export interface StepAsset {
  /** The Content-Type it is served with. */
  type: string;
  body: Buffer;
  /** Served as a download under this name (`attachment`); shown in the page (`inline`) without one. */
  filename?: string | undefined;
}

/** How a kind appears on the recipient's session page and step page. */
export interface SessionStep<P = Record<string, unknown>> {
  /** One line under the card's title (the kind's status in words). */
  summary(view: EnrichmentView<P>, i18n: Translator): string;
  /** The label of the card's button to the step page while the step is open. */
  actionLabel(view: EnrichmentView<P>, i18n: Translator): string;
  /** The step page's body (escaped by Preact); `services` to read what it shows (its document). */
  render(ctx: StepContext<P>, services: StepServices): VNode | Promise<VNode>;
  /** A form post of the step page (CSRF checked, step open and unlocked before it is called). */
  act(ctx: StepContext<P>, form: Record<string, string>, services: StepServices): Promise<StepActResult>;
  /**
   * Origins the step page's forms may lead to (its act answers with a redirect there): the CSP's
   * `form-action` of the step page names them. Default: none beside Ferry's own.
   */
  formActionOrigins?(
    view: EnrichmentView<P>,
    provider: () => Promise<EnrichmentProvider>,
  ): string[] | Promise<string[]>;
  /**
   * The recipient came back through the step's return link (already verified and bound to this
   * browser). Kinds completed by their vendor only record it; externalurl completes here.
   */
  returned?(ctx: StepContext<P>, services: StepServices): Promise<void>;
  /**
   * A file of the step page, `name` as in `<stepBase>files/<name>` (GET and HEAD, `no-store`): the
   * document being signed, a signer's copy of the sealed PDF. The session checked the link, the
   * code step and that the step waits for nothing; the kind checks who may see it and answers
   * undefined otherwise (404). Read-only: it changes nothing.
   */
  asset?(ctx: StepContext<P>, name: string, services: StepServices): Promise<StepAsset | undefined>;
  /** True when the step page shows the signing view: it is sent with the signing page's CSP. */
  signingPage?(ctx: StepContext<P>): boolean;
}

/** The descriptor of one enrichment kind. */
export interface EnrichmentKind<P extends Record<string, unknown> = Record<string, unknown>> {
  /** `feature_attr`, the `kind` of the feature row, and the name of the callback's nested object. */
  readonly name: string;
  /** `/v1/module_container_<module>/<resource>/`. */
  readonly module: string;
  readonly resource: string;
  /** PascalCase noun: operationIds `create<N>`, `list<N>s`, `get<N>`, `update<N>`, `delete<N>`; schemas `<N>`, `<N>Input`, `<N>Page`. */
  readonly schemaName: string;
  /** One line for the API reference ("Send the recipient to an owner page and back"). */
  readonly summary: string;
  /** Every status of the kind; `initialStatus` first. */
  readonly statuses: readonly string[];
  readonly initialStatus: string;
  /** Statuses that complete the feature (`state: complete` plus the status). */
  readonly finalStatuses: readonly string[];
  /** The status a pending feature takes when it expires. */
  readonly expiredStatus: string;
  /** TypeBox properties of the kind's create fields (beside container, expiration, recipient_permissions, after, title, description). */
  readonly createFields: TProperties;
  /** The fields PATCH accepts; undefined: the kind has no update. */
  readonly updateFields?: TProperties | undefined;
  /** TypeBox properties of the kind's fields in its API object and callback. */
  readonly presentedFields: TProperties;
  /** Reads and validates the kind's fields of a body; throws ValidationError naming each field. */
  readPayload(body: Record<string, unknown>, ctx: PayloadContext): P;
  /**
   * Checks a read payload against the step's container inside the create transaction (a throw
   * rolls the feature back: nothing half-created); for example that signers are its recipients.
   */
  checkCreate?(payload: P, ctx: CreateContext): Promise<void>;
  /**
   * Completes a read payload before the create transaction (reads a document, checks it with the
   * PDF engine, resolves a template); a throw creates nothing. Returns the payload to store.
   */
  prepareCreate?(payload: P, ctx: PrepareContext): Promise<P>;
  /** Called inside the transaction that set `view.status` (already stored); may queue the kind's jobs. */
  afterStatus?(view: EnrichmentView<P>, queue: KindQueue): Promise<void>;
  /** The kind's fields of its API object and of the callback's nested object (allow-listed). */
  present(view: EnrichmentView<P>): Record<string, unknown>;
  /** True when results hold personal data: stored sealed and destroyed at retention's end. */
  readonly sensitiveResult: boolean;
  /** Days a complete feature's result is kept, or null to keep it with the feature. */
  retentionDays(config: Config): number | null;
  /** Providers of the kind; `local` is required (a meta test checks it). */
  readonly providers: Readonly<Record<string, ProviderDefinition>>;
  /** The recipient's side. */
  readonly session: SessionStep<P>;
  /** Extra routes of the kind (beyond create/list/get/update/delete), given the engine's kind API. */
  routes?(api: KindApi): RouteModule;
  /** Sandbox helpers acting as the recipient (404 on live deployments), given the engine's kind API. */
  sandboxRoutes?(api: KindApi): RouteModule;
  /**
   * A provider's outcome (a verified webhook's or a status fetch's) before it is applied, outside any
   * transaction: the kind may ask its provider more (the truth behind a webhook, a signed document),
   * store files through `media` and merge the result it keeps. Default: the outcome as it came.
   */
  settle?(input: {
    feature: EnrichmentView<P>;
    outcome: NeutralOutcome;
    /** True when the outcome is a status fetch already (reconciliation), false for a webhook's. */
    fetched: boolean;
    provider: EnrichmentProvider;
    media: KindMedia;
  }): Promise<NeutralOutcome>;
  /** Jobs the kind defines (run by the worker), given the engine's kind API (media included). */
  jobs?(api: KindApi): JobHandler[];
}

/** What a kind's own routes may ask of the engine. */
export interface KindApi {
  readonly config: Config;
  /** The current time as stored text (the engine's clock). */
  now(): string;
  /** Media objects: read the account's, store a feature's own. */
  readonly media: KindMedia;
  /** The PDF engine (inspect, fields, seal, verify; on its own worker threads). */
  readonly pdf: PdfEngine;
  /** The database, for the kind's own tables (through its repository). */
  readonly db: Executor;
  /** The recipients of container `containerId` (any account: callers checked the feature). */
  recipients(containerId: number): Promise<KindRecipient[]>;
  /** The kind's named object schema (what `present` answers), for the kind's own routes. */
  readonly schema: TSchema;
  /** The owner's view of the account's feature `id` of this kind (404 otherwise). */
  get(accountId: number, id: string | number): Promise<EnrichmentView>;
  /** The provider of the account's feature `id` of this kind (its connection's, or `local`). */
  provider(featureId: number): Promise<EnrichmentProvider>;
  /** The API object of a feature (what the generic GET answers). */
  present(view: EnrichmentView): Promise<Record<string, unknown>>;
  /**
   * Sets the status of a pending feature on the owner's or the sandbox's behalf (409 while it waits
   * for its `after` features, 422 once it left pending); a final status completes it.
   */
  setStatus(
    actor: { accountId: number; applicationId?: number | string | null; sandbox?: boolean },
    id: number,
    status: string,
    opts?: { result?: Record<string, unknown>; auditValue?: string },
  ): Promise<EnrichmentView>;
}
