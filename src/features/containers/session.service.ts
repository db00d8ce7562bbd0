/**
 * The recipient's side of a container: what one recipient item's session link opens and what the
 * recipient may do there. The pages live in the session feature; the rules and effects live here,
 * next to the tables they read.
 */
import { AppError } from "../../shared/errors.js";
import type { MediaRow } from "../media/index.js";
import type { RequestRow } from "../requests/index.js";
import type { ChatService } from "./chat.service.js";
import {
  type FeatureRow,
  featuresOf,
  findFeatureById,
  type MediaTagRow,
  permissionsOf,
  tagsOf,
} from "./container-features.repository.js";
import type { ActionSource, ContainerLifecycle } from "./container-lifecycle.service.js";
import type { ChatClosure } from "./container-state.js";
import { type ContainerDeps, nowText } from "./containers.context.js";
import {
  type ContainerRow,
  findContainerById,
  findEmail,
  findItem,
  findItemByToken,
  findRecipient,
  messagesAfter,
  type RecipientItemRow,
  type RecipientRow,
  repliesOfRecipient,
} from "./containers.repository.js";
import { waitingFor } from "./feature-order.js";

/** Session tokens are 32 URL-safe characters; anything else is answered 404 without a lookup. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{20,64}$/;

/** Most chat entries one read returns (the page asks again from the last one it has). */
export const CHAT_PAGE = 200;

/** A resolved session link: the item, its recipient, the container and its shared row. */
export interface SessionContext {
  token: string;
  item: RecipientItemRow;
  recipient: RecipientRow;
  container: ContainerRow;
  /** The container's row in the id space it shares with requests (identifier, requester, two-factor). */
  shared: RequestRow;
}

/** A feature as the recipient sees it, with its files and the names of the files it expects. */
export interface SessionFeatureView {
  row: FeatureRow;
  /** pending, complete, or expired (also when pending past its expiry). */
  state: "pending" | "complete" | "expired";
  /** Push: the owner's available files. Pull: this recipient's uploads (any state but removed). */
  files: MediaRow[];
  /** Names of the files a pushpull feature expects (media tags). */
  tags: string[];
  /** The features this one still waits for (`after`), by id and title; empty when it is open. */
  waitsFor: { id: number; title: string }[];
}

/** Where the recipient's chat stands: owner messages and this recipient's replies, in order. */
export interface ChatEntry {
  kind: "message" | "reply";
  id: number;
  title: string;
  body: string;
  created: string;
}

/** Outcome of a submit. */
export type SubmitResult =
  | { ok: true; feature: FeatureRow }
  | { ok: false; reason: "absent" | "uploading" | "empty" | "closed" | "waiting"; message: string };

/** The two-factor step a container asks for, when it has an auth code. */
export interface SessionAuthCode {
  channel: "email" | "sms";
  destination: string;
  failures: number;
}

export class ContainerSessions {
  constructor(private readonly deps: ContainerDeps & { lifecycle: ContainerLifecycle; chat: ChatService }) {}

  /**
   * The session a token opens, or undefined for unknown, deleted and inactive ones alike (the
   * recipient deactivated, the container a draft or deleted).
   */
  async resolve(token: string): Promise<SessionContext | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    const db = this.deps.database.db;
    const item = await findItemByToken(db, token);
    if (!item) return undefined;
    const [recipient, container, shared] = await Promise.all([
      findRecipient(db, item.account_id, item.recipient_id),
      findContainerById(db, item.container_id),
      this.deps.records.findContainer(db, item.account_id, item.container_id),
    ]);
    if (recipient?.active !== 1 || !container || !shared || container.state === "draft") return undefined;
    return { token, item, recipient, container, shared };
  }

  /**
   * The session token of recipient item `itemId` when feature `featureId` belongs to the item's
   * container (a verified return link names both); undefined otherwise.
   */
  async sessionTokenOf(featureId: number, itemId: number): Promise<string | undefined> {
    const db = this.deps.database.db;
    const feature = await findFeatureById(db, featureId);
    const item = feature && (await findItem(db, feature.account_id, itemId));
    if (!item || item.container_id !== feature?.container_id) return undefined;
    return item.session_token ?? undefined;
  }

  /** The code step the session asks for first, or undefined when the container has no auth code. */
  authCode(ctx: SessionContext): SessionAuthCode | undefined {
    const { auth_send_as: channel, auth_to: destination } = ctx.container;
    if ((channel !== "email" && channel !== "sms") || !destination) return undefined;
    return { channel, destination, failures: Number(ctx.shared.tfa_failures ?? 0) };
  }

  /** The container's email text (shown as its message), if the owner set one. */
  async message(ctx: SessionContext): Promise<{ subject: string; body: string } | undefined> {
    const email = await findEmail(this.deps.database.db, ctx.container.id);
    return email ? { subject: email.subject, body: email.body } : undefined;
  }

  /** The features this recipient may see, oldest first, with their files and expected names. */
  async features(ctx: SessionContext): Promise<SessionFeatureView[]> {
    const db = this.deps.database.db;
    const rows = await featuresOf(db, ctx.container.id);
    const permissions = await permissionsOf(
      db,
      rows.map((r) => r.id),
    );
    const visible = rows.filter((r) => {
      const allowed = permissions.get(r.id);
      return !allowed || allowed.includes(ctx.recipient.id);
    });
    const tags = await tagsOf(
      db,
      visible.map((r) => r.id),
    );
    const views: SessionFeatureView[] = [];
    for (const row of visible) {
      const media = await this.deps.media.rowsOfFeature(db, row.id);
      const files =
        row.direction === "push"
          ? media.filter((m) => m.uploaded_by === "owner" && m.state === "available")
          : media.filter((m) => m.recipient_id === ctx.recipient.id && m.state !== "removed");
      const waits = await waitingFor(db, row);
      views.push({
        row,
        state: this.stateOf(row),
        files,
        tags: tags.filter((t: MediaTagRow) => t.feature_id === row.id).map((t) => t.name),
        waitsFor: waits.map((w) => ({ id: w.id, title: w.title })),
      });
    }
    return views;
  }

  /** One feature this recipient may see, or undefined. */
  async feature(ctx: SessionContext, featureId: number): Promise<SessionFeatureView | undefined> {
    const row = await findFeatureById(this.deps.database.db, featureId);
    if (!row || row.container_id !== ctx.container.id) return undefined;
    return (await this.features(ctx)).find((f) => f.row.id === featureId);
  }

  private stateOf(row: FeatureRow): SessionFeatureView["state"] {
    if (row.state !== "pending") return row.state;
    return row.expires_at !== null && row.expires_at <= nowText(this.deps) ? "expired" : "pending";
  }

  /** Records the open of the session: the first open of each item sends `session_opened`. */
  async open(ctx: SessionContext, source: ActionSource): Promise<void> {
    if (ctx.item.opened_at !== null) return;
    await this.deps.database.db
      .transaction()
      .execute((trx) => this.deps.lifecycle.openSession(trx, ctx.item, source));
  }

  /** The chat after the given ids: owner messages and this recipient's replies, in time order. */
  async chat(ctx: SessionContext, after: { message: number; reply: number }): Promise<ChatEntry[]> {
    const db = this.deps.database.db;
    const [messages, replies] = await Promise.all([
      messagesAfter(db, ctx.container.id, after.message, CHAT_PAGE),
      repliesOfRecipient(db, ctx.container.id, ctx.recipient.id, after.reply, CHAT_PAGE),
    ]);
    const entries: ChatEntry[] = [
      ...messages.map((m) => ({
        kind: "message" as const,
        id: m.id,
        title: m.title,
        body: m.body,
        created: m.created,
      })),
      ...replies.map((r) => ({
        kind: "reply" as const,
        id: r.id,
        title: "",
        body: r.body,
        created: r.created,
      })),
    ];
    return entries.sort((a, b) =>
      a.created === b.created
        ? a.kind === b.kind
          ? a.id - b.id
          : a.kind === "message"
            ? -1
            : 1
        : a.created < b.created
          ? -1
          : 1,
    );
  }

  /** Why the container's chat is closed (its owner closed it, or it expired), or undefined while open. */
  async chatClosure(ctx: SessionContext): Promise<ChatClosure | undefined> {
    return this.deps.chat.closure(this.deps.database.db, ctx.container);
  }

  /** A chat reply of this recipient: stored, audited, sent as `message_reply` (400/422 as the chat says). */
  async reply(ctx: SessionContext, body: unknown, source: ActionSource) {
    return this.deps.chat.reply(
      {
        accountId: ctx.container.account_id,
        containerId: ctx.container.id,
        recipientId: ctx.recipient.id,
        from: source.from ?? "",
      },
      body,
    );
  }

  /**
   * Submits a pull feature with the recipient's optional message: it completes with its files
   * (`feature` callback, the container settled). Refused while a file is still uploading, and with
   * no file unless `confirmEmpty`.
   */
  async submit(
    ctx: SessionContext,
    featureId: number,
    receiverMessage: string,
    confirmEmpty: boolean,
    source: ActionSource,
  ): Promise<SubmitResult> {
    const feature = await this.feature(ctx, featureId);
    if (!feature) return { ok: false, reason: "absent", message: "Not found." };
    if (feature.row.direction !== "pull" || feature.state !== "pending")
      return { ok: false, reason: "closed", message: "This request no longer accepts files." };
    if ((await waitingFor(this.deps.database.db, feature.row)).length)
      return { ok: false, reason: "waiting", message: "This step waits for another one to be done first." };
    if (feature.files.some((f) => f.state !== "available"))
      return {
        ok: false,
        reason: "uploading",
        message: "Some files are still uploading. Wait until every upload is complete, then submit.",
      };
    if (feature.files.length === 0 && !confirmEmpty)
      return {
        ok: false,
        reason: "empty",
        message: "You have not added any file. Add files, or confirm that you want to submit without any.",
      };
    const message = receiverMessage.trim();
    const row = await this.deps.database.db.transaction().execute((trx) =>
      this.deps.lifecycle.completeFeature(trx, feature.row.id, {
        receiverMessage: message === "" ? null : message,
        source,
      }),
    );
    return { ok: true, feature: row };
  }

  /**
   * After a complete download of a push feature's file: once every file of the feature was
   * downloaded, the feature completes (`feature` callback). A no-op otherwise.
   */
  async downloaded(ctx: SessionContext, featureId: number, source: ActionSource): Promise<void> {
    try {
      await this.completeIfDownloaded(ctx, featureId, source);
    } catch (error) {
      // Another download completed it at the same moment.
      if (!(error instanceof AppError && error.code === "UNPROCESSABLE_ENTITY")) throw error;
    }
  }

  private async completeIfDownloaded(ctx: SessionContext, featureId: number, source: ActionSource) {
    await this.deps.database.db.transaction().execute(async (trx) => {
      const row = await findFeatureById(trx, featureId);
      if (
        !row ||
        row.container_id !== ctx.container.id ||
        row.direction !== "push" ||
        row.state !== "pending"
      )
        return;
      const files = (await this.deps.media.rowsOfFeature(trx, featureId)).filter(
        (m) => m.uploaded_by === "owner" && m.state !== "uploading",
      );
      if (files.length === 0 || files.some((m) => m.state === "available" && m.times_downloaded === 0))
        return;
      await this.deps.lifecycle.completeFeature(trx, featureId, { source });
    });
  }
}
