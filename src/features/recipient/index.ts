/**
 * The recipient feature: the pages at `/r/<identifier>/` (push downloads, pull uploads, two-factor,
 * completed and expired pages), their sessions and CSRF tokens, per-link branding assets, and the
 * sandbox helpers that act as a recipient.
 */

import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { LifecycleService } from "../lifecycle/index.js";
import type { MediaService } from "../media/index.js";
import type { DirectMessages } from "../notifications/index.js";
import type { RequestersService } from "../requesters/index.js";
import type { RequestRecords, RequestsService } from "../requests/index.js";
import { recipientRoutes } from "./recipient.routes.js";
import { RecipientService } from "./recipient.service.js";
import { recipientMediaPort } from "./recipient-media.js";
import { RecipientTokens } from "./recipient-tokens.js";
import { sandboxRecipientRoutes } from "./sandbox.routes.js";
import { TwoFactorService } from "./two-factor.service.js";

/** What the recipient feature offers. */
export interface RecipientPages {
  readonly pages: RecipientService;
  readonly twoFactor: TwoFactorService;
  readonly tokens: RecipientTokens;
}

/** Builds the recipient feature. */
export function createRecipientFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  rateLimiter: RateLimiter;
  accounts: AccountsService;
  branding: BrandingService;
  requesters: RequestersService;
  records: RequestRecords;
  requests: RequestsService;
  media: MediaService;
  lifecycle: LifecycleService;
  direct: DirectMessages;
}): Feature<RecipientPages> {
  const { database, config, clock, records, lifecycle } = deps;
  const tokens = new RecipientTokens(deps.keyRing);
  const twoFactor = new TwoFactorService(database, config, clock, tokens, deps.direct, records, deps.audit);
  const recipient = new RecipientService({
    database,
    config,
    clock,
    audit: deps.audit,
    branding: deps.branding,
    accounts: deps.accounts,
    requesters: deps.requesters,
    records,
    media: recipientMediaPort(deps.media),
    lifecycle,
  });
  return {
    service: { pages: recipient, twoFactor, tokens },
    routes: [
      recipientRoutes({ recipient, twoFactor, tokens, rateLimiter: deps.rateLimiter, clock, config }),
      sandboxRecipientRoutes({ config, lifecycle, requests: deps.requests, recipient }),
    ],
  };
}

// The page kit other recipient-facing pages (container sessions) are built from.
export {
  CHUNK_BODY_LIMIT,
  ChunkBodies,
  ChunkBody,
  presentUpload,
  RawChunkQuery,
  UploadFile,
  UploadList,
} from "./pull.pages.js";
export {
  type FileView,
  formatBytes,
  presentFile,
  presentOwnerCard,
  presentRequesterCard,
  type RequesterCardView,
} from "./recipient.presenter.js";
export type { PageCaller } from "./recipient.service.js";
export {
  htmlResponse,
  isHttps,
  readCookies,
  refusedDownloadResponse,
  refuseForeignDownload,
  sendPage,
  setCookie,
} from "./recipient-http.js";
export { pageCaller } from "./recipient-session.js";
export { type RecipientTokens, SESSION_COOKIE } from "./recipient-tokens.js";
export { tfaNoticeOf } from "./request.pages.js";
export type { TfaStatus, TfaSubject, TwoFactorService } from "./two-factor.service.js";
export { uploadPieces } from "./upload-body.js";
export { Alert, CsrfField, FileInfo, MessageCard, RequesterCard } from "./views/components.js";
export {
  LocalTime,
  NotFoundPage,
  type PageChrome,
  type TfaNotice,
  TfaPage,
  type UploadRules,
  uploadRulesText,
} from "./views/pages.js";
