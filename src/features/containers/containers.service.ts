import { randomBytes } from "node:crypto";
import type { AuthContext } from "../../shared/caller.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { containsPattern } from "../../shared/like.js";
import { type Paginated, paginate, parsePageRequest } from "../../shared/pagination.js";
import {
  type Body,
  FieldErrors,
  isValidEmail,
  readBoolean,
  readPhone,
  readReference,
  readString,
  requireObjectBody,
  requireSmsCapable,
} from "../../shared/validation.js";
import { AuditCode } from "../audit/index.js";
import { checkCallbackDestination, checkCallbackUrl } from "../callbacks/index.js";
import {
  type ContainerDeps,
  type LoadedContainer,
  loadContainer,
  nowText,
  pathId,
  recordChange,
  requesterOf,
} from "./containers.context.js";
import { type ContainerView, presentContainer, presentEmail } from "./containers.presenter.js";
import {
  countContainers,
  countContainersOfRecipient,
  findContainersByIds,
  findEmail,
  insertContainer,
  type OwnerContainerFilter,
  pageOfContainerIds,
  searchOwnerContainers,
  updateContainer,
  upsertEmail,
} from "./containers.repository.js";

/** The page types of a container: a pushpull page, or a P2 (person-to-person) session. */
export const PAGE_TYPES = ["pushpull", "p2"] as const;

const LIMITS = { callback_url: 2048, subject: 255, body: 20_000, to: 254 } as const;

/** Reads the container fields of a create or update body. */
function readContainerInput(body: Body, deps: ContainerDeps, creating: boolean) {
  const errors = new FieldErrors();
  const out: {
    pageType?: "pushpull" | "p2";
    displayChat?: boolean;
    callbackUrl?: string | null;
    requesterId?: number | null;
  } = {};
  const pageType = readString(body, "page_type", errors, { max: 20, required: creating });
  if (pageType !== undefined && pageType !== null) {
    const v = pageType.toLowerCase();
    if ((PAGE_TYPES as readonly string[]).includes(v)) out.pageType = v as "pushpull" | "p2";
    else errors.add("page_type", `"${pageType}" is not a valid choice. Choose pushpull or p2.`);
  }
  const chat = readBoolean(body, "display_chat", errors);
  if (chat !== undefined) out.displayChat = chat;
  const callback = readString(body, "callback_url", errors, { max: LIMITS.callback_url, nullable: true });
  if (callback === null || callback === "") out.callbackUrl = null;
  else if (callback !== undefined) {
    const checked = checkCallbackUrl(callback, deps.config, errors);
    if (checked !== undefined) out.callbackUrl = checked;
  }
  const requester = readReference(body, "requester", errors);
  if (requester !== undefined) out.requesterId = requester;
  errors.throwIfAny();
  return out;
}

/** A container's 32-hex-character public identifier (128 random bits). */
function newIdentifier(): string {
  return randomBytes(16).toString("hex");
}

/**
 * Containers (`/v1/module_container/container/`): create, list, read, change and delete, their
 * email text and their auth code setting. Scoped to the caller's account.
 */
export class ContainersService {
  constructor(private readonly deps: ContainerDeps) {}

  /** The container view of a loaded container. */
  present(c: LoadedContainer): ContainerView {
    return presentContainer(c.row, c.shared);
  }

  /** POST: creates a container (draft). 400 on a bad page type, URL or requester. Audited ABA-0010. */
  async create(auth: AuthContext, raw: unknown): Promise<ContainerView> {
    const { deps } = this;
    const input = readContainerInput(requireObjectBody(raw), deps, true);
    if (input.callbackUrl) await checkCallbackDestination(input.callbackUrl, deps.config);
    return deps.database.db.transaction().execute(async (trx) => {
      if (input.requesterId) await requesterOf(deps, trx, auth.accountId, input.requesterId);
      const now = nowText(deps);
      const id = await deps.records.insertContainer(trx, {
        accountId: auth.accountId,
        identifier: newIdentifier(),
        callbackUrl: input.callbackUrl ?? null,
        requesterId: input.requesterId ?? null,
        now,
      });
      await insertContainer(trx, {
        id,
        account_id: auth.accountId,
        page_type: input.pageType ?? "p2",
        display_chat: input.displayChat ? 1 : 0,
        auth_send_as: null,
        auth_to: null,
        sent_at: null,
        completed_at: null,
        created: now,
        updated: now,
      });
      await recordChange(deps, trx, auth, AuditCode.ENTITY_CREATED, "container", id, input.pageType ?? "p2");
      return this.present(await loadContainer(deps, trx, auth.accountId, id));
    });
  }

  /** GET list: newest first; `recipient=<id>` keeps the container of that recipient. */
  async list(auth: AuthContext, query: Record<string, unknown>): Promise<Paginated<ContainerView>> {
    const { deps } = this;
    const page = parsePageRequest(query);
    let recipientId: number | undefined;
    if (query.recipient !== undefined && query.recipient !== "") {
      recipientId = parseId(query.recipient);
      if (recipientId === undefined) throw ValidationError.field("recipient", "A valid integer is required.");
    }
    const { db } = deps.database;
    // The count is kept per account (ADR 0070); a recipient belongs to one container, so its
    // filtered count reads at most one row. The page's ids come first, then their rows.
    const count =
      recipientId === undefined
        ? await countContainers(db, auth.accountId)
        : await countContainersOfRecipient(db, auth.accountId, recipientId);
    const ids = await pageOfContainerIds(
      db,
      auth.accountId,
      { recipientId },
      { offset: page.offset, limit: page.pageSize },
      count,
    );
    const rows = await findContainersByIds(db, auth.accountId, ids);
    const shared = new Map(
      (ids.length ? await deps.records.findContainers(db, auth.accountId, ids) : []).map((r) => [r.id, r]),
    );
    const views: ContainerView[] = [];
    for (const row of rows) {
      const s = shared.get(row.id);
      if (s) views.push(presentContainer(row, s));
    }
    return paginate(views, count, page, deps.config.publicBaseUrl, "/v1/module_container/container/", {
      recipient: query.recipient,
    });
  }

  /**
   * The owner's filtered list (dashboard), newest first, and whether another page follows.
   * `contact` is free text (recipient name, email or number); `search` a container id or text of
   * the email subject.
   */
  async ownerSearch(
    accountId: number,
    filter: Omit<OwnerContainerFilter, "contact" | "search" | "id"> & { contact?: string; search?: string },
    page: { offset: number; pageSize: number },
  ): Promise<{ results: ContainerView[]; hasNext: boolean }> {
    const { db } = this.deps.database;
    const search = filter.search?.trim();
    const rows = await searchOwnerContainers(
      db,
      accountId,
      {
        ...filter,
        contact: filter.contact ? containsPattern(filter.contact) : undefined,
        search: search ? containsPattern(search) : undefined,
        id: search && /^\d{1,15}$/.test(search) ? Number(search) : undefined,
      },
      { offset: page.offset, limit: page.pageSize + 1 },
    );
    const views: ContainerView[] = [];
    for (const row of rows.slice(0, page.pageSize)) {
      const shared = await this.deps.records.findContainer(db, accountId, row.id);
      if (shared) views.push(presentContainer(row, shared));
    }
    return { results: views, hasNext: rows.length > page.pageSize };
  }

  /** GET by id; 404 for absent or foreign ids. */
  async get(auth: AuthContext, rawId: string): Promise<ContainerView> {
    const id = pathId(rawId, "Container");
    return this.present(await loadContainer(this.deps, this.deps.database.db, auth.accountId, id));
  }

  /**
   * PATCH: partial update of page_type (only while a draft: 422 after), display_chat, callback_url
   * and requester. Audited ABA-0030.
   */
  async update(auth: AuthContext, rawId: string, raw: unknown): Promise<ContainerView> {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    const input = readContainerInput(requireObjectBody(raw), deps, false);
    if (input.callbackUrl) await checkCallbackDestination(input.callbackUrl, deps.config);
    return deps.database.db.transaction().execute(async (trx) => {
      const c = await loadContainer(deps, trx, auth.accountId, id, { forUpdate: this.lockRows });
      if (input.pageType !== undefined && input.pageType !== c.row.page_type && c.row.state !== "draft") {
        throw unprocessable("The page type of a sent container cannot change.");
      }
      if (input.requesterId) await requesterOf(deps, trx, auth.accountId, input.requesterId);
      const now = nowText(deps);
      await deps.records.updateContainer(trx, id, {
        ...(input.callbackUrl !== undefined ? { callbackUrl: input.callbackUrl } : {}),
        ...(input.requesterId !== undefined ? { requesterId: input.requesterId } : {}),
        now,
      });
      await updateContainer(trx, id, {
        ...(input.pageType !== undefined ? { page_type: input.pageType } : {}),
        ...(input.displayChat !== undefined ? { display_chat: input.displayChat ? 1 : 0 } : {}),
        updated: now,
      });
      const fields = Object.keys(input).map((k) => k.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`));
      await recordChange(
        deps,
        trx,
        auth,
        AuditCode.ENTITY_UPDATED,
        "container",
        id,
        JSON.stringify({ fields }),
      );
      return this.present(await loadContainer(deps, trx, auth.accountId, id));
    });
  }

  /**
   * DELETE: removes the container with its recipients, features, chat and files (their blobs are
   * queued for deletion in the same transaction). Audited ABA-0020.
   */
  async delete(auth: AuthContext, rawId: string): Promise<void> {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    await deps.database.db.transaction().execute(async (trx) => {
      await loadContainer(deps, trx, auth.accountId, id, { forUpdate: this.lockRows });
      await deps.media.queueBlobDeletionOfRequest(trx, id);
      await deps.records.deleteContainer(trx, id);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_DELETED, "container", id, "");
    });
  }

  /** POST email: sets the container's email text (`subject`, `body`: plain text). 201; ABA-0010/0030. */
  async setEmail(auth: AuthContext, rawId: string, raw: unknown) {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    const body = requireObjectBody(raw);
    const errors = new FieldErrors();
    const subject = readString(body, "subject", errors, { max: LIMITS.subject, nullable: true }) ?? "";
    const text = readString(body, "body", errors, { max: LIMITS.body, nullable: true }) ?? "";
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      await loadContainer(deps, trx, auth.accountId, id);
      const existed = await findEmail(trx, id);
      const row = await upsertEmail(trx, {
        accountId: auth.accountId,
        containerId: id,
        subject,
        // Keep the owner's line breaks: readString trims only the ends.
        body: typeof body.body === "string" ? body.body.replace(/\r\n?/g, "\n").trim() : text,
        now: nowText(deps),
      });
      await recordChange(
        deps,
        trx,
        auth,
        existed ? AuditCode.ENTITY_UPDATED : AuditCode.ENTITY_CREATED,
        "container_email",
        row.id,
        `container ${id}`,
      );
      return presentEmail(row);
    });
  }

  /** GET email: the container's email text; 404 when none was set. */
  async getEmail(auth: AuthContext, rawId: string) {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    await loadContainer(deps, deps.database.db, auth.accountId, id);
    const row = await findEmail(deps.database.db, id);
    if (!row) throw notFound("Email");
    return presentEmail(row);
  }

  /**
   * POST auth_code: the session asks for a 6-digit code sent to `to` by `send_as` (email or sms)
   * before showing anything. `to` is checked for its channel (E.164 for SMS). Setting it again
   * unlocks sessions locked by wrong codes. 201; ABA-0030.
   */
  async setAuthCode(auth: AuthContext, rawId: string, raw: unknown) {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    const body = requireObjectBody(raw);
    const errors = new FieldErrors();
    const sendAs = readString(body, "send_as", errors, { max: 10, required: true });
    const to = readString(body, "to", errors, { max: LIMITS.to, required: true });
    let channel: "email" | "sms" | undefined;
    let destination: string | undefined;
    if (sendAs !== undefined && sendAs !== null) {
      const v = sendAs.toLowerCase();
      if (v === "email" || v === "sms") channel = v;
      else errors.add("send_as", `"${sendAs}" is not a valid choice. Choose email or sms.`);
    }
    if (channel && to) {
      if (channel === "email") {
        if (isValidEmail(to)) destination = to;
        else errors.add("to", "Enter a valid email address.");
      } else {
        const phone = readPhone(to);
        if ("e164" in phone) {
          requireSmsCapable(phone.e164, "to");
          destination = phone.e164;
        } else errors.add("to", phone.error);
      }
    }
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      await loadContainer(deps, trx, auth.accountId, id);
      const row = await updateContainer(trx, id, {
        auth_send_as: channel!,
        auth_to: destination!,
        updated: nowText(deps),
      });
      // Setting the code again unlocks sessions locked by wrong codes.
      await deps.records.clearTfaFailures(trx, id);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "container", id, "auth_code");
      return { container: id, send_as: channel!, to: destination!, updated: row.updated };
    });
  }

  /** DELETE auth_code: the session no longer asks for a code. 204; ABA-0030. */
  async removeAuthCode(auth: AuthContext, rawId: string): Promise<void> {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    await deps.database.db.transaction().execute(async (trx) => {
      await loadContainer(deps, trx, auth.accountId, id);
      await updateContainer(trx, id, { auth_send_as: null, auth_to: null, updated: nowText(deps) });
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "container", id, "auth_code removed");
    });
  }

  /** Row locks exist on PostgreSQL only; SQLite runs one write transaction at a time. */
  private get lockRows(): boolean {
    return this.deps.database.dialect === "postgres";
  }
}
