/**
 * The enrichment engine (ADR 0063): features of the registered kinds, created, listed, changed and
 * deleted through the containers' features service (one id space, one lifecycle), with their own
 * row of status, payload and result. Implements the containers' FeatureExtensions port, and gives
 * kinds their KindApi.
 */
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { PdfEngine } from "../../pdf/index.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import type { Paginated } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { requireObjectBody } from "../../shared/validation.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { ActionSource, Containers, FeatureExtensions, FeatureRow } from "../containers/index.js";
import type { FeatureFilesService } from "../media/index.js";
import { openSecret, sealSecret } from "../notifications/index.js";
import { containerConsents } from "./consents.service.js";
import { refuseWaiting } from "./enrichment-errors.js";
import { ProviderCancelJob } from "./enrichment-jobs.js";
import type { EnrichmentKind, EnrichmentView, KindApi, KindMedia } from "./enrichment-kind.js";
import {
  connectionForKind,
  type EnrichmentRow,
  findEnrichment,
  insertEnrichment,
  isStartingMark,
  recipientsOf,
  updateEnrichment,
} from "./enrichments.repository.js";
import { kindSchemas } from "./kind-schemas.js";
import type { ProviderResolver } from "./provider-connections.service.js";

/** The common input fields every feature takes (beside the kind's own). */
const COMMON_FIELDS = ["container", "expiration", "recipient_permissions", "after", "title", "description"];

/** What the engine works with. */
export interface EnrichmentDeps {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  features: Containers["features"];
  containers: Pick<Containers["containers"], "get">;
  lifecycle: Pick<Containers["lifecycle"], "completeFeature" | "featureChanged">;
  kinds: readonly EnrichmentKind[];
  jobs: JobQueue;
  /** The media feature's whole-file reads and stores (encrypted like every upload). */
  files: Pick<FeatureFilesService, "read" | "store" | "destroyOfFeature">;
  pdf: PdfEngine;
}

/** Who changes a step's status: the owner (API key), the sandbox acting as the recipient, or the recipient. */
export interface StatusActor {
  accountId: number;
  applicationId?: number | string | null | undefined;
  sandbox?: boolean | undefined;
  source?: ActionSource | undefined;
}

/** Options of a status change. */
export interface StatusOptions {
  result?: Record<string, unknown> | undefined;
  auditValue?: string | undefined;
}

/** Largest media a kind reads whole (413 above): documents, not archives. */
const KIND_MEDIA_MAX_BYTES = 64 * 1024 * 1024;

const resultLabel = (featureId: number) => `enrichment-result:${featureId}`;

/** The engine. */
export class EnrichmentsService implements FeatureExtensions {
  private readonly byName: Map<string, EnrichmentKind>;
  private resolver: ProviderResolver | undefined;

  constructor(readonly deps: EnrichmentDeps) {
    this.byName = new Map(deps.kinds.map((k) => [k.name, k]));
  }

  /** Gives the engine the providers of features (built after it: they need the engine). */
  useProviders(resolver: ProviderResolver): void {
    this.resolver = resolver;
  }

  /** The current time as stored text. */
  now(): string {
    return toTimestamp(this.deps.clock.now());
  }

  /** The registered kind `name`, or undefined. */
  kind(name: string): EnrichmentKind | undefined {
    return this.byName.get(name);
  }

  private requireKind(name: string): EnrichmentKind {
    const kind = this.byName.get(name);
    if (!kind) throw notFound("Feature kind");
    return kind;
  }

  // ---------------------------------------------------------------------------------------------
  // FeatureExtensions

  owns(kind: string): boolean {
    return this.byName.has(kind);
  }

  async present(ex: Executor, row: FeatureRow): Promise<Record<string, unknown>> {
    const view = await this.view(ex, row);
    const kind = this.requireKind(row.kind);
    return { feature_attr: kind.name, status: view.status, provider: view.provider, ...kind.present(view) };
  }

  async eventDetails(ex: Executor, row: FeatureRow): Promise<Record<string, unknown>> {
    return this.present(ex, row);
  }

  async expired(ex: Executor, row: FeatureRow, now: string): Promise<void> {
    const kind = this.requireKind(row.kind);
    await updateEnrichment(ex, row.id, { status: kind.expiredStatus, updated: now });
    // A step started at a vendor ends there too (by a job, as on delete), so nobody goes on at
    // the vendor with a step Ferry no longer follows.
    const own = await findEnrichment(ex, row.id);
    if (!own?.provider_ref || own.connection_id === null || isStartingMark(own.provider_ref)) return;
    await this.deps.jobs.enqueue(ex, ProviderCancelJob, {
      connection: own.connection_id,
      ref: own.provider_ref,
    });
  }

  /**
   * A pending step started at a vendor is canceled there by a job queued in the deleting
   * transaction (no vendor call inside it); the enrichment row cascades with the feature.
   */
  async deleting(ex: Executor, row: FeatureRow): Promise<void> {
    const own = await findEnrichment(ex, row.id);
    if (row.state !== "pending" || !own?.provider_ref || own.connection_id === null) return;
    if (isStartingMark(own.provider_ref)) return;
    await this.deps.jobs.enqueue(ex, ProviderCancelJob, {
      connection: own.connection_id,
      ref: own.provider_ref,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // views

  /** The kinds' view of a feature (its result opened when sealed). */
  async view(ex: Executor, row: FeatureRow, e?: EnrichmentRow): Promise<EnrichmentView> {
    const own = e ?? (await findEnrichment(ex, row.id));
    if (!own) throw notFound("Feature");
    return {
      id: row.id,
      accountId: row.account_id,
      containerId: row.container_id,
      kind: row.kind,
      state: row.state,
      status: own.status,
      title: row.title,
      description: row.description,
      payload: JSON.parse(own.payload) as Record<string, unknown>,
      result: this.openResult(own),
      provider: own.provider,
      // A start in progress is not a vendor's reference yet.
      providerRef: isStartingMark(own.provider_ref) ? null : own.provider_ref,
      resultPurgedAt: own.result_purged_at,
      expiresAt: row.expires_at,
      completedAt: row.completed_at,
      created: row.created,
      updated: row.updated,
    };
  }

  private openResult(e: EnrichmentRow): Record<string, unknown> | null {
    if (e.result === null) return null;
    const text = e.result_kid
      ? openSecret(this.deps.keyRing, { kid: e.result_kid, ciphertext: e.result }, resultLabel(e.feature_id))
      : e.result;
    return JSON.parse(text) as Record<string, unknown>;
  }

  private storedResult(kind: EnrichmentKind, featureId: number, result: Record<string, unknown>) {
    const text = JSON.stringify(result);
    if (!kind.sensitiveResult) return { result: text, result_kid: null };
    const sealed = sealSecret(this.deps.keyRing, text, resultLabel(featureId));
    return { result: sealed.ciphertext, result_kid: sealed.kid };
  }

  // ---------------------------------------------------------------------------------------------
  // owner API

  /** 400 naming each field of `body` that neither the common fields nor the kind's own name. */
  private checkFields(kind: EnrichmentKind, body: Record<string, unknown>, creating: boolean): void {
    const own = Object.keys((creating ? kind.createFields : kind.updateFields) ?? {});
    const unknown = Object.keys(body).filter((k) => !COMMON_FIELDS.includes(k) && !own.includes(k));
    if (unknown.length) {
      throw new ValidationError(Object.fromEntries(unknown.map((k) => [k, ["Unknown field."]])));
    }
  }

  /** POST: a feature of `kind` on the body's container (400/422 as the containers say). 201. */
  async create(auth: AuthContext, kindName: string, raw: unknown): Promise<unknown> {
    const kind = this.requireKind(kindName);
    const body = requireObjectBody(raw);
    this.checkFields(kind, body, true);
    const read = kind.readPayload(body, { config: this.deps.config, creating: true });
    const connection = await connectionForKind(this.deps.database.db, auth.accountId, kind.name);
    const provider = connection?.provider ?? "local";
    if (!kind.providers[provider])
      throw unprocessable(`The ${kind.name} provider "${provider}" is not available.`);
    // A connection whose settings the provider refuses is reported now, not at the recipient's click.
    const problem = connection && this.resolver?.problemOf(connection);
    if (problem) throw unprocessable(problem);
    const payload = kind.prepareCreate
      ? await kind.prepareCreate(read, {
          accountId: auth.accountId,
          media: this.media,
          pdf: this.deps.pdf,
          db: this.deps.database.db,
        })
      : read;
    return this.deps.features.create(auth, kind.name, body, async (trx, row) => {
      if (kind.checkCreate) {
        await kind.checkCreate(payload, {
          provider,
          containerRecipientIds: async () =>
            (
              await trx
                .selectFrom("container_recipients")
                .select("id")
                .where("container_id", "=", row.container_id)
                .execute()
            ).map((r) => r.id),
        });
      }
      await insertEnrichment(trx, {
        feature_id: row.id,
        account_id: auth.accountId,
        kind: kind.name,
        status: kind.initialStatus,
        payload: JSON.stringify(payload),
        result_kid: null,
        result: null,
        provider,
        connection_id: connection?.id ?? null,
        provider_ref: null,
        result_purged_at: null,
        created: row.created,
        updated: row.updated,
      });
    });
  }

  /** GET list of a kind, oldest first (`container=<id>`). */
  async list(
    auth: AuthContext,
    kindName: string,
    query: Record<string, unknown>,
    path: string,
  ): Promise<Paginated<unknown>> {
    return this.deps.features.list(auth, this.requireKind(kindName).name, query, path);
  }

  /** GET one (404 when absent, foreign or of another kind). */
  async get(auth: AuthContext, kindName: string, rawId: string): Promise<unknown> {
    return this.deps.features.get(auth, this.requireKind(kindName).name, rawId);
  }

  /**
   * The enrichment steps of the account's container, oldest first, as the API shows them (for the
   * dashboard's container page).
   */
  async ofContainer(auth: AuthContext, containerId: number): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (const kind of this.deps.kinds) {
      const page = await this.deps.features.list(
        auth,
        kind.name,
        { container: String(containerId), page_size: "100" },
        `/v1/module_container_${kind.module}/${kind.resource}/`,
      );
      out.push(...(page.results as Record<string, unknown>[]));
    }
    return out.sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** The consent ledger of the account's container `rawId` (404 when absent or foreign). */
  async consentsOf(auth: AuthContext, rawId: string) {
    return containerConsents(this, this.deps.containers, auth, rawId);
  }

  /** PATCH: the common fields and the kind's update fields; 422 once it left pending. */
  async update(auth: AuthContext, kindName: string, rawId: string, raw: unknown): Promise<unknown> {
    const kind = this.requireKind(kindName);
    const body = requireObjectBody(raw);
    this.checkFields(kind, body, false);
    return this.deps.features.update(auth, kind.name, rawId, body, async (trx, row) => {
      const own = await findEnrichment(trx, row.id);
      if (!own) throw notFound("Feature");
      const current = JSON.parse(own.payload) as Record<string, unknown>;
      const payload = kind.readPayload(body, { config: this.deps.config, creating: false, current });
      await updateEnrichment(trx, row.id, { payload: JSON.stringify(payload), updated: this.now() });
    });
  }

  /** DELETE (409 while a pending feature waits for it). */
  async delete(auth: AuthContext, kindName: string, rawId: string): Promise<void> {
    await this.deps.features.delete(auth, this.requireKind(kindName).name, rawId);
  }

  // ---------------------------------------------------------------------------------------------
  // status changes

  /**
   * Sets the status of pending feature `row` in `trx`: 422 once it left pending or expired, 409 while
   * it waits for its `after` features. The result (sealed when sensitive) and an audit entry are
   * written; a final status completes the feature (its `feature` callback, the container settled),
   * another sends the `feature` callback with the new status.
   */
  async applyStatus(
    trx: Executor,
    row: FeatureRow,
    status: string,
    actor: StatusActor,
    opts: StatusOptions = {},
  ): Promise<void> {
    const kind = this.requireKind(row.kind);
    if (!kind.statuses.includes(status)) throw new Error(`${kind.name} has no status ${status}`);
    const now = this.now();
    if (row.state !== "pending") throw unprocessable(`The feature is ${row.state}: it cannot change.`);
    if (row.expires_at !== null && row.expires_at <= now) throw unprocessable("The feature has expired.");
    const waits = await this.deps.features.waitingFor(trx, row);
    if (waits.length) throw refuseWaiting(waits);
    await updateEnrichment(trx, row.id, {
      status,
      ...(opts.result ? this.storedResult(kind, row.id, opts.result) : {}),
      updated: now,
    });
    if (kind.afterStatus) {
      await kind.afterStatus(await this.view(trx, row), {
        enqueue: async (job, payload) => {
          await this.deps.jobs.enqueue(trx, job, payload);
        },
      });
    }
    await this.deps.audit.write(trx, {
      accountId: row.account_id,
      code: AuditCode.ENTITY_UPDATED,
      apiKeyId: actor.applicationId ?? null,
      relatedModel: "feature",
      relationKey: row.id,
      value: opts.auditValue ?? `${kind.name} ${status}`,
      from: actor.source?.from ?? "",
      method: actor.source?.method ?? "",
      path: actor.source?.path ?? "",
    });
    if (kind.finalStatuses.includes(status)) {
      await this.deps.lifecycle.completeFeature(trx, row.id, { source: actor.source ?? {} });
    } else {
      await this.deps.lifecycle.featureChanged(trx, row.id);
    }
  }

  /** The owner's (or the sandbox's) status change of the account's feature `id`, in its own transaction. */
  async setStatus(
    actor: StatusActor,
    id: number,
    status: string,
    opts: StatusOptions = {},
  ): Promise<EnrichmentView> {
    return this.deps.database.db.transaction().execute(async (trx) => {
      const row = await this.deps.features.find(
        trx,
        actor.accountId,
        id,
        await this.kindOf(trx, actor.accountId, id),
      );
      await this.applyStatus(trx, row, status, actor, opts);
      return this.view(trx, await this.deps.features.find(trx, actor.accountId, id, row.kind));
    });
  }

  private async kindOf(ex: Executor, accountId: number, id: number): Promise<string> {
    const own = await findEnrichment(ex, id);
    if (!own || own.account_id !== accountId) throw notFound("Feature");
    return own.kind;
  }

  /** Media objects for kinds: the account's read whole, new ones stored as the feature's files. */
  readonly media: KindMedia = {
    read: (accountId, mediaId) => this.deps.files.read(accountId, mediaId, KIND_MEDIA_MAX_BYTES),
    store: (feature, file) =>
      this.deps.files.store(
        { accountId: feature.accountId, containerId: feature.containerId, featureId: feature.id },
        file,
      ),
  };

  /** The KindApi a kind's own routes and jobs use. */
  kindApi(kind: EnrichmentKind): KindApi {
    return {
      config: this.deps.config,
      now: () => this.now(),
      media: this.media,
      pdf: this.deps.pdf,
      db: this.deps.database.db,
      recipients: (containerId) => recipientsOf(this.deps.database.db, containerId),
      schema: kindSchemas(kind).object,
      get: async (accountId, rawId) => {
        const { db } = this.deps.database;
        const row = await this.deps.features.find(db, accountId, rawId, kind.name);
        return this.view(db, row);
      },
      provider: async (featureId) => {
        if (!this.resolver) throw new Error("the enrichment providers are not wired");
        return this.resolver.forFeature(this.deps.database.db, featureId);
      },
      present: async (view) => {
        const { db } = this.deps.database;
        return (await this.deps.features.present(
          db,
          await this.deps.features.find(db, view.accountId, view.id, kind.name),
        )) as Record<string, unknown>;
      },
      setStatus: (actor, id, status, opts) =>
        this.setStatus({ ...actor, applicationId: actor.applicationId ?? null }, id, status, opts),
    };
  }
}
