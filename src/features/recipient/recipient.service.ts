import type { Readable } from "node:stream";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { MessageKey, Translator } from "../../shared/i18n/i18n.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingFontRow, BrandingRow, BrandingService } from "../branding/index.js";
import type { LifecycleService } from "../lifecycle/index.js";
import type { MediaRow } from "../media/index.js";
import type { RequestersService } from "../requesters/index.js";
import type { RequestRecords } from "../requests/index.js";
import {
  acceptsUploads,
  allowedExtensions,
  type FileView,
  formatBytes,
  isExpired,
  presentFile,
  presentOwnerCard,
  presentRequesterCard,
  type RequesterCardView,
} from "./recipient.presenter.js";
import type { RecipientRequestRow } from "./recipient.repository.js";
import { tfaSubjectOfRequest } from "./two-factor.service.js";
import type { PageChrome, UploadRules } from "./views/pages.js";

export type { MediaRow };

/** Who calls a recipient page (for audit entries; never the identifier whole). */
export interface PageCaller {
  ip: string;
  method: string;
  path: string;
  contentType?: string | undefined;
  /** See the media feature's CallMeta.holdConnection. */
  holdConnection?: () => () => void;
}

/** One piece of an upload body, in arrival order (the media service's UploadPart). */
export type UploadPiece =
  | { kind: "field"; name: string; value: string }
  | {
      kind: "file";
      field: string;
      stream: Readable;
      filename?: string | undefined;
      mimetype?: string | undefined;
    };

/** A download the route streams: status, headers, body, and settle(complete) when the response ends. */
interface RecipientDownload {
  status: number;
  headers: Record<string, string>;
  body: Readable;
  settle(complete: boolean): Promise<void>;
}

/**
 * What the recipient pages need from the media feature. Uploads and downloads go through
 * its service so encryption, limits and audit (ABA-0010, ABB-0010) stay in one place.
 */
export interface RecipientMediaPort {
  /** Every media row of a request (any state), in upload order. */
  listRequestMedia(requestId: number): Promise<MediaRow[]>;
  /** Part numbers (1-based) of a media already stored, so an upload resumes with the missing ones. */
  receivedChunks(mediaId: number): Promise<number[]>;
  /** First chunk (or whole file) of a recipient upload into open pull request `requestId`; returns the media id. */
  createUpload(requestId: number, parts: AsyncIterable<UploadPiece>, caller: PageCaller): Promise<number>;
  /** A further chunk of one of the recipient's uploads (replaces an earlier copy). */
  putChunk(
    requestId: number,
    mediaId: number,
    parts: AsyncIterable<UploadPiece>,
    caller: PageCaller,
  ): Promise<void>;
  /** Removes one of the recipient's files (finished or not) before Submit: 404 for others, 422 once closed. */
  removeUpload(requestId: number, mediaId: number, caller: PageCaller): Promise<void>;
  /** Opens a push file for download (ABB-0010 on settle). Throws AppError 404/409/410 before any byte. */
  openDownload(
    requestId: number,
    mediaId: number,
    range: string | undefined,
    caller: PageCaller,
  ): Promise<RecipientDownload>;
}

/** A resolved recipient link: the request, its owner and the owner's branding. */
export interface RecipientContext {
  request: RecipientRequestRow;
  account: { id: number; name: string; email: string; defaultLanguage: string };
  branding: BrandingRow | undefined;
}

/** Why Submit was refused: request closed, an upload unfinished, no file and no confirmation. */
export type SubmitRefusal = "closed" | "uploading" | "empty";

/** What the pull page says after a refused Submit (it redirects to `?error=<refusal>`). */
export const SUBMIT_REFUSALS: Record<SubmitRefusal, MessageKey> = {
  closed: "submit.closed",
  uploading: "submit.uploading",
  empty: "submit.empty",
};

/** What GET /r/<identifier>/ shows. */
type PageKind = "expired" | "tfa" | "push" | "pull" | "completed";

/** Identifiers are URL-safe random strings; anything else is answered 404 without a lookup. */
const IDENTIFIER_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;

/** Dependencies of RecipientService. */
interface RecipientDeps {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  branding: BrandingService;
  /** The owner's profile, shown when a request names no requester. */
  accounts: AccountsService;
  /** The requester a request names. */
  requesters: Pick<RequestersService, "findForAccount">;
  records: Pick<RequestRecords, "findByIdentifier">;
  media: RecipientMediaPort;
  /** Completes a pull request (receiver_message, request_complete callback). */
  lifecycle: Pick<LifecycleService, "completePullRequest">;
}

/**
 * The recipient side of requests (spec: recipient page, completed page, requester display rules):
 * resolves links, decides which page to show, and lists files. Two-factor lives in
 * TwoFactorService; uploads and downloads go through the media port.
 */
export class RecipientService {
  constructor(private readonly deps: RecipientDeps) {}

  /**
   * The request behind a link, or undefined for unknown, deleted, draft and foreign identifiers
   * alike. On an account's custom recipient host only that account's requests resolve.
   */
  async resolve(identifier: string, host: string): Promise<RecipientContext | undefined> {
    if (!IDENTIFIER_PATTERN.test(identifier)) return undefined;
    const db = this.deps.database.db;
    const request = await this.deps.records.findByIdentifier(db, identifier);
    if (!request || request.is_draft === 1) return undefined;
    const hostAccount = await this.hostAccount(host);
    if (hostAccount !== undefined && hostAccount !== request.account_id) return undefined;
    const account = await this.deps.accounts.profile(db, request.account_id);
    if (!account) return undefined;
    const branding = await this.deps.branding.find(account.id);
    return { request, account, branding };
  }

  /** The account that owns a custom recipient host, undefined for Ferry's own host (or unknown hosts). */
  async hostAccount(host: string): Promise<number | undefined> {
    const name = host.toLowerCase().replace(/:\d+$/, "");
    if (name === new URL(this.deps.config.publicBaseUrl).hostname) return undefined;
    return this.deps.branding.accountForHost(name);
  }

  /** The account's font `name` for the link's pages, or undefined. */
  font(ctx: RecipientContext, name: string): Promise<BrandingFontRow | undefined> {
    return this.deps.branding.font(ctx.account.id, name);
  }

  /** Branding, sandbox marker and language of a page (default look when there is no context). */
  chrome(ctx: RecipientContext | undefined, i18n: Translator, hostBranding?: BrandingRow): PageChrome {
    const branding = ctx?.branding ?? hostBranding;
    const base = ctx ? `/r/${encodeURIComponent(ctx.request.identifier)}/` : undefined;
    return {
      sandbox: this.deps.config.isSandbox,
      brandName: ctx?.account.name.trim() || "Ferry",
      brandCssHref:
        base && branding?.css ? `${base}brand.css?v=${branding.css_hash.slice(0, 12)}` : undefined,
      logoHref: base && branding?.logo_hash ? `${base}logo?v=${branding.logo_hash.slice(0, 12)}` : undefined,
      i18n,
    };
  }

  /** Which page a link shows now, given whether the browser holds a valid two-factor session. */
  pageKind(ctx: RecipientContext, hasSession: boolean): PageKind {
    const { request } = ctx;
    const now = this.deps.clock.now();
    if (request.type === "pull" && request.complete === 1 && request.is_expired === 0) {
      return tfaSubjectOfRequest(request) && !hasSession ? "tfa" : "completed";
    }
    if (isExpired(request, now) || request.complete === 1) return "expired";
    if (tfaSubjectOfRequest(request) && !hasSession) return "tfa";
    return request.type === "push" ? "push" : "pull";
  }

  /** The card of the request page: the requester, or the owner's profile when none is named. */
  async card(ctx: RecipientContext): Promise<RequesterCardView> {
    return (await this.requesterCard(ctx)) ?? presentOwnerCard(ctx.account);
  }

  /** The named requester's card with details (completed page), or null when none is named. */
  async requesterCard(ctx: RecipientContext): Promise<RequesterCardView | null> {
    const { request } = ctx;
    if (!request.requester_id) return null;
    const row = await this.deps.requesters.findForAccount(
      this.deps.database.db,
      request.account_id,
      request.requester_id,
    );
    if (!row) return null;
    return presentRequesterCard(row, `/r/${encodeURIComponent(request.identifier)}/avatar`);
  }

  /** The requester's picture as bytes and type, or undefined. */
  async avatar(ctx: RecipientContext): Promise<{ type: string; bytes: Buffer } | undefined> {
    const { request } = ctx;
    if (!request.requester_id) return undefined;
    const row = await this.deps.requesters.findForAccount(
      this.deps.database.db,
      request.account_id,
      request.requester_id,
    );
    const match = /^data:(image\/(?:png|jpeg|webp));base64,(.+)$/s.exec(row?.avatar ?? "");
    if (!match) return undefined;
    return { type: match[1]!, bytes: Buffer.from(match[2]!, "base64") };
  }

  /** The files a push page offers (available media), or a pull page shows as received. */
  async files(ctx: RecipientContext): Promise<FileView[]> {
    const rows = await this.deps.media.listRequestMedia(ctx.request.id);
    const wanted = ctx.request.type === "push" ? "owner" : "recipient";
    return rows.filter((m) => m.state === "available" && m.uploaded_by === wanted).map(presentFile);
  }

  /** Upload rules of a pull request: allowed extensions, per-file limit, chunk size. */
  uploadRules(ctx: RecipientContext): UploadRules {
    const { config } = this.deps;
    const deployment = config.MAX_FILE_BYTES;
    const own = ctx.request.max_file_bytes ? Number(ctx.request.max_file_bytes) : undefined;
    const maxFileBytes = own ? Math.min(own, deployment) : deployment;
    return {
      extensions: allowedExtensions(ctx.request),
      maxFileBytes,
      maxFileLabel: formatBytes(maxFileBytes),
      chunkBytes: Math.min(config.MAX_CHUNK_BYTES, 4 * 1024 * 1024),
    };
  }

  /** The clock's time (what "expires in 14 days" counts from). */
  now(): Date {
    return this.deps.clock.now();
  }

  /** True when a pull request still accepts files. */
  acceptsUploads(ctx: RecipientContext): boolean {
    return acceptsUploads(ctx.request, this.deps.clock.now());
  }

  /** Uploads and downloads of recipients (through the media feature). */
  get media(): RecipientMediaPort {
    return this.deps.media;
  }

  /**
   * Submits a pull request: refuses (returns why) while an upload is incomplete, or without any
   * file unless `confirmEmpty`, then completes it through the lifecycle service (request_complete
   * callback).
   */
  async submit(
    ctx: RecipientContext,
    receiverMessage: string,
    confirmEmpty = false,
  ): Promise<{ ok: true } | { ok: false; reason: SubmitRefusal }> {
    if (!this.acceptsUploads(ctx)) return { ok: false, reason: "closed" };
    const rows = (await this.deps.media.listRequestMedia(ctx.request.id)).filter(
      (m) => m.uploaded_by === "recipient",
    );
    if (rows.some((m) => m.state === "uploading")) return { ok: false, reason: "uploading" };
    if (!confirmEmpty && !rows.some((m) => m.state === "available")) return { ok: false, reason: "empty" };
    const message = receiverMessage.trim();
    await this.deps.lifecycle.completePullRequest(ctx.account.id, ctx.request.id, {
      receiverMessage: message === "" ? null : message.slice(0, 10_000),
    });
    return { ok: true };
  }

  /**
   * AAA-0011 for one recipient page call (page, form, download or upload call) and, when the files
   * page was shown, ABB-0020, in one transaction (one chain-head lock instead of two).
   */
  async recordCall(
    ctx: RecipientContext,
    caller: PageCaller,
    status: number,
    pageLoaded: boolean,
  ): Promise<void> {
    const base = {
      accountId: ctx.account.id,
      relatedModel: "request",
      relationKey: ctx.request.id,
      from: caller.ip,
      method: caller.method,
      path: caller.path,
    };
    await this.deps.database.db.transaction().execute(async (trx) => {
      await this.deps.audit.write(trx, {
        ...base,
        code: AuditCode.PAGE_CALL,
        contentType: caller.contentType ?? "",
        value: String(status),
      });
      if (pageLoaded)
        await this.deps.audit.write(trx, {
          ...base,
          code: AuditCode.FILES_PAGE_LOADED,
          value: ctx.request.type,
        });
    });
  }
}
