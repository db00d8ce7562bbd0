import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { parseId, randomId } from "../../shared/ids.js";
import { containsPattern } from "../../shared/like.js";
import type { PageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { FieldErrors, Messages, requireObjectBody } from "../../shared/validation.js";
import { AuditCode, type AuditCodeValue, type AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import { type BrandingService, recipientUrl } from "../branding/index.js";
import { checkCallbackDestination } from "../callbacks/index.js";
import { type ContactsService, type ContactWithMethods, contactFields } from "../contacts/index.js";
import type { MediaService } from "../media/index.js";
import type { RequesterRow, RequestersService } from "../requesters/index.js";
import type { EmailTemplatesService } from "../templates/index.js";
import {
  presentRequest,
  type RequestRelated,
  type RequestRow,
  type RequestView,
} from "./requests.presenter.js";
import {
  countRequests,
  deleteRequestRow,
  findRequest,
  findRequestsWithRelations,
  insertRequest,
  type OwnerRequestFilter,
  pageOfRequestIds,
  type RequestChanges,
  type RequestSelection,
  searchOwnerRequests,
  setRequestContacts,
  updateRequestRow,
} from "./requests.repository.js";
import { checkTfa, parseRequestInput, type RequestInput } from "./requests.validation.js";

/** Default push expiry when the account has no `push_expiry_days` setting. */
export const DEFAULT_PUSH_EXPIRY_DAYS = 14;

/** A request row with everything needed to present it. */
export interface LoadedRequest {
  row: RequestRow;
  related: RequestRelated;
}

/** Reads `push_expiry_days` from an account's settings (1..3650, default 14). */
export function pushExpiryDays(settings: Record<string, unknown> | undefined): number {
  const days = settings?.push_expiry_days;
  return typeof days === "number" && Number.isInteger(days) && days >= 1 && days <= 3650
    ? days
    : DEFAULT_PUSH_EXPIRY_DAYS;
}

/** What the requests service works with. */
export interface RequestsDeps {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  accounts: AccountsService;
  contacts: ContactsService;
  requesters: RequestersService;
  /** The account's custom recipient host, for the recipient URL of its requests. */
  branding: Pick<BrandingService, "recipientHost">;
  /** Checks `email_template_slug` (422 when the account has no such template). */
  templates: Pick<EmailTemplatesService, "requireTemplate">;
  media: MediaService;
}

/** Names of the request fields an input sets (for audit values: names only, never contents). */
function changedFields(input: RequestInput): string[] {
  const names: Record<keyof RequestInput, string> = {
    type: "type",
    message: "message",
    requesterPrivatenotes: "requester_privatenotes",
    isDraft: "is_draft",
    shortMessage: "short_message",
    longMessageSubject: "long_message_subject",
    longMessage: "long_message",
    callbackUrl: "callback_url",
    requesterId: "requester",
    emailTemplateSlug: "email_template_slug",
    tfaSendTo: "tfa_send_to",
    tfaSendToValue: "tfa_send_to_value",
    allowedExtensions: "allowed_extensions",
    maxFileBytes: "max_file_bytes",
    expiresAt: "expires_at",
    contacts: "contact",
  };
  return (Object.keys(names) as (keyof RequestInput)[])
    .filter((k) => input[k] !== undefined)
    .map((k) => names[k]);
}

/** Requests (spec: Requests, States and transitions), scoped to the caller's account. */
export class RequestsService {
  private readonly database: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly audit: AuditWriter;
  private readonly accounts: AccountsService;
  private readonly contacts: ContactsService;
  private readonly requesters: RequestersService;
  private readonly branding: Pick<BrandingService, "recipientHost">;
  private readonly templates: Pick<EmailTemplatesService, "requireTemplate">;
  private readonly media: MediaService;

  constructor(deps: RequestsDeps) {
    this.database = deps.database;
    this.config = deps.config;
    this.clock = deps.clock;
    this.audit = deps.audit;
    this.accounts = deps.accounts;
    this.contacts = deps.contacts;
    this.requesters = deps.requesters;
    this.branding = deps.branding;
    this.templates = deps.templates;
    this.media = deps.media;
  }

  /** Row locks exist on PostgreSQL only; SQLite runs one write transaction at a time. */
  private get lockRows(): boolean {
    return this.database.dialect === "postgres";
  }

  private async record(ex: Executor, auth: AuthContext, code: AuditCodeValue, id: number, fields: string[]) {
    await this.audit.write(ex, {
      accountId: auth.accountId,
      code,
      apiKeyId: auth.applicationId,
      relatedModel: "request",
      relationKey: id,
      value: JSON.stringify({ fields }),
    });
  }

  private async parse(body: unknown): Promise<RequestInput> {
    const errors = new FieldErrors();
    const input = parseRequestInput(requireObjectBody(body), errors, this.config, this.clock.now());
    errors.throwIfAny();
    if (input.callbackUrl) await checkCallbackDestination(input.callbackUrl, this.config);
    return input;
  }

  /**
   * Resolves `requester` and `contact` references against the account (unknown or foreign ids
   * are 400 naming the field) and creates inline contacts (each audited ABA-0010). Returns the
   * named requester row and the contacts in request order (undefined: not given).
   */
  private async resolveReferences(
    ex: Executor,
    auth: AuthContext,
    input: RequestInput,
  ): Promise<{ requester: RequesterRow | undefined; contacts: ContactWithMethods[] | undefined }> {
    const { accountId } = auth;
    const errors = new FieldErrors();
    let requester: RequesterRow | undefined;
    if (input.requesterId) {
      requester = await this.requesters.findForAccount(ex, accountId, input.requesterId);
      if (!requester) errors.add("requester", Messages.invalidPk(input.requesterId));
    }
    if (input.contacts === undefined) {
      errors.throwIfAny();
      return { requester, contacts: undefined };
    }
    const refs = input.contacts.flatMap((c) => ("ref" in c ? [c.ref] : []));
    const existing = await this.contacts.loadContacts(ex, accountId, refs);
    for (const id of refs) if (!existing.has(id)) errors.add("contact", Messages.invalidPk(id));
    errors.throwIfAny();
    const contacts: ContactWithMethods[] = [];
    for (const item of input.contacts) {
      let contact: ContactWithMethods;
      if ("ref" in item) contact = existing.get(item.ref)!;
      else {
        contact = await this.contacts.createInTransaction(ex, accountId, item.create);
        const id = contact.contact.id;
        await this.audit.write(ex, {
          accountId,
          code: AuditCode.ENTITY_CREATED,
          apiKeyId: auth.applicationId,
          relatedModel: "contact",
          relationKey: id,
          value: JSON.stringify({ fields: contactFields(item.create) }),
        });
      }
      if (!contacts.some((c) => c.contact.id === contact.contact.id)) contacts.push(contact);
    }
    return { requester, contacts };
  }

  private async defaultExpiry(ex: Executor, accountId: number): Promise<string> {
    const days = pushExpiryDays(await this.accounts.settings(ex, accountId));
    return toTimestamp(new Date(this.clock.now().getTime() + days * 86_400_000));
  }

  /**
   * POST /v1/request/: creates a request (type pull unless given; not a draft unless is_draft).
   * Inline contacts are created; a sent push request without expires_at gets the account's default
   * expiry. 400 on bad input or unknown/foreign ids. Audited ABA-0010.
   */
  async create(auth: AuthContext, body: unknown): Promise<RequestView> {
    const input = await this.parse(body);
    const tfaErrors = new FieldErrors();
    const tfaValue = checkTfa(input.tfaSendTo ?? null, input.tfaSendToValue ?? null, tfaErrors);
    tfaErrors.throwIfAny();
    return this.database.db.transaction().execute(async (trx) => {
      const refs = await this.resolveReferences(trx, auth, input);
      const contacts = refs.contacts ?? [];
      const now = toTimestamp(this.clock.now());
      const type = input.type ?? "pull";
      const isDraft = input.isDraft ?? false;
      let expiresAt = input.expiresAt ?? null;
      if (!isDraft && type === "push" && expiresAt === null)
        expiresAt = await this.defaultExpiry(trx, auth.accountId);
      if (input.emailTemplateSlug)
        await this.templates.requireTemplate(trx, auth.accountId, input.emailTemplateSlug);
      const row = await insertRequest(trx, {
        account_id: auth.accountId,
        identifier: randomId(24),
        type,
        message: input.message ?? "",
        requester_privatenotes: input.requesterPrivatenotes ?? "",
        is_draft: isDraft ? 1 : 0,
        complete: 0,
        is_expired: 0,
        receiver_message: null,
        short_message: input.shortMessage ?? "",
        long_message_subject: input.longMessageSubject ?? "",
        long_message: input.longMessage ?? "",
        callback_url: input.callbackUrl ?? null,
        requester_id: input.requesterId ?? null,
        email_template_slug: input.emailTemplateSlug ?? null,
        tfa_send_to: input.tfaSendTo ?? null,
        tfa_send_to_value: tfaValue ?? null,
        tfa_times_sent: 0,
        allowed_extensions: input.allowedExtensions ? input.allowedExtensions.join(",") : null,
        max_file_bytes: input.maxFileBytes ?? null,
        expires_at: expiresAt,
        sent_at: isDraft ? null : now,
        completed_at: null,
        callback_status: null,
        callback_tries: 0,
        created: now,
        updated: now,
      });
      await setRequestContacts(
        trx,
        row.id,
        contacts.map((c) => c.contact.id),
        { fresh: true },
      );
      await this.record(trx, auth, AuditCode.ENTITY_CREATED, row.id, changedFields(input));
      // Everything related is already in hand: a new request has no media yet.
      const ownerName =
        !row.long_message_subject && !refs.requester
          ? ((await this.accounts.profile(trx, auth.accountId))?.name ?? "")
          : "";
      const host = await this.branding.recipientHost(trx, auth.accountId);
      return presentRequest(row, {
        contacts,
        requester: refs.requester ?? null,
        media: [],
        ownerName,
        recipientUrl: recipientUrl(this.config.publicBaseUrl, host, row.identifier),
      });
    });
  }

  /**
   * GET /v1/request/: one page of the account's requests (with contacts and media), newest first:
   * three short statements (the kept count, the page's ids, their rows with relations).
   */
  async list(auth: AuthContext, page: PageRequest): Promise<{ results: RequestView[]; count: number }> {
    const { db } = this.database;
    const count = await countRequests(db, auth.accountId);
    const ids = await pageOfRequestIds(
      db,
      auth.accountId,
      { offset: page.offset, limit: page.pageSize },
      count,
    );
    const loaded = await this.loadWithRelations(db, { accountId: auth.accountId, ids });
    return { results: loaded.map((l) => presentRequest(l.row, l.related)), count };
  }

  /**
   * The owner's filtered list (dashboard): one page of requests with their contacts and media,
   * newest first, and whether another page follows. `filter.contact` and `filter.search` are
   * free text (contact name or method value; identifier, message or email subject).
   */
  async ownerSearch(
    accountId: number,
    filter: Omit<OwnerRequestFilter, "contactIds" | "search"> & { contact?: string; search?: string },
    page: PageRequest,
  ): Promise<{ results: RequestView[]; hasNext: boolean }> {
    const { db } = this.database;
    const { contact, search, ...rest } = filter;
    const contactIds = contact ? await this.contacts.idsMatching(accountId, contact) : undefined;
    const rows = await searchOwnerRequests(
      db,
      accountId,
      { ...rest, contactIds, search: search ? containsPattern(search) : undefined },
      { offset: page.offset, limit: page.pageSize + 1 },
    );
    const ids = rows.slice(0, page.pageSize).map((r) => r.id);
    const loaded = await this.loadWithRelations(db, { accountId, ids });
    return {
      results: loaded.map((l) => presentRequest(l.row, l.related)),
      hasNext: rows.length > page.pageSize,
    };
  }

  /** GET /v1/request/counter/: requests sent (not drafts) by the account, as `count` and `counter`. */
  async counter(auth: AuthContext): Promise<{ count: number; counter: number }> {
    const n = await countRequests(this.database.db, auth.accountId, true);
    return { count: n, counter: n };
  }

  /** GET /v1/request/{id}/: the request with its media; 404 for a missing or foreign id. */
  async get(auth: AuthContext, rawId: string): Promise<RequestView> {
    const id = parseId(rawId);
    if (id === undefined) throw notFound("Request");
    return this.getRequestView(undefined, auth.accountId, id);
  }

  /**
   * The API Request object (with media) of request `requestId` of `accountId`, read through `ex`
   * (a transaction, or the database when undefined). Throws 404 AppError when absent. Used by
   * notifications and callbacks to build messages and payloads.
   */
  async getRequestView(ex: Executor | undefined, accountId: number, requestId: number): Promise<RequestView> {
    const loaded = await this.loadRequest(ex, accountId, requestId);
    return presentRequest(loaded.row, loaded.related);
  }

  /**
   * The request row and its related rows (contacts, requester, media, owner name) in one statement;
   * 404 when absent.
   */
  async loadRequest(ex: Executor | undefined, accountId: number, requestId: number): Promise<LoadedRequest> {
    const [loaded] = await this.loadWithRelations(ex ?? this.database.db, { accountId, id: requestId });
    if (!loaded) throw notFound("Request");
    return loaded;
  }

  /** Like loadRequest, by the public identifier of the recipient URL; undefined when unknown. */
  async loadRequestByIdentifier(
    ex: Executor | undefined,
    identifier: string,
  ): Promise<LoadedRequest | undefined> {
    const [loaded] = await this.loadWithRelations(ex ?? this.database.db, { identifier });
    return loaded;
  }

  /**
   * The owner's public profile (account id, name, email) shown where a request names no requester
   * and used in messages; undefined for an unknown account.
   */
  async ownerProfile(
    ex: Executor | undefined,
    accountId: number,
  ): Promise<{ id: number; name: string; email: string } | undefined> {
    const row = await this.accounts.profile(ex ?? this.database.db, accountId);
    return row && { id: accountId, name: row.name, email: row.email };
  }

  private async present(ex: Executor, row: RequestRow): Promise<RequestView> {
    const { row: fresh, related } = await this.loadRequest(ex, row.account_id, row.id);
    return presentRequest(fresh, related);
  }

  /** Requests with everything needed to present them, read in one statement. */
  private async loadWithRelations(ex: Executor, selection: RequestSelection): Promise<LoadedRequest[]> {
    const rows = await findRequestsWithRelations(ex, this.database.dialect, selection);
    return rows.map((r) => ({
      row: r.row,
      related: {
        contacts: r.contacts,
        requester: r.requester,
        media: r.media,
        ownerName: r.ownerName,
        recipientUrl: recipientUrl(this.config.publicBaseUrl, r.recipientHost, r.row.identifier),
      },
    }));
  }

  /**
   * PATCH /v1/request/{id}/: partial update with the state rules: a complete
   * request is read-only (422); a sent request cannot become a draft or change type (422); draft →
   * sent (`is_draft: false`) is refused with 422 while any media is uploading, and gives a push
   * request its default expiry. A given `contact` list replaces the contacts. Audited ABA-0030.
   */
  async update(auth: AuthContext, rawId: string, body: unknown): Promise<RequestView> {
    const id = parseId(rawId);
    if (id === undefined) throw notFound("Request");
    const input = await this.parse(body);
    return this.database.db.transaction().execute(async (trx) => {
      const row = await findRequest(trx, auth.accountId, id, { forUpdate: this.lockRows });
      if (!row) throw notFound("Request");
      if (row.complete === 1) throw unprocessable("A complete request is read-only; it can only be deleted.");
      await this.refuseMediaChange(trx, row.id, body);
      const wasDraft = row.is_draft === 1;
      if (!wasDraft && input.isDraft === true)
        throw unprocessable("A sent request cannot become a draft again.");
      if (!wasDraft && input.type !== undefined && input.type !== row.type) {
        throw unprocessable("The type of a sent request cannot change.");
      }
      const sending = wasDraft && input.isDraft === false;
      if (sending && (await this.media.countUploading(trx, row.id)) > 0) {
        throw unprocessable(
          "Media of this request are still uploading: complete or delete them before sending.",
        );
      }
      const tfaSendTo = input.tfaSendTo !== undefined ? input.tfaSendTo : row.tfa_send_to;
      const rawTfaValue =
        input.tfaSendToValue !== undefined
          ? input.tfaSendToValue
          : input.tfaSendTo === null
            ? null
            : row.tfa_send_to_value;
      const tfaErrors = new FieldErrors();
      const tfaValue = checkTfa(tfaSendTo, rawTfaValue, tfaErrors);
      tfaErrors.throwIfAny();
      const contactIds = (await this.resolveReferences(trx, auth, input)).contacts?.map((c) => c.contact.id);
      const now = toTimestamp(this.clock.now());
      const type = input.type ?? row.type;
      const changes: RequestChanges = { updated: now };
      if (input.type !== undefined) changes.type = input.type;
      if (input.message !== undefined) changes.message = input.message;
      if (input.requesterPrivatenotes !== undefined)
        changes.requester_privatenotes = input.requesterPrivatenotes;
      if (input.shortMessage !== undefined) changes.short_message = input.shortMessage;
      if (input.longMessageSubject !== undefined) changes.long_message_subject = input.longMessageSubject;
      if (input.longMessage !== undefined) changes.long_message = input.longMessage;
      if (input.callbackUrl !== undefined) changes.callback_url = input.callbackUrl;
      if (input.requesterId !== undefined) changes.requester_id = input.requesterId;
      if (input.emailTemplateSlug !== undefined) {
        if (input.emailTemplateSlug)
          await this.templates.requireTemplate(trx, auth.accountId, input.emailTemplateSlug);
        changes.email_template_slug = input.emailTemplateSlug;
      }
      if (input.tfaSendTo !== undefined || input.tfaSendToValue !== undefined) {
        changes.tfa_send_to = tfaSendTo;
        changes.tfa_send_to_value = tfaValue ?? null;
        // A changed (or re-set) two-factor setting unlocks a step locked by wrong codes.
        changes.tfa_failures = 0;
      }
      if (input.allowedExtensions !== undefined) {
        changes.allowed_extensions = input.allowedExtensions ? input.allowedExtensions.join(",") : null;
      }
      if (input.maxFileBytes !== undefined) changes.max_file_bytes = input.maxFileBytes;
      if (input.expiresAt !== undefined) changes.expires_at = input.expiresAt;
      if (sending) {
        changes.is_draft = 0;
        changes.sent_at = now;
        const expiresAt = input.expiresAt !== undefined ? input.expiresAt : row.expires_at;
        if (type === "push" && expiresAt === null)
          changes.expires_at = await this.defaultExpiry(trx, auth.accountId);
      }
      const updated = await updateRequestRow(trx, row.id, changes);
      if (contactIds !== undefined) await setRequestContacts(trx, row.id, contactIds);
      await this.record(trx, auth, AuditCode.ENTITY_UPDATED, row.id, changedFields(input));
      return this.present(trx, updated);
    });
  }

  /**
   * `media` on PATCH: the spec lists it as accepted on update, but files are added and removed
   * through /v1/media/. A body that sends the request's media back unchanged (ids, or objects with
   * `id`, in any order) is accepted; any other `media` is 400 naming the field, so a change is never
   * silently dropped.
   */
  private async refuseMediaChange(ex: Executor, requestId: number, body: unknown): Promise<void> {
    const given =
      typeof body === "object" && body !== null ? (body as Record<string, unknown>).media : undefined;
    if (given === undefined) return;
    const ids = Array.isArray(given)
      ? given.map((item) =>
          typeof item === "object" && item !== null ? (item as Record<string, unknown>).id : item,
        )
      : undefined;
    const current = (await this.media.rowsOfRequests(ex, [requestId])).map((m) => m.id);
    const same =
      ids !== undefined &&
      ids.length === current.length &&
      ids.every((id) => current.includes(Number(id))) &&
      new Set(ids.map(Number)).size === ids.length;
    if (!same)
      throw ValidationError.field(
        "media",
        "Media are not changed through the request: add files with POST /v1/media/ and remove them with DELETE /v1/media/{id}/.",
      );
  }

  /**
   * DELETE /v1/request/{id}/: deletes the request with its media (rows cascade) and queues the
   * deletion of the media's stored blobs in the same transaction. Audited ABA-0020.
   */
  async delete(auth: AuthContext, rawId: string): Promise<void> {
    const id = parseId(rawId);
    if (id === undefined) throw notFound("Request");
    await this.database.db.transaction().execute(async (trx) => {
      const row = await findRequest(trx, auth.accountId, id, { forUpdate: this.lockRows });
      if (!row) throw notFound("Request");
      await this.media.queueBlobDeletionOfRequest(trx, row.id);
      await deleteRequestRow(trx, row.id);
      await this.record(trx, auth, AuditCode.ENTITY_DELETED, row.id, []);
    });
  }
}
