import type { Logger } from "pino";
import type { Executor } from "../../db/database.js";
import { defineJob, type EmptyPayload } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { AuditCode } from "../audit/index.js";
import {
  dueFeatures,
  type FeatureRow,
  featuresOf,
  findFeatureById,
  finishFeature,
  markFilesDestroyed,
  permissionsOf,
  prerequisitesOf,
} from "./container-features.repository.js";
import { type ContainerDeps, nowText, rowLock } from "./containers.context.js";
import { containerRef, featureEventBody } from "./containers.presenter.js";
import {
  findContainerById,
  findItem,
  markItemOpened,
  type RecipientItemRow,
  updateContainer,
} from "./containers.repository.js";

/** The recurring job that expires container features past their expiry. */
export const ContainerSweepJob = defineJob<EmptyPayload>("containers.sweep");

/** Longest receiver_message of a feature, in characters. */
export const MAX_FEATURE_MESSAGE = 10_000;

/** Where an action of a recipient came from, for the audit log. */
export interface ActionSource {
  from?: string;
  method?: string;
  path?: string;
}

/**
 * Transitions of containers and their features, each with its audit entry and callback in one
 * transaction: a feature completes (pull files submitted, push files downloaded) or expires; at its
 * expiry its files are destroyed whatever its state (ADR 0058); a container is complete once no
 * feature is pending and one completed, expired when all expired, and sent again when a feature is
 * added to it while complete; a session's first open sends `session_opened`.
 */
export class ContainerLifecycle {
  constructor(
    private readonly deps: ContainerDeps & { jobs: JobQueue; logger: Logger; sweepIntervalSeconds: number },
  ) {}

  private async featureEvent(trx: Executor, row: FeatureRow): Promise<void> {
    const permissions = (await permissionsOf(trx, [row.id])).get(row.id) ?? [];
    const after = (await prerequisitesOf(trx, [row.id])).get(row.id) ?? [];
    const { extensions } = this.deps;
    const extension = extensions.owns(row.kind) ? await extensions.eventDetails(trx, row) : undefined;
    await this.deps.events.emit(trx, {
      accountId: row.account_id,
      containerId: row.container_id,
      type: "feature",
      body: { feature: featureEventBody(row, permissions, extension, after) },
    });
  }

  /**
   * Sends the `feature` callback of a feature whose kind-specific status changed while it stays
   * pending (an enrichment step opened, viewed, partially signed...), in `trx`.
   */
  async featureChanged(trx: Executor, featureId: number): Promise<void> {
    const row = await findFeatureById(trx, featureId);
    if (row) await this.featureEvent(trx, row);
  }

  /**
   * Completes a pending feature in `trx` (a pull's files submitted with `receiverMessage`, or a
   * push's files downloaded): `feature` callback, ABA-0030, then the container's own state. 422 when
   * it is no longer pending; 400 for a too long message.
   */
  async completeFeature(
    trx: Executor,
    featureId: number,
    opts: { receiverMessage?: string | null; source?: ActionSource } = {},
  ): Promise<FeatureRow> {
    const message = opts.receiverMessage;
    if (message && message.length > MAX_FEATURE_MESSAGE) {
      throw ValidationError.field(
        "receiver_message",
        `Ensure this field has no more than ${MAX_FEATURE_MESSAGE} characters.`,
      );
    }
    const now = nowText(this.deps);
    const before = await findFeatureById(trx, featureId);
    if (!before) throw notFound("Feature");
    if (before.expires_at !== null && before.expires_at <= now && before.state === "pending") {
      throw unprocessable("The feature has expired.");
    }
    const done = await finishFeature(trx, featureId, "complete", {
      now,
      ...(message !== undefined ? { receiverMessage: message } : {}),
    });
    if (!done) throw unprocessable(`The feature is already ${before.state}.`);
    const row = (await findFeatureById(trx, featureId))!;
    await this.deps.audit.write(trx, {
      accountId: row.account_id,
      code: AuditCode.ENTITY_UPDATED,
      relatedModel: "feature",
      relationKey: row.id,
      value: "complete",
      from: opts.source?.from ?? "",
      method: opts.source?.method ?? "",
      path: opts.source?.path ?? "",
    });
    await this.featureEvent(trx, row);
    await this.settleContainer(trx, row.container_id);
    return row;
  }

  /**
   * Sweeps one feature past its expiry in its own transaction: its files are destroyed (blobs queued
   * for deletion, data keys gone, ABA-0020 each) whether it was pending or complete; a pending one
   * becomes `expired` (ABA-0030, `feature` callback, the container settled), a complete one stays
   * complete (ABA-0030 "files destroyed at expiry"; no callback, as its state did not change).
   * False when it was not due or another sweep took it.
   */
  private async expireFeature(featureId: number): Promise<boolean> {
    const { deps } = this;
    return deps.database.db.transaction().execute(async (trx) => {
      const now = nowText(deps);
      const before = await findFeatureById(trx, featureId);
      if (
        !before ||
        before.files_destroyed_at !== null ||
        before.expires_at === null ||
        before.expires_at > now
      )
        return false;
      // One sweep takes the feature: the others find its files destroyed already.
      if (!(await markFilesDestroyed(trx, featureId, now))) return false;
      const expired = before.state === "pending" && (await finishFeature(trx, featureId, "expired", { now }));
      if (expired && deps.extensions.owns(before.kind)) await deps.extensions.expired(trx, before, now);
      await deps.media.removeAllOfFeature(trx, featureId, now, "its feature expired");
      const row = (await findFeatureById(trx, featureId))!;
      await deps.audit.write(trx, {
        accountId: row.account_id,
        code: AuditCode.ENTITY_UPDATED,
        relatedModel: "feature",
        relationKey: row.id,
        value: expired ? "expired" : "files destroyed at expiry",
      });
      if (expired) {
        await this.featureEvent(trx, row);
        await this.settleContainer(trx, row.container_id);
      }
      return true;
    });
  }

  /**
   * Puts a container's state in line with its features, with a `container` callback (and ABA-0030)
   * whenever it changes: `sent` while a feature is pending (so a complete container that gets a new
   * feature is sent again, `completed_at` cleared), `complete` once none is pending and one is
   * complete, `expired` when all expired. A draft stays a draft while a feature is pending; an
   * expired container and one without features stay as they are. Locks the container row first
   * (PostgreSQL), so a feature added while another completes never leaves it complete.
   */
  async settleContainer(trx: Executor, containerId: number): Promise<void> {
    const container = await findContainerById(trx, containerId, { lock: rowLock(this.deps, "update") });
    if (!container || container.state === "expired") return;
    const features = await featuresOf(trx, containerId);
    if (features.length === 0) return;
    const state = features.some((f) => f.state === "pending")
      ? container.state === "draft"
        ? "draft"
        : "sent"
      : features.some((f) => f.state === "complete")
        ? "complete"
        : "expired";
    if (state === container.state) return;
    const now = nowText(this.deps);
    const row = await updateContainer(trx, containerId, {
      state,
      completed_at: state === "sent" ? null : now,
      updated: now,
    });
    const shared = await this.deps.records.findContainer(trx, row.account_id, containerId);
    await this.deps.audit.write(trx, {
      accountId: row.account_id,
      code: AuditCode.ENTITY_UPDATED,
      relatedModel: "container",
      relationKey: containerId,
      value: state,
    });
    if (shared) {
      await this.deps.events.emit(trx, {
        accountId: row.account_id,
        containerId,
        type: "container",
        body: { container: containerRef(row, shared) },
      });
    }
  }

  /**
   * Records that the session of `item` was opened: the first open of each item sends
   * `session_opened` (with the container and the recipient). Returns whether it was the first.
   */
  async openSession(trx: Executor, item: RecipientItemRow, source: ActionSource = {}): Promise<boolean> {
    if (item.opened_at !== null) return false;
    const now = nowText(this.deps);
    // Two first opens at once: only the one that marks the item sends the callback.
    if (!(await markItemOpened(trx, item.id, now))) return false;
    const shared = await this.deps.records.findContainer(trx, item.account_id, item.container_id);
    await this.deps.audit.write(trx, {
      accountId: item.account_id,
      code: AuditCode.ENTITY_UPDATED,
      relatedModel: "recipient_item",
      relationKey: item.id,
      value: "session opened",
      from: source.from ?? "",
      method: source.method ?? "",
      path: source.path ?? "",
    });
    await this.deps.events.emit(trx, {
      accountId: item.account_id,
      containerId: item.container_id,
      type: "session_opened",
      body: {
        container: { id: item.container_id, identifier: shared?.identifier ?? "" },
        recipient: item.recipient_id,
        recipient_item: item.id,
      },
    });
    return true;
  }

  /** The account's item `id` (for the sandbox helper). */
  async findItem(ex: Executor, accountId: number, id: number): Promise<RecipientItemRow | undefined> {
    return findItem(ex, accountId, id);
  }

  /**
   * Sweeps every feature past its expiry whose files were not destroyed yet (pending or complete),
   * one transaction each; returns how many it swept. Safe to run concurrently: each feature is taken
   * by one transaction only.
   */
  async expireDueFeatures(batchSize = 100): Promise<number> {
    let expired = 0;
    for (;;) {
      const due = await dueFeatures(this.deps.database.db, nowText(this.deps), batchSize);
      let progressed = false;
      for (const { id } of due) {
        try {
          if (await this.expireFeature(id)) {
            expired += 1;
            progressed = true;
          }
        } catch (err) {
          this.deps.logger.error({ err: (err as Error).message, feature: id }, "feature expiry failed");
        }
      }
      if (due.length < batchSize || !progressed) return expired;
    }
  }

  /** Queues the first sweep if none is pending (when a worker starts). */
  async ensureSweepScheduled(): Promise<void> {
    await this.deps.jobs.enqueueUnlessPending(this.deps.database.db, ContainerSweepJob, {
      maxAttempts: 1_000_000,
    });
  }

  /** The sweep job: queues its next run, then expires what is due. */
  async runSweepJob(jobId: number): Promise<void> {
    const runAt = new Date(this.deps.clock.now().getTime() + this.deps.sweepIntervalSeconds * 1000);
    await this.deps.jobs.enqueueUnlessPending(this.deps.database.db, ContainerSweepJob, {
      runAt,
      maxAttempts: 1_000_000,
      exceptJobId: jobId,
    });
    await this.expireDueFeatures();
  }
}
