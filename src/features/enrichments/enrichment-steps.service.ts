/**
 * The recipient's side of enrichment steps: the cards and step pages of the session, the acts, and
 * the signed return links (ADR 0065). The session feature owns the HTTP (links, cookies, CSRF, code
 * step); this owns what a kind's step shows and does, through the kind's descriptor.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { VNode } from "preact";
import type { EnrichmentProvider } from "../../adapters/enrichment-provider/enrichment-provider.js";
import type { Executor } from "../../db/database.js";
import type { Translator } from "../../shared/i18n/i18n.js";
import type { FeatureRow } from "../containers/index.js";
import { StepStartingError } from "./enrichment-errors.js";
import type {
  Disclosure,
  EnrichmentKind,
  StepActResult,
  StepAsset,
  StepContext,
  StepServices,
  StepSession,
} from "./enrichment-kind.js";
import {
  claimStart,
  findConsent,
  insertConsent,
  recipientsOf,
  STARTING_MARK,
  settleStart,
  updateEnrichment,
} from "./enrichments.repository.js";
import type { EnrichmentsService } from "./enrichments.service.js";
import type { ProviderResolver } from "./provider-connections.service.js";

/** How long a return link (and its browser cookie) stays valid, in seconds. */
export const RETURN_LINK_SECONDS = 24 * 3600;

/** The parts of a verified return link. */
export interface ReturnLink {
  featureId: number;
  itemId: number;
  nonce: string;
}

/** A cookie an act asks the session to set (the return link's browser binding). */
export interface StepCookie {
  name: string;
  value: string;
  path: string;
  maxAgeSeconds: number;
}

/** What the session passes in to show or run a step. */
export interface StepInput {
  row: FeatureRow;
  session: StepSession;
  csrf: string;
  stepBase: string;
  i18n: Translator;
  /** `scheme://host` the recipient uses (the account's custom host or PUBLIC_BASE_URL). */
  origin: string;
}

/** The card of a step on the session page. */
export interface StepCard {
  kind: string;
  status: string;
  summary: string;
  actionLabel: string;
}

/** The session page's view of the enrichment steps. */
export class EnrichmentSteps {
  constructor(
    private readonly engine: EnrichmentsService,
    private readonly providers: ProviderResolver,
  ) {}

  /** True when the feature is an enrichment step (shown by its kind). */
  isStep(row: FeatureRow): boolean {
    return this.engine.owns(row.kind);
  }

  private kindOf(row: FeatureRow): EnrichmentKind {
    const kind = this.engine.kind(row.kind);
    if (!kind) throw new Error(`no enrichment kind ${row.kind}`);
    return kind;
  }

  /** The card of a step: its status in words and the label of its button. */
  async card(row: FeatureRow, i18n: Translator): Promise<StepCard> {
    const kind = this.kindOf(row);
    const view = await this.engine.view(this.engine.deps.database.db, row);
    return {
      kind: kind.name,
      status: view.status,
      summary: kind.session.summary(view, i18n),
      actionLabel: kind.session.actionLabel(view, i18n),
    };
  }

  private async context(input: StepInput): Promise<StepContext> {
    return {
      feature: await this.engine.view(this.engine.deps.database.db, input.row),
      session: input.session,
      csrf: input.csrf,
      stepBase: input.stepBase,
      i18n: input.i18n,
    };
  }

  /** The origins the step page's forms may lead to (its CSP form-action). */
  async formActionOrigins(row: FeatureRow): Promise<string[]> {
    const kind = this.kindOf(row);
    if (!kind.session.formActionOrigins) return [];
    const { db } = this.engine.deps.database;
    return kind.session.formActionOrigins(await this.engine.view(db, row), () =>
      this.providers.forFeature(db, row.id),
    );
  }

  /** The step page's body, by the kind. */
  async render(input: StepInput): Promise<VNode> {
    const kind = this.kindOf(input.row);
    return kind.session.render(await this.context(input), this.services(input, kind).services);
  }

  /**
   * Runs a step's form post by its kind (the session checked CSRF, the code step and visibility).
   * 409 while the step waits for its `after` features, 422 once it left pending. Returns what the
   * kind answered and the cookie to set when the kind made a return link.
   */
  async act(
    input: StepInput,
    form: Record<string, string>,
  ): Promise<{ result: StepActResult; cookie: StepCookie | undefined }> {
    const kind = this.kindOf(input.row);
    const ctx = await this.context(input);
    const { services, cookie } = this.services(input, kind);
    const result = await kind.session.act(ctx, form, services);
    return { result, cookie: cookie() };
  }

  /** A file of the step page by its kind (undefined: none, or not for this recipient). */
  async asset(input: StepInput, name: string): Promise<StepAsset | undefined> {
    const kind = this.kindOf(input.row);
    if (!kind.session.asset) return undefined;
    const ctx = await this.context(input);
    return kind.session.asset(ctx, name, this.services(input, kind).services);
  }

  /** True when the kind shows the signing view on this step page (its CSP then allows the viewer). */
  async signingPage(input: StepInput): Promise<boolean> {
    const kind = this.kindOf(input.row);
    if (!kind.session.signingPage) return false;
    return kind.session.signingPage(await this.context(input));
  }

  /** After a verified return: the kind records it (externalurl completes). */
  async returned(input: StepInput): Promise<void> {
    const kind = this.kindOf(input.row);
    if (!kind.session.returned) return;
    const ctx = await this.context(input);
    await kind.session.returned(ctx, this.services(input, kind).services);
  }

  private services(
    input: StepInput,
    kind: EnrichmentKind,
  ): { services: StepServices; cookie: () => StepCookie | undefined } {
    const { engine } = this;
    const { db } = engine.deps.database;
    let cookie: StepCookie | undefined;
    const actor = {
      accountId: input.row.account_id,
      source: { from: input.session.ip, method: "POST", path: `${input.stepBase}act` },
    };
    const services: StepServices = {
      now: () => engine.now(),
      media: engine.media,
      setStatus: async (status, opts) => {
        await db.transaction().execute(async (trx) => {
          const row = await engine.deps.features.find(trx, input.row.account_id, input.row.id, kind.name);
          await engine.applyStatus(trx, row, status, actor, opts ?? {});
        });
      },
      returnLink: () => {
        const link = this.signReturn(input.row.id, input.session.recipientItemId);
        cookie = link.cookie;
        return `${input.origin}/steps/return/${link.token}`;
      },
      recordConsent: async (disclosure) => {
        await db.transaction().execute((trx) => this.recordConsent(trx, input, disclosure));
      },
      hasConsent: async (disclosure) =>
        (await findConsent(db, input.row.container_id, input.session.recipientId, {
          id: disclosure.id,
          version: disclosure.version,
          sha: sha256(disclosure.text),
        })) !== undefined,
      provider: async (): Promise<EnrichmentProvider> => this.providers.forFeature(db, input.row.id),
      start: async (extra) => {
        const provider = await this.providers.forFeature(db, input.row.id);
        const view = await engine.view(db, input.row);
        // One start per step: a second click while the first is at the vendor would otherwise
        // create a second envelope (or session) there.
        const mark = `${STARTING_MARK}${new Date().toISOString()}:${randomBytes(6).toString("base64url")}`;
        if (!(await claimStart(db, input.row.id, new Date(), mark))) throw new StepStartingError();
        let started: Awaited<ReturnType<EnrichmentProvider["start"]>>;
        try {
          started = await provider.start({
            featureId: input.row.id,
            payload: view.payload,
            recipient: { id: input.session.recipientId, name: input.session.recipientName, email: null },
            returnUrl: services.returnLink(),
            people: (await recipientsOf(db, input.row.container_id)).map((r) => ({ id: r.id, name: r.name })),
            files: extra?.files ?? [],
          });
        } catch (error) {
          await settleStart(db, input.row.id, mark, null);
          throw error;
        }
        await db.transaction().execute(async (trx) => {
          await settleStart(trx, input.row.id, mark, started.ref.slice(0, 200));
          await updateEnrichment(trx, input.row.id, { updated: engine.now() });
        });
        return started.next;
      },
    };
    return { services, cookie: () => cookie };
  }

  /** Records an accepted disclosure once per (container, recipient, disclosure, version, text). */
  private async recordConsent(trx: Executor, input: StepInput, disclosure: Disclosure): Promise<void> {
    const sha = sha256(disclosure.text);
    const key = { id: disclosure.id, version: disclosure.version, sha };
    if (await findConsent(trx, input.row.container_id, input.session.recipientId, key)) return;
    await insertConsent(trx, {
      account_id: input.row.account_id,
      container_id: input.row.container_id,
      recipient_id: input.session.recipientId,
      feature_id: input.row.id,
      disclosure_id: disclosure.id,
      disclosure_version: disclosure.version,
      text_sha256: sha,
      accepted_at: this.engine.now(),
      ip: input.session.ip,
      user_agent: input.session.userAgent.slice(0, 512),
      auth_method: input.session.authMethod,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // return links (ADR 0065)

  private key(kid: string): Buffer {
    return this.engine.deps.keyRing.derive(kid, "secrets");
  }

  private mac(kid: string, label: string, value: string): string {
    return createHmac("sha256", this.key(kid)).update(`${label}\0${value}`).digest("base64url");
  }

  /** The cookie name binding a return link of `featureId` to the browser that left. */
  static cookieName(featureId: number): string {
    return `fy_step_${featureId}`;
  }

  /** A signed return token of a feature and item, and the cookie that binds it to this browser. */
  signReturn(featureId: number, itemId: number): { token: string; cookie: StepCookie } {
    const kid = this.engine.deps.keyRing.activeKid;
    const nonce = randomBytes(16).toString("base64url");
    const expires = Math.floor(this.engine.deps.clock.now().getTime() / 1000) + RETURN_LINK_SECONDS;
    const payload = Buffer.from(
      JSON.stringify({ f: featureId, i: itemId, n: nonce, e: expires, k: kid }),
    ).toString("base64url");
    return {
      token: `${payload}.${this.mac(kid, "step-return", payload)}`,
      cookie: {
        name: EnrichmentSteps.cookieName(featureId),
        value: this.mac(kid, "step-return-cookie", nonce),
        path: "/steps/return/",
        maxAgeSeconds: RETURN_LINK_SECONDS,
      },
    };
  }

  /**
   * The feature and item of a return token when its signature holds, it has not expired, and
   * `cookies` hold the browser binding it was issued with; undefined otherwise (one answer for all).
   */
  verifyReturn(token: string, cookies: Record<string, string>): ReturnLink | undefined {
    const match = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return undefined;
    let parsed: { f?: unknown; i?: unknown; n?: unknown; e?: unknown; k?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(match[1]!, "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
    const { f, i, n, e, k } = parsed;
    if (
      typeof f !== "number" ||
      typeof i !== "number" ||
      typeof n !== "string" ||
      typeof e !== "number" ||
      typeof k !== "string"
    )
      return undefined;
    if (!this.engine.deps.keyRing.kids().includes(k)) return undefined;
    if (!safeEqual(this.mac(k, "step-return", match[1]!), match[2]!)) return undefined;
    if (e < Math.floor(this.engine.deps.clock.now().getTime() / 1000)) return undefined;
    const bound = cookies[EnrichmentSteps.cookieName(f)];
    if (!bound || !safeEqual(this.mac(k, "step-return-cookie", n), bound)) return undefined;
    return { featureId: f, itemId: i, nonce: n };
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
