/**
 * Storage housekeeping of media: deleting blobs queued by removals, the periodic cleanup of stale
 * uploads and orphan blobs (`ferry storage gc`), and re-wrapping data keys after a KEK rotation.
 */
import { unwrapDataKey, wrapDataKey } from "../../crypto/envelope.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/index.js";
import { enqueueBlobDeletion, type MediaDeps } from "./media.context.js";
import { MediaCleanupJob } from "./media.jobs.js";
import {
  type BlobRef,
  deleteMediaRow,
  deleteParts,
  findKeysToRewrap,
  findStaleUploads,
  lockMedia,
  referencedBlobKeys,
  replaceWrappedKey,
} from "./media.repository.js";

/** What one cleanup run did. */
interface CleanupReport {
  staleUploadsRemoved: number;
  orphanBlobsDeleted: number;
  blobsChecked: number;
  /** Temporary files of writes a crash interrupted (local store). */
  temporaryFilesRemoved: number;
  /** S3 multipart uploads never completed, older than S3_ABORT_INCOMPLETE_UPLOADS_HOURS (s3 store). */
  incompleteUploadsAborted: number;
}

const BATCH = 200;

/** Blob deletion, cleanup and key re-wrapping. */
export class MediaStorageService {
  constructor(private readonly deps: MediaDeps) {}

  /**
   * The `blobs.delete` job: deletes each blob written by this deployment's store (deleting an absent
   * blob succeeds, so re-runs are harmless). Blobs of another store kind are logged and skipped.
   */
  async deleteBlobs(blobs: BlobRef[]): Promise<void> {
    const { blobStore, logger } = this.deps;
    for (const blob of blobs ?? []) {
      if (blob.store !== blobStore.kind) {
        logger.warn(
          { key: blob.key, store: blob.store },
          "blob of another blob store kind left in place; delete it there",
        );
        continue;
      }
      await blobStore.delete(blob.key);
    }
  }

  /**
   * Removes uploads still incomplete UPLOAD_STALE_HOURS after their last chunk (rows, then blobs by
   * job), deletes blobs under `media/` that no part references and that are older than that same
   * grace period (so uploads in flight are never touched), the store's temporary files of
   * writes a crash interrupted, older than that period too, and (S3) multipart uploads never
   * completed, started S3_ABORT_INCOMPLETE_UPLOADS_HOURS ago or earlier.
   */
  async cleanup(): Promise<CleanupReport> {
    const { database, clock, config, audit, jobs, blobStore, logger } = this.deps;
    const cutoff = new Date(clock.now().getTime() - config.UPLOAD_STALE_HOURS * 3_600_000);
    const report: CleanupReport = {
      staleUploadsRemoved: 0,
      orphanBlobsDeleted: 0,
      blobsChecked: 0,
      temporaryFilesRemoved: 0,
      incompleteUploadsAborted: 0,
    };
    for (;;) {
      const stale = await findStaleUploads(database.db, toTimestamp(cutoff), BATCH);
      if (stale.length === 0) break;
      for (const media of stale) {
        await database.db.transaction().execute(async (trx) => {
          const locked = await lockMedia(trx, media.id, database.dialect === "postgres");
          if (locked?.state !== "uploading" || locked.updated >= toTimestamp(cutoff)) return;
          const blobs = await deleteParts(trx, media.id);
          await deleteMediaRow(trx, media.id);
          await enqueueBlobDeletion(jobs, trx, blobs);
          await audit.write(trx, {
            accountId: media.account_id,
            code: AuditCode.ENTITY_DELETED,
            relatedModel: "media",
            relationKey: media.id,
            value: `incomplete upload removed after ${config.UPLOAD_STALE_HOURS} hours without a chunk (${media.received_chunks} of ${media.total_chunks} chunks)`,
          });
          report.staleUploadsRemoved++;
        });
        this.deps.digests.forget(media.id);
      }
      if (stale.length < BATCH) break;
    }
    let batch: { key: string; modifiedAt: Date }[] = [];
    const sweep = async () => {
      const referenced = await referencedBlobKeys(
        database.db,
        batch.map((b) => b.key),
      );
      for (const blob of batch) {
        if (referenced.has(blob.key)) continue;
        await blobStore.delete(blob.key);
        report.orphanBlobsDeleted++;
      }
      batch = [];
    };
    for await (const entry of blobStore.list("media/")) {
      report.blobsChecked++;
      if (entry.modifiedAt.getTime() >= cutoff.getTime()) continue;
      batch.push(entry);
      if (batch.length >= BATCH) await sweep();
    }
    await sweep();
    report.temporaryFilesRemoved = (await blobStore.sweepTemporaryFiles?.(cutoff)) ?? 0;
    const uploadsCutoff = new Date(
      clock.now().getTime() - config.S3_ABORT_INCOMPLETE_UPLOADS_HOURS * 3_600_000,
    );
    report.incompleteUploadsAborted = (await blobStore.abortIncompleteUploads?.(uploadsCutoff)) ?? 0;
    logger.info(report, "storage cleanup done");
    return report;
  }

  /**
   * Makes sure the periodic cleanup job is queued (once): at worker start, and by each run for the
   * next (`exceptJobId` is the run itself). Runs STORAGE_GC_INTERVAL_MINUTES apart.
   */
  async scheduleCleanup(exceptJobId?: number): Promise<void> {
    const { database, jobs, clock, config } = this.deps;
    // One atomic insert: a check-then-insert let two concurrent callers both queue a job on PostgreSQL.
    const runAt = new Date(clock.now().getTime() + config.STORAGE_GC_INTERVAL_MINUTES * 60_000);
    await jobs.enqueueUnlessPending(database.db, MediaCleanupJob, { runAt, exceptJobId });
  }

  /**
   * Re-wraps every media data key not wrapped under the ring's active kid with the active KEK;
   * blobs are untouched. Returns how many keys were re-wrapped. Safe to re-run and to run while
   * serving (a key removed meanwhile is skipped).
   */
  async rewrapDataKeys(): Promise<number> {
    const { database, keyRing } = this.deps;
    const kid = keyRing.activeKid;
    const kek = keyRing.derive(kid, "kek");
    let after = 0;
    let count = 0;
    for (;;) {
      const rows = await findKeysToRewrap(database.db, kid, after, BATCH);
      if (rows.length === 0) break;
      for (const row of rows) {
        after = row.id;
        const dek = unwrapDataKey(row.wrapped_key, (k) => keyRing.derive(k, "kek"));
        if (await replaceWrappedKey(database.db, row.id, row.wrapped_key, wrapDataKey(dek, kek, kid)))
          count++;
      }
    }
    return count;
  }
}
