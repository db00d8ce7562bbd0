import type { FastifyReply, FastifyRequest } from "fastify";
import type { MessageKey } from "../../shared/i18n/i18n.js";
import type { ChatEntry, SessionFeatureView } from "../containers/index.js";
import type { TwoFactorService } from "../recipient/index.js";
import {
  formatBytes,
  presentFile,
  sendPage,
  type TfaNotice,
  TfaPage,
  type UploadRules,
} from "../recipient/index.js";
import type { SessionPage, SessionPages } from "./session.context.js";
import {
  type ChatEntryView,
  type ChatView,
  type FeatureCardBase,
  type FeatureCardView,
  SessionExpiredPage,
  SessionPage as SessionPageView,
} from "./session.views.js";

/** Notices a redirect may ask the page to show (never text from the query itself). */
export const NOTICES = {
  sent: "tfa.sent",
  submitted: "session.noticeSubmitted",
  replied: "session.noticeReplied",
  returned: "step.noticeReturned",
} as const satisfies Record<string, MessageKey>;
export type NoticeKey = keyof typeof NOTICES;

/** What a session page says after a refused Submit (`?refused=<reason>&feature=<id>`). */
export const SUBMIT_REFUSALS = {
  uploading: "submit.uploading",
  empty: "submit.emptySession",
  closed: "submit.closed",
  waiting: "step.lockedTitle",
} as const satisfies Record<string, MessageKey>;

/** What a session page says after a refused chat reply (`?refused=<reason>#chat`). */
export const REPLY_REFUSALS = {
  reply_invalid: "chat.tooLong",
  reply_closed: "chat.closed",
  reply_limited: "chat.tooFast",
} as const satisfies Record<string, MessageKey>;

/** What a form post shows when it is answered with the page itself. */
export interface SessionExtras {
  status?: number;
  notice?: NoticeKey | undefined;
  tfaNotice?: TfaNotice | undefined;
  /** A refused submit of one feature. */
  submit?: { featureId: number; error: MessageKey; confirmEmpty: boolean } | undefined;
  /** A refused chat reply: why. */
  chat?: { error: MessageKey } | undefined;
}

/** The upload rules of a pull feature for the page and the upload endpoints. */
export function uploadRulesOf(
  feature: SessionFeatureView,
  limits: { maxFile: number; maxChunk: number },
): UploadRules {
  const own = feature.row.max_file_size ? Number(feature.row.max_file_size) : undefined;
  const maxFileBytes = own ? Math.min(own, limits.maxFile) : limits.maxFile;
  return {
    extensions: feature.row.allowed_file_extensions ? feature.row.allowed_file_extensions.split(",") : [],
    maxFileBytes,
    maxFileLabel: formatBytes(maxFileBytes),
    chunkBytes: Math.min(limits.maxChunk, 4 * 1024 * 1024),
  };
}

/** A chat entry as the page shows it: the owner's under the sender's name, the recipient's as "You". */
export function chatEntryView(entry: ChatEntry, sender: string, you: string): ChatEntryView {
  return { ...entry, author: entry.kind === "message" ? sender : you };
}

/** The card of a push or pull feature. */
function cardOf(
  f: SessionFeatureView,
  base: FeatureCardBase,
  extras: SessionExtras,
  limits: { maxFile: number; maxChunk: number },
): FeatureCardView {
  if (f.row.direction === "push") {
    return {
      ...base,
      kind: "push" as const,
      files: f.files.map((m) => ({ ...presentFile(m), downloaded: m.times_downloaded > 0 })),
    };
  }
  const refused = extras.submit?.featureId === f.row.id ? extras.submit : undefined;
  return {
    ...base,
    kind: "pull" as const,
    expected: f.tags,
    rules: uploadRulesOf(f, limits),
    maxFiles: f.row.max_files === null ? null : Number(f.row.max_files),
    received: f.files.filter((m) => m.state === "available").map(presentFile),
    receiverMessage: f.row.receiver_message,
    error: refused?.error,
    confirmEmpty: refused?.confirmEmpty,
  };
}

/**
 * Sends what a session link shows now: the code step, the expired page (410) once every feature
 * expired, or the session. Showing the session records its first open (`session_opened`) and
 * counts as the files page loaded (ABB-0020).
 */
export async function renderSession(
  kit: SessionPages,
  twoFactor: TwoFactorService,
  request: FastifyRequest,
  reply: FastifyReply,
  page: SessionPage,
  extras: SessionExtras = {},
): Promise<FastifyReply> {
  const { sessions, config } = kit.deps;
  const csrf = kit.csrfToken(request, page);
  const chrome = kit.chrome(page, request);
  const card = await kit.card(page);
  const status = extras.status ?? 200;
  const subject = kit.tfaSubject(page);
  if (subject && !kit.unlocked(request, page)) {
    const tfa = await twoFactor.status(subject);
    let tfaNotice = extras.tfaNotice ?? (extras.notice === "sent" ? { kind: "sent" as const } : undefined);
    // The send limit's wait comes from the code state, not from the address.
    if (tfaNotice?.kind === "send_limit" && Number.isNaN(tfaNotice.retryAfterSeconds))
      tfaNotice =
        tfa.sendsLeft === 0 ? { kind: "send_limit", retryAfterSeconds: tfa.retryAfterSeconds } : undefined;
    return sendPage(
      reply,
      status,
      TfaPage({
        chrome,
        base: page.base,
        noun: "session",
        csrf,
        status: tfa,
        notice: tfaNotice,
        card,
      }),
    );
  }
  const features = await sessions.features(page.session);
  if (features.length > 0 && features.every((f) => f.state === "expired")) {
    const expiredAt = features
      .map((f) => f.row.expires_at ?? f.row.completed_at)
      .filter((d): d is string => !!d)
      .sort()
      .at(-1);
    return sendPage(reply, 410, SessionExpiredPage({ chrome, card, expiredAt: expiredAt ?? null }));
  }
  // A HEAD (link checkers, download managers) or a speculative prefetch is not the recipient
  // opening the link: only a real GET records the first open.
  if (request.method === "GET" && !isPrefetch(request)) {
    await sessions.open(page.session, {
      from: request.ip,
      method: request.method,
      path: request.url.split("?")[0] ?? "",
    });
  }
  request.sessionShown = true;
  const limits = { maxFile: config.MAX_FILE_BYTES, maxChunk: config.MAX_CHUNK_BYTES };
  const cards: FeatureCardView[] = [];
  for (const [index, f] of features.entries()) {
    const base = {
      id: f.row.id,
      number: index + 1,
      title: f.row.title,
      description: f.row.description,
      state: f.state,
      expiresAt: f.row.expires_at,
      completedAt: f.row.completed_at,
      locked: f.waitsFor.length
        ? chrome.i18n.t("step.locked", { titles: f.waitsFor.map((w) => w.title || `#${w.id}`).join(", ") })
        : undefined,
    };
    if (kit.deps.steps.isStep(f.row)) {
      const step = await kit.deps.steps.card(f.row, chrome.i18n);
      cards.push({
        ...base,
        kind: "step" as const,
        stepKind: step.kind,
        status: step.status,
        summary: step.summary,
        actionLabel: step.actionLabel,
        href: `${page.base}steps/${f.row.id}/`,
      });
      continue;
    }
    cards.push(cardOf(f, base, extras, limits));
  }
  const { container, recipient } = page.session;

  let chat: ChatView | undefined;
  if (container.display_chat === 1) {
    const entries = await sessions.chat(page.session, { message: 0, reply: 0 });
    const sender = card.name || page.account.name || chrome.i18n.t("card.sender");
    const closed = await sessions.chatClosure(page.session);
    chat = {
      open: closed === undefined,
      closed,
      entries: entries.map((e) => chatEntryView(e, sender, chrome.i18n.t("chat.you"))),
      afterMessage: Math.max(0, ...entries.filter((e) => e.kind === "message").map((e) => e.id)),
      afterReply: Math.max(0, ...entries.filter((e) => e.kind === "reply").map((e) => e.id)),
      error: extras.chat?.error,
    };
  }
  const notice = extras.notice && extras.notice !== "sent" ? NOTICES[extras.notice] : undefined;
  return sendPage(
    reply,
    status,
    SessionPageView({
      chrome,
      base: page.base,
      csrf,
      card,
      recipientName: [recipient.first_name, recipient.last_name].filter(Boolean).join(" "),
      message: await sessions.message(page.session),
      chat,
      features: cards,
      notice,
    }),
  );
}

/** A browser's speculative load (`Sec-Purpose: prefetch`, or the older `Purpose`/`X-Moz` headers). */
function isPrefetch(request: FastifyRequest): boolean {
  const h = request.headers;
  return [h["sec-purpose"], h.purpose, h["x-moz"], h["x-purpose"]].some(
    (v) => typeof v === "string" && /prefetch|preview/i.test(v),
  );
}
