/**
 * The media feature's entry point: reading and deleting media, plus the upload, download and
 * storage services. Routes, recipient pages, jobs and the CLI all go through `MediaService`.
 */

import type { Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import { AppError, notFound } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import type { PageRequest } from "../../shared/pagination.js";
import { AuditCode } from "../audit/index.js";
import { type Download, type DownloadOptions, MediaDownloadService } from "./download-media.service.js";
import { FeatureFilesService } from "./feature-files.service.js";
import { type CallMeta, enqueueBlobDeletion, type MediaDeps, type UploadPart } from "./media.context.js";
import { type MediaView, presentMedia } from "./media.presenter.js";
import {
  blobsOfFeature,
  blobsOfRequest,
  countUploadingMedia,
  deleteMediaRow,
  deleteParts,
  findMedia,
  listMedia,
  listMediaOfFeature,
  listMediaOfRequest,
  listMediaOfRequests,
  listParts,
  lockMedia,
  type MediaRow,
  removeRequestMedia,
} from "./media.repository.js";
import { MediaStorageService } from "./media-storage.service.js";
import { MediaUploadService } from "./upload-media.service.js";

/** A container session's upload: into which feature (of container `requestId`), by which recipient. */
export interface SessionFeature {
  featureId: number;
  recipientId: number;
}

/** Media operations for owners (API) and recipients (pages); see the services for the rules. */
export class MediaService {
  readonly uploads: MediaUploadService;
  readonly downloads: MediaDownloadService;
  readonly storage: MediaStorageService;
  /** Whole-file reads and stores for other features (the PDF engine's documents, sealed copies). */
  readonly files: FeatureFilesService;

  constructor(private readonly deps: MediaDeps) {
    this.files = new FeatureFilesService(deps);
    this.uploads = new MediaUploadService(deps);
    this.downloads = new MediaDownloadService(deps);
    this.storage = new MediaStorageService(deps);
  }

  /** POST /v1/media/ as the owner: a whole file or the first chunk, into a draft push request. */
  async create(auth: AuthContext, parts: AsyncIterable<UploadPart>, meta: CallMeta = {}): Promise<MediaView> {
    const row = await this.uploads.create(
      { kind: "owner", accountId: auth.accountId, applicationId: auth.applicationId },
      parts,
      meta,
    );
    return presentMedia(row);
  }

  /** PUT /v1/media/{id} as the owner: one chunk. */
  async putChunk(
    auth: AuthContext,
    id: string,
    parts: AsyncIterable<UploadPart>,
    meta: CallMeta = {},
  ): Promise<MediaView> {
    const row = await this.uploads.putChunk(
      { kind: "owner", accountId: auth.accountId, applicationId: auth.applicationId },
      id,
      parts,
      meta,
    );
    return presentMedia(row);
  }

  /**
   * The recipient's upload into open pull request `requestId` (the caller has resolved and
   * authorised the recipient): a whole file or the first chunk; same limits and encryption as the
   * API, `uploaded_by = "recipient"`, downloadable once by the owner. 422 when the request is not
   * an open, sent, unexpired pull request.
   */
  async recipientCreate(
    requestId: number,
    parts: AsyncIterable<UploadPart>,
    meta: CallMeta = {},
    feature?: SessionFeature,
  ): Promise<MediaView> {
    return presentMedia(await this.uploads.create({ kind: "recipient", requestId, ...feature }, parts, meta));
  }

  /** The recipient's further chunk of one of their uploads in request `requestId` (404 for other media). */
  async recipientPutChunk(
    requestId: number,
    mediaId: string | number,
    parts: AsyncIterable<UploadPart>,
    meta: CallMeta = {},
    feature?: SessionFeature,
  ): Promise<MediaView> {
    return presentMedia(
      await this.uploads.putChunk({ kind: "recipient", requestId, ...feature }, mediaId, parts, meta),
    );
  }

  /**
   * The recipient removes one of their files of request `requestId` before submitting (finished or
   * not): row, parts and blobs go, ABA-0020. 404 for other media, 422 once the request is closed.
   */
  async recipientRemove(
    requestId: number,
    mediaId: string | number,
    meta: CallMeta = {},
    feature?: SessionFeature,
  ): Promise<void> {
    await this.uploads.remove({ kind: "recipient", requestId, ...feature }, mediaId, meta);
  }

  /** Every media of request `requestId` in upload order (any state), as API Media objects. */
  async listOfRequest(requestId: number): Promise<MediaView[]> {
    return (await listMediaOfRequest(this.deps.database.db, requestId)).map(presentMedia);
  }

  /** Media rows of a request (for presenters that add `file`). */
  async rowsOfRequest(requestId: number): Promise<MediaRow[]> {
    return listMediaOfRequest(this.deps.database.db, requestId);
  }

  /** Media rows of several requests, in upload order, read through `ex`. */
  async rowsOfRequests(ex: Executor, requestIds: number[]): Promise<MediaRow[]> {
    return listMediaOfRequests(ex, requestIds);
  }

  /** How many of the request's media are still uploading. */
  async countUploading(ex: Executor, requestId: number): Promise<number> {
    return countUploadingMedia(ex, requestId);
  }

  /** Part numbers (1-based) a media already holds, so an upload resumes with the missing ones. */
  async receivedChunks(mediaId: number): Promise<number[]> {
    return (await listParts(this.deps.database.db, mediaId)).map((p) => Number(p.part_index));
  }

  /** Media rows of a container feature, in upload order, read through `ex`. */
  async rowsOfFeature(ex: Executor, featureId: number): Promise<MediaRow[]> {
    return listMediaOfFeature(ex, featureId);
  }

  /**
   * Queues, inside `trx`, the deletion of every blob of a feature's media: call it in the
   * transaction that deletes the feature (its media rows go with it).
   */
  async queueBlobDeletionOfFeature(trx: Executor, featureId: number): Promise<void> {
    await enqueueBlobDeletion(this.deps.jobs, trx, await blobsOfFeature(trx, featureId));
  }

  /**
   * Destroys every media of a feature inside `trx` (its expiry), whatever the feature's state: state
   * `removed` with `removed_at`, data keys destroyed, parts deleted, their blobs queued for deletion,
   * and ABA-0020 for each file ("media destroyed: <why>"). Returns the ids of the media destroyed.
   */
  async removeAllOfFeature(trx: Executor, featureId: number, now: string, why: string): Promise<number[]> {
    return this.files.destroyOfFeature(trx, featureId, now, why);
  }

  /**
   * Queues, inside `trx`, the deletion of every blob of the request's media: call it in the
   * transaction that deletes the request (its media rows go with it).
   */
  async queueBlobDeletionOfRequest(trx: Executor, requestId: number): Promise<void> {
    await enqueueBlobDeletion(this.deps.jobs, trx, await blobsOfRequest(trx, requestId));
  }

  /**
   * Removes every media of the request inside `trx` (expiry): state `removed`, data keys
   * destroyed, parts deleted, their blobs queued for deletion. Returns how many blobs go.
   */
  async removeAllOfRequest(trx: Executor, requestId: number, now: string): Promise<number> {
    const blobs = await removeRequestMedia(trx, requestId, now);
    await enqueueBlobDeletion(this.deps.jobs, trx, blobs);
    return blobs.length;
  }

  /** GET /v1/media/: the account's media, newest first, optionally of one request (`?request=`). */
  async list(
    auth: AuthContext,
    page: PageRequest,
    filter: { request?: string | undefined },
  ): Promise<{ results: MediaView[]; count: number }> {
    let requestId: number | undefined;
    if (filter.request !== undefined && filter.request !== "") {
      requestId = parseId(filter.request);
      if (requestId === undefined) throw new AppError("INVALID_REQUEST", "request must be an integer id.");
    }
    const { rows, count } = await listMedia(
      this.deps.database.db,
      auth.accountId,
      { requestId },
      {
        offset: page.offset,
        limit: page.pageSize,
      },
    );
    return { results: rows.map(presentMedia), count };
  }

  /**
   * GET /v1/media/{id}/: information only (404 for absent or another account's), with the chunk
   * numbers the server holds (`received_chunks`) so that a client can resume an upload.
   */
  async get(auth: AuthContext, id: string): Promise<MediaView & { received_chunks: number[] }> {
    const mediaId = parseId(id);
    const row =
      mediaId === undefined ? undefined : await findMedia(this.deps.database.db, auth.accountId, mediaId);
    if (!row) throw notFound("Media");
    return { ...presentMedia(row), received_chunks: await this.receivedChunks(row.id) };
  }

  /** GET /v1/media/{id}/download as the owner. */
  async download(
    auth: AuthContext,
    id: string,
    options: DownloadOptions,
    meta: CallMeta = {},
  ): Promise<Download> {
    return this.downloads.open(
      { kind: "owner", accountId: auth.accountId, applicationId: auth.applicationId },
      id,
      options,
      meta,
    );
  }

  /** A push file's download by the recipient of sent push request `requestId` (ABB-0010 written). */
  async recipientDownload(
    requestId: number,
    mediaId: string | number,
    options: DownloadOptions,
    meta: CallMeta = {},
    feature?: SessionFeature,
  ): Promise<Download> {
    return this.downloads.open({ kind: "recipient", requestId, ...feature }, mediaId, options, meta);
  }

  /**
   * DELETE /v1/media/{id}/: removes the media row and its parts, queues the blobs' deletion and
   * writes ABA-0020, in one transaction. The data key goes with the row.
   */
  async delete(auth: AuthContext, id: string, meta: CallMeta = {}): Promise<void> {
    const mediaId = parseId(id);
    const { database, audit, jobs } = this.deps;
    const row = mediaId === undefined ? undefined : await findMedia(database.db, auth.accountId, mediaId);
    if (!row) throw notFound("Media");
    await database.db.transaction().execute(async (trx) => {
      const locked = await lockMedia(trx, row.id, database.dialect === "postgres");
      if (!locked) throw notFound("Media");
      const blobs = await deleteParts(trx, row.id);
      await deleteMediaRow(trx, row.id);
      await enqueueBlobDeletion(jobs, trx, blobs);
      await audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: auth.applicationId,
        relatedModel: "media",
        relationKey: row.id,
        value: `media deleted (request ${row.request_id})`,
        from: meta.ip,
        method: meta.method,
        path: meta.path,
        contentType: meta.contentType,
      });
    });
    this.deps.digests.forget(row.id);
  }
}
