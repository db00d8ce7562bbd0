import type { JobHandler } from "../../jobs/worker.js";
import type { BlobRef } from "./media.repository.js";
import type { MediaService } from "./media.service.js";
import { BLOBS_DELETE_JOB, STORAGE_CLEANUP_JOB } from "./media-storage.service.js";

/**
 * Job kinds of the media feature: `blobs.delete` (payload `{ blobs: [{ store, key }] }`, enqueued by
 * media, requests and expiry) and the recurring `media.cleanup`, whose first run is queued here
 * when a worker is built (each run queues the next).
 */
export function mediaJobHandlers(
  media: MediaService,
  onScheduleError: (err: Error) => void,
): Map<string, JobHandler> {
  media.storage.scheduleCleanup().catch(onScheduleError);
  return new Map<string, JobHandler>([
    [BLOBS_DELETE_JOB, (payload: { blobs?: BlobRef[] }) => media.storage.deleteBlobs(payload.blobs ?? [])],
    [
      STORAGE_CLEANUP_JOB,
      async (_payload, job) => {
        await media.storage.cleanup();
        await media.storage.scheduleCleanup(job.id);
      },
    ],
  ]);
}
