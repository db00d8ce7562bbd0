/**
 * The media feature's entry point: reading and deleting media, plus the upload, download and
 * storage services. Routes, recipient pages, jobs and the CLI all go through `MediaService`.
 */
import { AppError, notFound } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import type { PageRequest } from "../../shared/pagination.js";
import { AuditCode } from "../audit/audit.writer.js";
import type { AuthContext } from "../auth/auth.service.js";
import { type Download, type DownloadOptions, MediaDownloadService } from "./download-media.service.js";
import { type CallMeta, enqueueBlobDeletion, type MediaDeps, type UploadPart } from "./media.context.js";
import { type MediaView, presentMedia } from "./media.presenter.js";
import {
  deleteMediaRow,
  deleteParts,
  findMedia,
  listMedia,
  listMediaOfRequest,
  lockMedia,
  type MediaRow,
} from "./media.repository.js";
import { MediaStorageService } from "./media-storage.service.js";
import { MediaUploadService } from "./upload-media.service.js";

/** Media operations for owners (API) and recipients (pages); see the services for the rules. */
export class MediaService {
  readonly uploads: MediaUploadService;
  readonly downloads: MediaDownloadService;
  readonly storage: MediaStorageService;

  constructor(private readonly deps: MediaDeps) {
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
  ): Promise<MediaView> {
    return presentMedia(await this.uploads.create({ kind: "recipient", requestId }, parts, meta));
  }

  /** The recipient's further chunk of one of their uploads in request `requestId` (404 for other media). */
  async recipientPutChunk(
    requestId: number,
    mediaId: string | number,
    parts: AsyncIterable<UploadPart>,
    meta: CallMeta = {},
  ): Promise<MediaView> {
    return presentMedia(await this.uploads.putChunk({ kind: "recipient", requestId }, mediaId, parts, meta));
  }

  /** Every media of request `requestId` in upload order (any state), as API Media objects. */
  async listOfRequest(requestId: number): Promise<MediaView[]> {
    return (await listMediaOfRequest(this.deps.database.db, requestId)).map(presentMedia);
  }

  /** Media rows of a request (for presenters that add `file`). */
  async rowsOfRequest(requestId: number): Promise<MediaRow[]> {
    return listMediaOfRequest(this.deps.database.db, requestId);
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

  /** GET /v1/media/{id}/: information only (404 for absent or another account's). */
  async get(auth: AuthContext, id: string): Promise<MediaView> {
    const mediaId = parseId(id);
    const row =
      mediaId === undefined ? undefined : await findMedia(this.deps.database.db, auth.accountId, mediaId);
    if (!row) throw notFound("Media");
    return presentMedia(row);
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
  ): Promise<Download> {
    return this.downloads.open({ kind: "recipient", requestId }, mediaId, options, meta);
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
