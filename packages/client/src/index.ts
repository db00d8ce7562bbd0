export { FerryClient } from "./client.js";
export {
  type BinaryBody,
  type CallOptions,
  type FerryClientOptions,
  FerryCore,
  type FormBody,
  type JsonBody,
  type OperationMeta,
  parseRetryAfter,
  type Success,
} from "./core.js";
export {
  type DownloadOptions,
  type DownloadResult,
  type DownloadTarget,
  FerryDestinationError,
  openDownloadTarget,
} from "./download.js";
export {
  FerryApiError,
  FerryAuthError,
  FerryError,
  type FerryErrorCode,
  FerryIntegrityError,
} from "./errors.js";
export { FerryApi, type OperationId, operationMeta } from "./generated/api.js";
export type { components, operations, paths } from "./generated/schema.js";
export type { TransferProgress } from "./progress.js";
export {
  MAX_CHUNK_BYTES,
  type UploadOptions,
  type UploadResult,
  type UploadSource,
  type UploadTarget,
  uploadFingerprint,
} from "./upload.js";
export {
  type ContactNotificationSendEvent,
  type FlatWebhookEvent,
  type RequestCompleteEvent,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from "./webhooks.js";
