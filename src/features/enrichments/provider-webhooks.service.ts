/**
 * Provider webhooks, reconciliation and retention (ADR 0063). A webhook arrives at
 * `POST /v1/providers/<provider>/webhook/<connection secret>/`, is verified with the provider's own
 * scheme before anything is stored (401 otherwise), recorded sealed once per (connection, event id)
 * with the job that applies it in one transaction (a replay is a 200 no-op), then applied by the job
 * idempotently. A periodic job asks providers for steps still open (missed webhooks); another
 * destroys results past their kind's retention.
 */
import type { Logger } from "pino";
import type {
  EnrichmentProvider,
  RawWebhook,
  WebhookEvent,
} from "../../adapters/enrichment-provider/enrichment-provider.js";
import { ProviderError } from "../../adapters/enrichment-provider/enrichment-provider.js";
import type { JobQueue } from "../../jobs/queue.js";
import { AppError, notFound } from "../../shared/errors.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/index.js";
import { openSecret, sealSecret } from "../notifications/index.js";
import {
  EnrichmentPurgeJob,
  ProviderCancelJob,
  ProviderReconcileJob,
  ProviderWebhookJob,
} from "./enrichment-jobs.js";
import {
  connectionByWebhookHash,
  findByProviderRef,
  findConnectionById,
  findEnrichment,
  findWebhookEvent,
  insertWebhookEvent,
  markWebhookProcessed,
  openProviderSteps,
  resultsDue,
  updateEnrichment,
} from "./enrichments.repository.js";
import type { EnrichmentsService } from "./enrichments.service.js";
import { type ProviderConnections, webhookSecretHash } from "./provider-connections.service.js";

export { EnrichmentPurgeJob, ProviderCancelJob, ProviderReconcileJob, ProviderWebhookJob };

const BODY_LABEL = (connectionId: number) => `provider-webhook:${connectionId}`;

/** What an inbox row holds (sealed): the raw body for the audit, the verified events for the job. */
interface StoredEvent {
  body: string;
  event: WebhookEvent;
}

/** The webhook ingress, its job, reconciliation and the retention purge. */
export class ProviderWebhooks {
  constructor(
    private readonly engine: EnrichmentsService,
    private readonly connections: ProviderConnections,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
  ) {}

  private get deps() {
    return this.engine.deps;
  }

  /**
   * Verifies and records a webhook: 404 for an unknown secret or a provider that is not the
   * connection's, 401 when the provider's verification fails (nothing stored). Returns how many
   * events were new (replays count 0).
   */
  async receive(
    providerId: string,
    secret: string,
    raw: RawWebhook,
  ): Promise<{ received: number; new: number }> {
    const { db } = this.deps.database;
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(secret)) throw notFound("Webhook");
    const connection = await connectionByWebhookHash(db, webhookSecretHash(secret));
    if (!connection || connection.provider !== providerId) throw notFound("Webhook");
    const provider = await this.connections.forConnection(connection);
    let events: WebhookEvent[];
    try {
      events = provider.verifyWebhook(raw);
    } catch (error) {
      if (error instanceof ProviderError)
        throw new AppError("AUTHENTICATION_FAILURE", "The webhook's signature does not verify.");
      throw error;
    }
    let fresh = 0;
    await db.transaction().execute(async (trx) => {
      for (const event of events) {
        const stored: StoredEvent = { body: raw.body.toString("base64"), event };
        const sealed = sealSecret(this.deps.keyRing, JSON.stringify(stored), BODY_LABEL(connection.id));
        const row = await insertWebhookEvent(trx, {
          account_id: connection.account_id,
          connection_id: connection.id,
          provider: connection.provider,
          event_id: event.eventId.slice(0, 200),
          body_kid: sealed.kid,
          body: sealed.ciphertext,
          received_at: this.engine.now(),
          processed_at: null,
          outcome: null,
        });
        if (!row) continue;
        fresh += 1;
        await this.jobs.enqueue(trx, ProviderWebhookJob, { event: row.id });
      }
    });
    return { received: events.length, new: fresh };
  }

  /** The job: applies a recorded event once (a feature no longer pending is left as it is). */
  async apply(eventId: number): Promise<void> {
    const { db } = this.deps.database;
    const row = await findWebhookEvent(db, eventId);
    if (!row || row.processed_at !== null) return;
    const stored = JSON.parse(
      openSecret(
        this.deps.keyRing,
        { kid: row.body_kid, ciphertext: row.body },
        BODY_LABEL(row.connection_id),
      ),
    ) as StoredEvent;
    const { ref } = stored.event;
    let { outcome } = stored.event;
    const found = ref ? await findByProviderRef(db, row.connection_id, ref) : undefined;
    if (found && outcome) {
      const connection = await findConnectionById(db, row.connection_id);
      if (connection)
        outcome = await this.settle(found.feature_id, found.account_id, outcome, false, () =>
          this.connections.forConnection(connection),
        );
    }
    await db.transaction().execute(async (trx) => {
      const own = ref ? await findByProviderRef(trx, row.connection_id, ref) : undefined;
      let result = "ignored";
      if (own && outcome)
        result = await this.applyOutcome(trx, own.feature_id, own.account_id, own.status, outcome);
      await markWebhookProcessed(trx, row.id, this.engine.now(), result);
    });
  }

  /**
   * Lets the feature's kind settle a provider outcome before it is applied (outside any
   * transaction: the kind may call its provider and store files). A feature no longer pending,
   * or a kind without `settle`, keeps the outcome as it came.
   */
  private async settle(
    featureId: number,
    accountId: number,
    outcome: NonNullable<WebhookEvent["outcome"]>,
    fetched: boolean,
    provider: () => Promise<EnrichmentProvider>,
  ): Promise<NonNullable<WebhookEvent["outcome"]>> {
    const { db } = this.deps.database;
    const kindName = await this.kindName(db, featureId);
    const kind = kindName ? this.engine.kind(kindName) : undefined;
    if (!kind?.settle || !kindName) return outcome;
    const row = await this.deps.features.find(db, accountId, featureId, kindName);
    if (row.state !== "pending") return outcome;
    return kind.settle({
      feature: await this.engine.view(db, row),
      outcome,
      fetched,
      provider: await provider(),
      media: this.engine.media,
    });
  }

  private async applyOutcome(
    trx: Parameters<EnrichmentsService["applyStatus"]>[0],
    featureId: number,
    accountId: number,
    current: string,
    outcome: NonNullable<WebhookEvent["outcome"]>,
  ): Promise<string> {
    const row = await this.deps.features.find(
      trx,
      accountId,
      featureId,
      (await this.kindName(trx, featureId)) ?? "",
    );
    if (row.state !== "pending") return "not pending";
    if (outcome.status === current && !outcome.final) return "unchanged";
    const kind = this.engine.kind(row.kind);
    if (!kind?.statuses.includes(outcome.status)) return "unknown status";
    try {
      await this.engine.applyStatus(
        trx,
        row,
        outcome.status,
        { accountId },
        {
          result: outcome.result,
          auditValue: `${row.kind} ${outcome.status} (provider)`,
        },
      );
      return outcome.status;
    } catch (error) {
      if (error instanceof AppError && (error.status === 409 || error.status === 422)) return error.detail;
      throw error;
    }
  }

  private async kindName(trx: Parameters<EnrichmentsService["applyStatus"]>[0], featureId: number) {
    return (await findEnrichment(trx, featureId))?.kind;
  }

  /**
   * The cancel job: cancels a deleted step at its vendor. A retryable failure is thrown (the job
   * is retried); any other is logged, as the step is gone on Ferry's side either way.
   */
  async cancel(payload: { connection: number; ref: string }): Promise<void> {
    const connection = await findConnectionById(this.deps.database.db, payload.connection);
    if (!connection) return;
    try {
      await (await this.connections.forConnection(connection)).cancel(payload.ref);
    } catch (err) {
      if (err instanceof ProviderError && err.retryable) throw err;
      this.logger.warn({ err: (err as Error).message, connection: connection.id }, "provider cancel failed");
    }
  }

  /** Asks the provider of every step still open at a vendor for its status; returns how many changed. */
  async reconcile(batch = 100): Promise<number> {
    const { db } = this.deps.database;
    let changed = 0;
    for (const own of await openProviderSteps(db, batch)) {
      try {
        const connection =
          own.connection_id === null ? undefined : await findConnectionById(db, own.connection_id);
        if (!connection || !own.provider_ref) continue;
        const provider = await this.connections.forConnection(connection);
        const fetched = await provider.status(own.provider_ref);
        const outcome = await this.settle(
          own.feature_id,
          own.account_id,
          fetched,
          true,
          async () => provider,
        );
        const result = await db
          .transaction()
          .execute((trx) => this.applyOutcome(trx, own.feature_id, own.account_id, own.status, outcome));
        if (result === outcome.status) changed += 1;
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message, feature: own.feature_id },
          "provider status fetch failed",
        );
      }
    }
    return changed;
  }

  /** Destroys results past their kind's retention (audited); returns how many. */
  async purge(batch = 100): Promise<number> {
    const { db } = this.deps.database;
    let purged = 0;
    for (const kind of this.deps.kinds) {
      const days = kind.retentionDays(this.deps.config);
      if (days === null) continue;
      const before = toTimestamp(new Date(this.deps.clock.now().getTime() - days * 86_400_000));
      for (const due of await resultsDue(db, kind.name, before, batch)) {
        await db.transaction().execute(async (trx) => {
          const now = this.engine.now();
          await updateEnrichment(trx, due.feature_id, {
            result: null,
            result_kid: null,
            result_purged_at: now,
            updated: now,
          });
          await this.deps.files.destroyOfFeature(
            trx,
            due.feature_id,
            now,
            `${kind.name} retention end (${days} days)`,
          );
          await this.deps.audit.write(trx, {
            accountId: due.account_id,
            code: AuditCode.ENTITY_UPDATED,
            relatedModel: "feature",
            relationKey: due.feature_id,
            value: `${kind.name} result destroyed at retention end (${days} days)`,
          });
        });
        purged += 1;
      }
    }
    return purged;
  }

  /** Queues the recurring jobs if none is pending (when a worker starts). */
  async ensureScheduled(): Promise<void> {
    const { db } = this.deps.database;
    await this.jobs.enqueueUnlessPending(db, ProviderReconcileJob, { maxAttempts: 1_000_000 });
    await this.jobs.enqueueUnlessPending(db, EnrichmentPurgeJob, { maxAttempts: 1_000_000 });
  }

  /** A recurring job: queues its next run, then does its work. */
  async runRecurring(
    job: typeof ProviderReconcileJob | typeof EnrichmentPurgeJob,
    jobId: number,
  ): Promise<void> {
    const seconds =
      job === ProviderReconcileJob
        ? this.deps.config.ENRICHMENT_RECONCILE_SECONDS
        : this.deps.config.ENRICHMENT_PURGE_SECONDS;
    const runAt = new Date(this.deps.clock.now().getTime() + seconds * 1000);
    await this.jobs.enqueueUnlessPending(this.deps.database.db, job, {
      runAt,
      maxAttempts: 1_000_000,
      exceptJobId: jobId,
    });
    if (job === ProviderReconcileJob) await this.reconcile();
    else await this.purge();
  }
}
