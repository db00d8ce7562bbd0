/**
 * The rules of uploads: which requests and container features take files from which uploader, how
 * many files and bytes a target, a chunk and an account may hold, and that an upload stays the file
 * it declared (size and fingerprint, ADR 0022); with the errors that report them.
 */

import type { Executor } from "../../db/database.js";
import { AppError, notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import type { MediaDeps, Uploader } from "./media.context.js";
import type { MediaTarget, UploadTarget } from "./media.jobs.js";
import { countFilesOfFeature, type MediaRow, storageUsed } from "./media.repository.js";
import { featureField, parseFingerprint, type TargetRef } from "./media.validation.js";

/** A size limit and the error that reports crossing it. */
export interface UploadLimit {
  bytes: number;
  error: () => AppError;
}

/** The upload rules, checked against the requests, the container features and the account's stored bytes. */
export class UploadRules {
  constructor(private readonly deps: MediaDeps) {}

  /** The target when the fields already name it (or the uploader is a recipient): checked early. */
  async earlyTarget(uploader: Uploader, fields: Record<string, string>): Promise<UploadTarget | undefined> {
    if (uploader.kind === "recipient") return this.recipientTarget(uploader);
    const feature = featureField(fields);
    if (feature) {
      const id = parseId(feature.raw);
      return id === undefined ? undefined : this.target(uploader, { kind: "feature", id });
    }
    const id = parseId(fields.request);
    return id === undefined ? undefined : this.target(uploader, { kind: "request", id });
  }

  /**
   * Loads what `ref` names (an owner's request or feature; a recipient's page says its own) and
   * checks it takes files from this uploader now (404 / 422).
   */
  async target(
    uploader: Uploader,
    ref: TargetRef | undefined,
    ex = this.deps.database.db,
  ): Promise<UploadTarget> {
    if (uploader.kind === "recipient") return this.recipientTarget(uploader, ex);
    if (ref?.kind === "feature") {
      return this.deps.features.uploadTarget(ex, ref.id, { kind: "owner", accountId: uploader.accountId });
    }
    const request = ref && (await this.deps.targets.findForMedia(ex, ref.id));
    if (!request || request.account_id !== uploader.accountId) throw notFound("Request");
    if (request.kind === "container") {
      throw unprocessable(
        "This id is a container's: upload into one of its features (give `feature`, `push` or `pushpull`).",
      );
    }
    if (request.type !== "push") {
      throw unprocessable(
        "Files are attached to push requests only; the recipient uploads the files of a pull request.",
      );
    }
    if (!request.is_draft)
      throw unprocessable("The request was already sent: attach files while it is a draft.");
    if (request.complete) throw unprocessable("The request is complete.");
    return requestTarget(request);
  }

  /** The target of a media's further chunks: its request or its feature, checked again. */
  async targetOfMedia(
    uploader: Uploader,
    media: MediaRow,
    ex = this.deps.database.db,
  ): Promise<UploadTarget> {
    const ref: TargetRef =
      media.feature_id !== null
        ? { kind: "feature", id: media.feature_id }
        : { kind: "request", id: media.request_id };
    return this.target(uploader, ref, ex);
  }

  private async recipientTarget(
    uploader: Extract<Uploader, { kind: "recipient" }>,
    ex = this.deps.database.db,
  ): Promise<UploadTarget> {
    if (uploader.featureId !== undefined) {
      const target = await this.deps.features.uploadTarget(ex, uploader.featureId, {
        kind: "recipient",
        recipientId: uploader.recipientId ?? 0,
      });
      if (target.requestId !== uploader.requestId) throw notFound("Feature");
      return target;
    }
    const request = await this.deps.targets.findForMedia(ex, uploader.requestId);
    if (!request || request.id !== uploader.requestId || request.kind !== "request")
      throw notFound("Request");
    if (request.type !== "pull") throw unprocessable("This request does not accept files.");
    if (request.is_draft) throw unprocessable("This request was not sent yet.");
    if (request.complete) throw unprocessable("This request is complete: it accepts no more files.");
    const now = toTimestamp(this.deps.clock.now());
    if (request.is_expired || (request.expires_at !== null && request.expires_at <= now)) {
      throw unprocessable("This request has expired.");
    }
    return requestTarget(request);
  }

  /**
   * The most bytes one file (or one chunk) may have now: MAX_FILE_BYTES (MAX_CHUNK_BYTES), the
   * target's own limit for recipients, what is left of the account's quota (422 at once when
   * nothing is), and the file's declared size when it has one (422 past it).
   */
  async limit(
    uploader: Uploader,
    target: UploadTarget | undefined,
    chunk: boolean,
    declared: number | null = null,
  ): Promise<UploadLimit> {
    const { config } = this.deps;
    const sizeLimit = chunk ? config.MAX_CHUNK_BYTES : config.MAX_FILE_BYTES;
    let limit: UploadLimit = {
      bytes: sizeLimit,
      error: () => (chunk ? chunkTooLarge(sizeLimit) : fileTooLarge(sizeLimit)),
    };
    const targetLimit = uploader.kind === "recipient" && target?.maxFileBytes ? target.maxFileBytes : 0;
    if (targetLimit > 0 && targetLimit < limit.bytes)
      limit = { bytes: targetLimit, error: () => fileTooLarge(targetLimit) };
    const accountId = uploader.kind === "owner" ? uploader.accountId : target?.accountId;
    const quota = config.ACCOUNT_STORAGE_QUOTA_BYTES;
    if (quota > 0 && accountId !== undefined) {
      const left = quota - (await storageUsed(this.deps.database.db, accountId));
      if (left <= 0) throw quotaExceeded(quota);
      if (left < limit.bytes) limit = { bytes: left, error: () => quotaExceeded(quota) };
    }
    if (declared !== null && declared < limit.bytes)
      limit = { bytes: declared, error: () => declaredSizeMissed(declared) };
    return limit;
  }

  /**
   * Checks a declared size against the deployment and the upload's chunks: 413 over MAX_FILE_BYTES,
   * 400 when `totalChunks` chunks of at most MAX_CHUNK_BYTES cannot hold it.
   */
  checkDeclaredBytes(declared: number, totalChunks: number): void {
    const { MAX_FILE_BYTES, MAX_CHUNK_BYTES } = this.deps.config;
    if (declared > MAX_FILE_BYTES) throw fileTooLarge(MAX_FILE_BYTES);
    if (totalChunks > 1 && declared > totalChunks * MAX_CHUNK_BYTES) {
      throw ValidationError.field(
        "total_bytes",
        `${declared} bytes do not fit in ${totalChunks} chunks of at most ${MAX_CHUNK_BYTES} bytes.`,
      );
    }
  }

  /** 422 when the target already holds as many files from this uploader as it takes. */
  async checkFileCount(ex: Executor, uploader: Uploader, target: UploadTarget): Promise<void> {
    if (target.maxFiles === null || target.featureId === null) return;
    const held = await countFilesOfFeature(ex, target.featureId, uploader.kind);
    if (held >= target.maxFiles) {
      throw unprocessable(`This takes at most ${target.maxFiles} file${target.maxFiles === 1 ? "" : "s"}.`);
    }
  }

  /** 422 when adding `adding` bytes to the account would exceed its storage quota. */
  async checkQuota(ex: Parameters<typeof storageUsed>[0], accountId: number, adding: number): Promise<void> {
    const quota = this.deps.config.ACCOUNT_STORAGE_QUOTA_BYTES;
    if (quota === 0 || adding <= 0) return;
    const used = await storageUsed(ex, accountId);
    if (used + adding > quota) throw quotaExceeded(quota);
  }
}

/** A request's rules as an upload target: recipients of pull requests send at most their limit. */
function requestTarget(request: MediaTarget): UploadTarget {
  return {
    requestId: request.id,
    accountId: request.account_id,
    featureId: null,
    recipientId: null,
    allowedExtensions: request.allowed_extensions
      ? request.allowed_extensions.split(",").map((e) => e.trim().toLowerCase())
      : null,
    maxFileBytes: request.max_file_bytes ? Number(request.max_file_bytes) : null,
    maxFiles: null,
    downloadLimit: request.type === "pull" ? 1 : null,
  };
}

/** 413 for a chunk over the chunk limit. */
export function chunkTooLarge(limit: number): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `The chunk is larger than the maximum of ${limit} bytes${inUnits(limit)}. Send chunks of at most ${formatBytes(limit)}.`,
  );
}

/** 413 for a file over the file limit. */
export function fileTooLarge(limit: number): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `The file is larger than the maximum of ${limit} bytes${inUnits(limit)}.`,
  );
}

/**
 * Whether chunks adding up to `sum` bytes break a file's declared size: past it, or different from
 * it once every chunk (`complete`) is there.
 */
export function breaksDeclaredSize(declared: number, sum: number, complete: boolean): boolean {
  return sum > declared || (complete && sum !== declared);
}

/** 422 for a new upload whose bytes (`sent`, or "more" when cut off) differ from its declared size. */
export function declaredSizeMissed(declared: number, sent?: number): AppError {
  return unprocessable(
    `The file was declared at ${declared} bytes, but ${sent ?? "more"} bytes were sent. Nothing was stored.`,
  );
}

/** 422 for a further chunk with which a file's chunks would add up to `sum` instead of its declared size. */
export function declaredSizeBroken(declared: number, sum: number): AppError {
  return unprocessable(
    `The file was declared at ${declared} bytes, but with this chunk its chunks add up to ${sum} bytes. The chunk was not stored; the upload stays incomplete.`,
  );
}

/**
 * Checks the `fingerprint` field of a further chunk against its upload's (null: started without
 * one): 400 when malformed, 409 when given and different. Absent, it is not checked.
 */
export function checkFingerprint(recorded: string | null, raw: string | undefined): void {
  const sent = parseFingerprint(raw);
  if (sent !== undefined && sent !== recorded) {
    throw new AppError(
      "CONFLICT",
      "This upload is of another file: its fingerprint differs. Start a new upload for this file; nothing was stored.",
    );
  }
}

/** 422 when the account's storage quota would be exceeded. */
function quotaExceeded(quota: number): AppError {
  return unprocessable(
    `The account's storage quota of ${quota} bytes would be exceeded. Delete files or ask the operator for more space.`,
  );
}

/** " (4 MiB)" when `n` is a whole number of a larger unit, else "". */
function inUnits(n: number): string {
  const text = formatBytes(n);
  return text.endsWith(" bytes") ? "" : ` (${text})`;
}

function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}
