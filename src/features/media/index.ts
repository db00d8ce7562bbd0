/**
 * The media feature: encrypted files of requests (spec: Medias) — whole and chunked uploads,
 * streamed and ranged downloads, download-once, storage cleanup and data-key rotation. The rules of
 * the request a media belongs to come through `targets`.
 */
import type { Logger } from "pino";
import type { BlobStore } from "../../adapters/blob-store/blob-store.js";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { bindCommands, type Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import { mediaCommands } from "./media.commands.js";
import {
  DeleteBlobsJob,
  EndDownloadGraceJob,
  type FeatureTargets,
  MediaCleanupJob,
  type MediaTargets,
} from "./media.jobs.js";
import { mediaRoutes } from "./media.routes.js";
import { MediaService } from "./media.service.js";
import { DigestCache } from "./media-digest-cache.js";
import { saveDigestSnapshot } from "./media-digest-state.js";
import { useResumableDigests } from "./media-digests.js";

export type { FeatureFile, FeatureFilesService, FeatureFileTarget } from "./feature-files.service.js";
export { rawChunkParts, registerRawBodyParser } from "./media.body.js";
export { mediaCommands } from "./media.commands.js";
export { blobStoreOptionsFromConfig, type CallMeta, type UploadPart } from "./media.context.js";
export type {
  FeatureTargets,
  FeatureUploader,
  MediaTarget,
  MediaTargets,
  UploadTarget,
} from "./media.jobs.js";
export {
  type MediaInRequestView,
  type MediaView,
  presentMedia,
  presentMediaInRequest,
} from "./media.presenter.js";
export type { MediaRow } from "./media.repository.js";
export { callMeta, receiveUpload, registerUploadParsers, sendDownload } from "./media.routes.js";
export { MediaSchema } from "./media.schemas.js";
export type { MediaService, SessionFeature } from "./media.service.js";
export { streamZip } from "./zip-download.js";

/** Builds the media feature. */
export function createMediaFeature(deps: {
  config: Config;
  clock: Clock;
  logger: Logger;
  database: Database;
  blobStore: BlobStore;
  keyRing: KeyRing;
  jobs: JobQueue;
  audit: AuditWriter;
  targets: MediaTargets;
  features: FeatureTargets;
}): Feature<MediaService> {
  // The running digests of chunked uploads, saved in the database so any node continues them
  // (ADR 0075), when the deployment asks for it: resumable hashes cost more CPU than native ones.
  const setting = deps.config.UPLOAD_DIGEST_STATE;
  const resumable = setting === "on" || (setting === "auto" && deps.config.DATABASE_URL !== undefined);
  useResumableDigests(resumable);
  const digests = new DigestCache(
    undefined,
    undefined,
    undefined,
    resumable ? (mediaId, snapshot) => saveDigestSnapshot(deps.database.db, mediaId, snapshot) : undefined,
  );
  const service = new MediaService({ ...deps, digests });
  const { storage, downloads } = service;
  return {
    service,
    routes: [mediaRoutes(service, deps.config)],
    jobs: [
      handleJob(DeleteBlobsJob, (payload) => storage.deleteBlobs(payload.blobs ?? [])),
      handleJob(EndDownloadGraceJob, (payload) => downloads.limits.endGrace(payload.mediaId)),
      handleJob(MediaCleanupJob, async (_payload, job) => {
        await storage.cleanup();
        await storage.scheduleCleanup(job.id);
      }),
    ],
    commands: bindCommands(mediaCommands, { storage, keyRing: deps.keyRing }),
    scheduleRecurringJobs: () => storage.scheduleCleanup(),
  };
}
