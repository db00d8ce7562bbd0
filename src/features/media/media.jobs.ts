import type { Executor } from "../../db/database.js";
import { defineJob, type EmptyPayload } from "../../jobs/job.js";
import type { BlobRef } from "./media.repository.js";

/** Deletes blobs whose rows are gone (enqueued in the transaction that dropped them). */
export const DeleteBlobsJob = defineJob<{ blobs: BlobRef[] }>("blobs.delete");

/**
 * Run when the grace period of a download of a file at its download limit ends: destroys the file
 * once no download of it may still be resumed (ADR 0021). Enqueued with the download, at that time.
 */
export const EndDownloadGraceJob = defineJob<{ mediaId: number }>("media.download_grace_end");

/** The recurring storage cleanup: stale incomplete uploads and orphan blobs. */
export const MediaCleanupJob = defineJob<EmptyPayload>("media.cleanup");

/** The request a media belongs to, as upload and download rules read it (flags are 0/1). */
export interface MediaTarget {
  id: number;
  account_id: number;
  type: "push" | "pull";
  is_draft: number;
  complete: number;
  is_expired: number;
  expires_at: string | null;
  /** Comma-separated lower-case extensions without dots a pull request accepts; null = any. */
  allowed_extensions: string | null;
  max_file_bytes: number | null;
  /** "container": the id is a container's; its files go through its features. */
  kind: "request" | "container";
}

/** What media need from the feature that owns the requests they belong to (the requests feature answers). */
export interface MediaTargets {
  /** The request `id` of any account (undefined when absent); callers check the owner. */
  findForMedia(ex: Executor, requestId: number): Promise<MediaTarget | undefined>;
}

/** Where a new file goes and the rules it obeys, once the uploader was checked against its owner. */
export interface UploadTarget {
  /** The media's `request`: the request, or the container of a feature (one id space). */
  requestId: number;
  accountId: number;
  /** The container feature the file belongs to; null for a request's file. */
  featureId: number | null;
  /** The container recipient uploading it in their session; null otherwise. */
  recipientId: number | null;
  /** Extensions (lower case, no dots) a recipient may send; null: any. */
  allowedExtensions: string[] | null;
  /** Largest file a recipient may send, in bytes; null: the deployment's limit. */
  maxFileBytes: number | null;
  /** Most files (not removed) the target holds from this uploader; null: any number. */
  maxFiles: number | null;
  /** How often each new file may be downloaded (null: without limit); 1 is download-once. */
  downloadLimit: number | null;
}

/** Who takes a file of a feature: its owner, or a recipient of its container in their session. */
export type FeatureUploader =
  | { kind: "owner"; accountId: number }
  | { kind: "recipient"; recipientId: number };

/** What media need from the feature that owns container features (the containers feature answers). */
export interface FeatureTargets {
  /**
   * Checks that feature `featureId` takes files from `who` now and returns where they go. Throws
   * 404 (absent, another account's, not visible to the recipient) or 422 (closed, wrong direction).
   */
  uploadTarget(ex: Executor, featureId: number, who: FeatureUploader): Promise<UploadTarget>;
  /**
   * Checks that recipient `recipientId` may download the owner's files of feature `featureId` now.
   * Throws 404 (absent or not visible to the recipient, not a push feature) or 410 (expired).
   */
  checkDownload(ex: Executor, featureId: number, recipientId: number): Promise<void>;
}
