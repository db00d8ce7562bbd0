import type { Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import { notFound, unprocessable } from "../../shared/errors.js";
import { type Paginated, paginate, parsePageRequest } from "../../shared/pagination.js";
import { FieldErrors, readString, requireObjectBody } from "../../shared/validation.js";
import { AuditCode } from "../audit/index.js";
import { featuresOf } from "./container-features.repository.js";
import { CHAT_CLOSED_DETAIL, type ChatClosure, chatClosure } from "./container-state.js";
import {
  type ContainerDeps,
  containerOfBody,
  loadContainer,
  nowText,
  pathId,
  recordChange,
  rowLock,
} from "./containers.context.js";
import {
  type ContainerView,
  presentContainer,
  presentMessage,
  presentReply,
} from "./containers.presenter.js";
import {
  type ContainerRow,
  findContainerById,
  findMessage,
  findRecipient,
  findReply,
  insertMessage,
  insertReply,
  listMessages,
  listReplies,
  updateContainer,
} from "./containers.repository.js";
import { optionalId } from "./recipients.service.js";

const TITLE_MAX = 255;
const BODY_MAX = 10_000;

/** Who writes a reply: a recipient of the container, from their session (or the sandbox helper). */
export interface ReplyAuthor {
  accountId: number;
  containerId: number;
  recipientId: number;
  /** Where the call came from, for the audit entry. */
  from?: string;
}

/**
 * The chat of a container: the owner's messages (`/v1/module_container/message/`) and the
 * recipients' replies (`/v1/module_container/messagereply/`), each reply a `message_reply` callback.
 * It lives as long as the container: completing features never closes it; the container expiring or
 * being deleted, or its owner closing it, does (ADR 0057).
 */
export class ChatService {
  constructor(private readonly deps: ContainerDeps) {}

  /** Why the container's chat is closed, read in `ex`; undefined while it is open. */
  async closure(ex: Executor, container: ContainerRow): Promise<ChatClosure | undefined> {
    return chatClosure(container, await featuresOf(ex, container.id), nowText(this.deps));
  }

  /** 422 naming why, once the chat is closed. */
  private async checkOpen(ex: Executor, container: ContainerRow): Promise<void> {
    const closure = await this.closure(ex, container);
    if (closure) throw unprocessable(CHAT_CLOSED_DETAIL[closure]);
  }

  /**
   * POST container/{id}/close_chat/: the owner ends the chat for good. Owner messages and recipient
   * replies are refused from then on (422), the session shows the conversation read-only; the
   * features go on. Idempotent: closing a closed chat changes nothing and answers the same. ABA-0030.
   */
  async close(auth: AuthContext, rawId: string): Promise<ContainerView> {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    return deps.database.db.transaction().execute(async (trx) => {
      const c = await loadContainer(deps, trx, auth.accountId, id, { lock: rowLock(deps, "update") });
      if (c.row.chat_closed_at !== null) return presentContainer(c.row, c.shared);
      const now = nowText(deps);
      const row = await updateContainer(trx, id, { chat_closed_at: now, updated: now });
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "container", id, "chat closed");
      return presentContainer(row, c.shared);
    });
  }

  /** POST message/: `{container, body, title?}` as JSON or a form. 201; ABA-0010; 422 once the chat is closed. */
  async post(auth: AuthContext, raw: unknown) {
    const { deps } = this;
    const body = requireObjectBody(raw);
    const errors = new FieldErrors();
    const text = readString(body, "body", errors, { max: BODY_MAX, required: true });
    const title = readString(body, "title", errors, { max: TITLE_MAX, nullable: true }) ?? "";
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      // Shared lock: messages go on together; closing the chat waits for them, and they for it.
      const c = await containerOfBody(
        deps,
        trx,
        auth.accountId,
        body.container,
        "container",
        rowLock(deps, "share"),
      );
      await this.checkOpen(trx, c.row);
      const now = nowText(deps);
      const row = await insertMessage(trx, {
        account_id: auth.accountId,
        container_id: c.row.id,
        title,
        body: text!,
        created: now,
        updated: now,
      });
      await recordChange(
        deps,
        trx,
        auth,
        AuditCode.ENTITY_CREATED,
        "message",
        row.id,
        `container ${c.row.id}`,
      );
      return presentMessage(row);
    });
  }

  /** GET message/: oldest first; `container=<id>`. */
  async listMessages(
    auth: AuthContext,
    query: Record<string, unknown>,
  ): Promise<Paginated<ReturnType<typeof presentMessage>>> {
    const page = parsePageRequest(query);
    const containerId = optionalId(query.container, "container");
    const { rows, count } = await listMessages(
      this.deps.database.db,
      auth.accountId,
      { containerId },
      {
        offset: page.offset,
        limit: page.pageSize,
      },
    );
    return paginate(
      rows.map(presentMessage),
      count,
      page,
      this.deps.config.publicBaseUrl,
      "/v1/module_container/message/",
      {
        container: query.container,
      },
    );
  }

  /** GET message/{id}. */
  async getMessage(auth: AuthContext, rawId: string) {
    const row = await findMessage(this.deps.database.db, auth.accountId, pathId(rawId, "Message"));
    if (!row) throw notFound("Message");
    return presentMessage(row);
  }

  /** GET messagereply/: oldest first; `recipient__container`, `container` and `recipient` filters. */
  async listReplies(
    auth: AuthContext,
    query: Record<string, unknown>,
  ): Promise<Paginated<ReturnType<typeof presentReply>>> {
    const page = parsePageRequest(query);
    const containerId =
      optionalId(query.recipient__container, "recipient__container") ??
      optionalId(query.container, "container");
    const recipientId = optionalId(query.recipient, "recipient");
    const { rows, count } = await listReplies(
      this.deps.database.db,
      auth.accountId,
      { containerId, recipientId },
      {
        offset: page.offset,
        limit: page.pageSize,
      },
    );
    return paginate(
      rows.map(presentReply),
      count,
      page,
      this.deps.config.publicBaseUrl,
      "/v1/module_container/messagereply/",
      {
        recipient__container: query.recipient__container,
        container: query.container,
        recipient: query.recipient,
      },
    );
  }

  /** GET messagereply/{id}. */
  async getReply(auth: AuthContext, rawId: string) {
    const row = await findReply(this.deps.database.db, auth.accountId, pathId(rawId, "Message reply"));
    if (!row) throw notFound("Message reply");
    return presentReply(row);
  }

  /**
   * A recipient's reply: stored, audited (ABA-0010) and sent as a `message_reply` callback in one
   * transaction. 400 for an empty or too long body; 422 when the container has no chat or its chat is
   * closed (naming why).
   */
  async reply(author: ReplyAuthor, rawBody: unknown) {
    const { deps } = this;
    const errors = new FieldErrors();
    const text = readString({ body: rawBody }, "body", errors, { max: BODY_MAX, required: true });
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      const container = await findContainerById(trx, author.containerId, { lock: rowLock(deps, "share") });
      const recipient = await findRecipient(trx, author.accountId, author.recipientId);
      if (
        !container ||
        container.account_id !== author.accountId ||
        recipient?.container_id !== container.id
      ) {
        throw notFound("Recipient");
      }
      if (container.display_chat !== 1) throw unprocessable("This container has no chat.");
      await this.checkOpen(trx, container);
      const now = nowText(deps);
      const row = await insertReply(trx, {
        account_id: author.accountId,
        container_id: container.id,
        recipient_id: recipient.id,
        body: text!,
        created: now,
        updated: now,
      });
      await deps.audit.write(trx, {
        accountId: author.accountId,
        code: AuditCode.ENTITY_CREATED,
        relatedModel: "message_reply",
        relationKey: row.id,
        value: `container ${container.id} recipient ${recipient.id}`,
        from: author.from ?? "",
      });
      const shared = await deps.records.findContainer(trx, author.accountId, container.id);
      await deps.events.emit(trx, {
        accountId: author.accountId,
        containerId: container.id,
        type: "message_reply",
        body: {
          message_reply: presentReply(row),
          container: { id: container.id, identifier: shared?.identifier ?? "" },
          recipient: recipient.id,
        },
      });
      return presentReply(row);
    });
  }
}
