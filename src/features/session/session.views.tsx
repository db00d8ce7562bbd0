import type { VNode } from "preact";
import type { MessageKey, Translator } from "../../shared/i18n/i18n.js";
import { Layout } from "../../web/layout.js";
import type { ChatClosure } from "../containers/index.js";
import {
  Alert,
  CsrfField,
  FileInfo,
  type FileView,
  LocalTime,
  MessageCard,
  type PageChrome,
  RequesterCard,
  type RequesterCardView,
  type UploadRules,
  uploadRulesText,
} from "../recipient/index.js";

/** A state as the recipient reads it. */
const STATE_LABELS = {
  pending: "session.state.pending",
  complete: "session.state.complete",
  expired: "session.state.expired",
} as const satisfies Record<string, MessageKey>;
type FeatureState = keyof typeof STATE_LABELS;

/** One entry of the chat, oldest first. */
export interface ChatEntryView {
  kind: "message" | "reply";
  id: number;
  author: string;
  title: string;
  body: string;
  created: string;
}

/** The chat of a session (when the container shows one). */
export interface ChatView {
  /** Replies are taken: the sender has not closed the chat and the session has not expired. */
  open: boolean;
  /** Why replies are no longer taken (the transcript stays readable). */
  closed?: ChatClosure | undefined;
  entries: ChatEntryView[];
  /** The newest owner message and reply ids shown, from which the page asks for newer ones. */
  afterMessage: number;
  afterReply: number;
  /** Why the last reply was refused (a catalogue key; the page script puts the typed text back). */
  error?: MessageKey | undefined;
}

/** What every card of the session shows. */
export interface FeatureCardBase {
  id: number;
  /** The card's place in the session (1-based), for untitled steps. */
  number: number;
  title: string;
  description: string;
  state: FeatureState;
  expiresAt: string | null;
  completedAt: string | null;
  /** Why the card is locked (the steps it waits for), or undefined when it is open. */
  locked?: string | undefined;
}

/** Files the owner sent: download each, or all as one zip. */
export interface PushCardView extends FeatureCardBase {
  kind: "push";
  files: (FileView & { downloaded: boolean })[];
}

/** Files the owner asks for: the uploader, the files received, a message and Submit. */
export interface PullCardView extends FeatureCardBase {
  kind: "pull";
  /** Names of the files the owner expects. */
  expected: string[];
  rules: UploadRules;
  maxFiles: number | null;
  received: FileView[];
  receiverMessage: string | null;
  /** After a refused submit: why (a catalogue key) and whether to offer submitting with no file. */
  error?: MessageKey | undefined;
  confirmEmpty?: boolean | undefined;
}

/** An enrichment step: its kind's status in words and the button to its step page. */
export interface StepCardView extends FeatureCardBase {
  kind: "step";
  stepKind: string;
  status: string;
  summary: string;
  actionLabel: string;
  href: string;
}

export type FeatureCardView = PushCardView | PullCardView | StepCardView;

/** The lock line of a card waiting for other steps. */
function Locked(props: { text: string | undefined; id: number; i18n: Translator }): VNode | null {
  if (!props.text) return null;
  return (
    <p class="fy-locked" id={`feature-${props.id}-locked`}>
      <span class="fy-badge fy-badge-locked">{props.i18n.t("step.lockedTitle")}</span> {props.text}
    </p>
  );
}

function StepCard(props: { card: StepCardView; i18n: Translator }): VNode {
  const { card, i18n } = props;
  const headingId = `feature-${card.id}-heading`;
  return (
    <section
      class="fy-card fy-feature fy-step"
      id={`feature-${card.id}`}
      aria-labelledby={headingId}
      data-kind={card.stepKind}
      data-status={card.status}
    >
      <div class="fy-feature-head">
        <h2 id={headingId}>{card.title || i18n.t("step.untitled", { number: String(card.number) })}</h2>
        <StateBadge state={card.state} i18n={i18n} />
      </div>
      {card.description ? <p class="fy-message">{card.description}</p> : null}
      <p class="fy-muted" data-role="step-summary">
        {card.summary}
      </p>
      {card.locked ? (
        <Locked text={card.locked} id={card.id} i18n={i18n} />
      ) : card.state === "pending" ? (
        <p class="fy-actions">
          <a class="fy-button fy-button-primary" href={card.href}>
            {card.actionLabel}
          </a>
        </p>
      ) : null}
      <Expiry state={card.state} expiresAt={card.expiresAt} i18n={i18n} />
    </section>
  );
}

function StateBadge(props: { state: FeatureState; i18n: Translator }): VNode {
  return <span class={`fy-badge fy-badge-${props.state}`}>{props.i18n.t(STATE_LABELS[props.state])}</span>;
}

function Expiry(props: { state: FeatureState; expiresAt: string | null; i18n: Translator }): VNode | null {
  const { i18n } = props;
  if (!props.expiresAt) return null;
  const key: MessageKey =
    props.state === "expired"
      ? "session.expiredOn"
      : props.state === "pending"
        ? "session.openUntil"
        : "session.wasOpenUntil";
  return <p class="fy-muted">{i18n.rich(key, { date: <LocalTime iso={props.expiresAt} i18n={i18n} /> })}</p>;
}

function PushCard(props: { card: PushCardView; base: string; i18n: Translator }): VNode {
  const { card, base, i18n } = props;
  const { t } = i18n;
  const total = card.files.reduce((sum, f) => sum + f.bytes, 0);
  const headingId = `feature-${card.id}-heading`;
  return (
    <section class="fy-card fy-feature" id={`feature-${card.id}`} aria-labelledby={headingId}>
      <div class="fy-feature-head">
        <h2 id={headingId}>{card.title || t("push.title")}</h2>
        <StateBadge state={card.state} i18n={i18n} />
      </div>
      {card.description ? <p class="fy-message">{card.description}</p> : null}
      <Locked text={card.locked} id={card.id} i18n={i18n} />
      {card.locked ? null : card.state === "expired" ? (
        <p>{t("session.pushExpired")}</p>
      ) : card.files.length === 0 ? (
        <p>{t("session.noFilesYet")}</p>
      ) : (
        <>
          <p class="fy-muted">{t("files.summary", { count: card.files.length, size: i18n.bytes(total) })}</p>
          <ul class="fy-files">
            {card.files.map((file) => (
              <li class="fy-file">
                <FileInfo file={file} i18n={i18n} />
                {file.downloaded ? (
                  <span class="fy-badge fy-badge-complete">{t("session.downloaded")}</span>
                ) : null}
                <a
                  class="fy-button"
                  href={`${base}features/${card.id}/files/${file.id}/download`}
                  download={file.name}
                  aria-label={t("push.downloadLabel", { name: file.name })}
                >
                  {t("push.download")}
                </a>
              </li>
            ))}
          </ul>
          {card.files.length > 1 ? (
            <p class="fy-actions">
              <a
                class="fy-button fy-button-secondary"
                href={`${base}features/${card.id}/download.zip`}
                download
                aria-label={t("session.downloadAllLabel", { count: card.files.length })}
              >
                {t("push.downloadAll")}
              </a>
            </p>
          ) : null}
        </>
      )}
      <Expiry state={card.state} expiresAt={card.expiresAt} i18n={i18n} />
    </section>
  );
}

function PullCard(props: { card: PullCardView; base: string; csrf: string; i18n: Translator }): VNode {
  const { card, base, csrf, i18n } = props;
  const { t } = i18n;
  const id = card.id;
  const headingId = `feature-${id}-heading`;
  const { rules } = card;
  const accept = rules.extensions.map((e) => `.${e}`).join(",");
  const rulesText = [
    uploadRulesText(rules, i18n),
    card.maxFiles ? t("session.atMost", { count: card.maxFiles }) : "",
  ]
    .filter(Boolean)
    .join(" ");
  const open = card.state === "pending" && !card.locked;
  return (
    <section
      class="fy-card fy-feature"
      id={`feature-${id}`}
      aria-labelledby={headingId}
      data-upload-base={open ? `${base}features/${id}/uploads` : undefined}
      data-chunk-bytes={String(rules.chunkBytes)}
      data-max-file-bytes={String(rules.maxFileBytes)}
      data-extensions={rules.extensions.join(",")}
      data-max-files={card.maxFiles ? String(card.maxFiles) : undefined}
    >
      <div class="fy-feature-head">
        <h2 id={headingId}>{card.title || t("session.filesRequested")}</h2>
        <StateBadge state={card.state} i18n={i18n} />
      </div>
      {card.description ? <p class="fy-message">{card.description}</p> : null}
      <Locked text={card.locked} id={card.id} i18n={i18n} />
      {card.expected.length > 0 ? (
        <>
          <h3 class="fy-subheading">{t("session.filesAskedFor")}</h3>
          <ul class="fy-expected">
            {card.expected.map((name) => (
              <li>{name}</li>
            ))}
          </ul>
        </>
      ) : null}
      {card.error ? <Alert kind="error" text={t(card.error)} id={`feature-${id}-error`} /> : null}
      {open ? (
        <>
          <p class="fy-hint" id={`upload-rules-${id}`}>
            {rulesText}
          </p>
          <div class="fy-dropzone" data-role="dropzone">
            <p>{t("pull.drop")}</p>
            <label for={`file-input-${id}`} class="fy-visually-hidden">
              {t("session.chooseFor", { title: card.title || t("session.thisRequest") })}
            </label>
            <input
              id={`file-input-${id}`}
              data-role="file-input"
              type="file"
              multiple
              accept={accept || undefined}
              aria-describedby={`upload-rules-${id}`}
            />
          </div>
          <noscript>
            <p class="fy-alert fy-alert-error">{t("pull.noscript")}</p>
          </noscript>
          <div class="fy-field" data-role="overall" hidden>
            <label for={`overall-progress-${id}`}>{t("pull.overall")}</label>
            <progress
              id={`overall-progress-${id}`}
              data-role="overall-bar"
              class="fy-progress"
              max={100}
              value={0}
            />
            <p class="fy-hint" data-role="overall-text" />
            <div class="fy-upload-actions">
              <button type="button" class="fy-button fy-button-secondary" data-role="pause">
                {t("pull.pause")}
              </button>
              <button type="button" class="fy-button fy-button-secondary" data-role="resume" hidden>
                {t("pull.resume")}
              </button>
            </div>
          </div>
          <ul class="fy-files" data-role="upload-list" aria-label={t("pull.uploads")} />
          <div class="fy-visually-hidden" data-role="status" role="status" aria-live="polite" />
        </>
      ) : null}
      {/* Shown once a file is received, so an empty heading never sits above the reply box. */}
      <h3
        class="fy-muted"
        id={`received-heading-${id}`}
        data-role="received-heading"
        hidden={card.received.length === 0}
      >
        {t(open ? "client.received" : "session.sent", { count: card.received.length })}
      </h3>
      <ul class="fy-files" data-role="received" aria-labelledby={`received-heading-${id}`}>
        {card.received.map((file) => (
          <li class="fy-file" data-media-id={String(file.id)}>
            <FileInfo file={file} i18n={i18n} />
          </li>
        ))}
      </ul>
      {open ? (
        <form method="post" action={`${base}features/${id}/submit`} data-role="submit-form">
          <CsrfField token={csrf} />
          <div class="fy-field">
            <label for={`receiver-message-${id}`}>{t("session.replyLabel")}</label>
            <textarea
              id={`receiver-message-${id}`}
              class="fy-textarea"
              name="receiver_message"
              maxLength={10000}
            />
          </div>
          <div class="fy-actions">
            <button type="submit" class="fy-button" data-role="submit">
              {t("pull.submit")}
            </button>
            {card.confirmEmpty ? (
              <button type="submit" class="fy-button fy-button-secondary" name="confirm_empty" value="1">
                {t("pull.confirmEmpty")}
              </button>
            ) : null}
            <p class="fy-hint" data-role="submit-hint">
              {t("pull.submitHint")}
            </p>
          </div>
        </form>
      ) : card.receiverMessage ? (
        <>
          <h3 class="fy-subheading">{t("done.yourMessage")}</h3>
          <p class="fy-message">{card.receiverMessage}</p>
        </>
      ) : null}
      {card.state === "complete" ? (
        <p class="fy-done">
          <span aria-hidden="true">✓ </span>
          {card.completedAt
            ? i18n.rich("session.sentOn", { date: <LocalTime iso={card.completedAt} i18n={i18n} /> })
            : t("session.sentDone")}
        </p>
      ) : null}
      {card.state === "expired" ? <p>{t("session.featureExpired")}</p> : null}
      <Expiry state={card.state} expiresAt={card.expiresAt} i18n={i18n} />
    </section>
  );
}

function ChatCard(props: {
  chat: ChatView;
  base: string;
  csrf: string;
  sender: string;
  i18n: Translator;
}): VNode {
  const { chat, base, csrf, i18n } = props;
  const { t } = i18n;
  return (
    <section
      class="fy-card fy-chat"
      id="chat"
      aria-labelledby="chat-heading"
      data-chat-url={`${base}chat`}
      data-after-message={String(chat.afterMessage)}
      data-after-reply={String(chat.afterReply)}
      data-chat-open={chat.open ? "true" : "false"}
      data-sender={props.sender}
    >
      <h2 id="chat-heading">{t("chat.heading")}</h2>
      <ol class="fy-chat-log" id="chat-log" aria-live="polite" aria-relevant="additions">
        {chat.entries.length === 0 ? (
          <li class="fy-chat-empty fy-muted" data-role="chat-empty">
            {t("chat.empty")}
          </li>
        ) : null}
        {chat.entries.map((entry) => (
          <li class={`fy-chat-entry fy-chat-${entry.kind}`}>
            <p class="fy-chat-meta">
              <span class="fy-chat-author">{entry.author}</span>{" "}
              <time class="fy-muted" datetime={entry.created}>
                {i18n.date(entry.created)}
              </time>
            </p>
            {entry.title ? <p class="fy-chat-title">{entry.title}</p> : null}
            <p class="fy-message">{entry.body}</p>
          </li>
        ))}
      </ol>
      {chat.error && chat.open ? <Alert kind="error" text={t(chat.error)} id="chat-error" /> : null}
      {chat.open ? (
        <form method="post" action={`${base}chat`} id="chat-form" class="fy-chat-form">
          <CsrfField token={csrf} />
          <label for="chat-body">{t("chat.replyLabel")}</label>
          <textarea id="chat-body" class="fy-textarea" name="body" maxLength={10000} required />
          <div class="fy-actions">
            <button type="submit" class="fy-button">
              {t("chat.send")}
            </button>
            <p class="fy-hint" id="chat-status" role="status" aria-live="polite" />
          </div>
        </form>
      ) : (
        <p class="fy-muted fy-chat-closed" id="chat-closed">
          {t(chat.closed === "closed" ? "chat.closedBySender" : "chat.closed")}
        </p>
      )}
    </section>
  );
}

/** The session: who it is from, the message, the chat, and one card per feature the recipient may see. */
export function SessionPage(props: {
  chrome: PageChrome;
  base: string;
  csrf: string;
  card: RequesterCardView;
  recipientName: string;
  message: { subject: string; body: string } | undefined;
  chat: ChatView | undefined;
  features: FeatureCardView[];
  notice?: MessageKey | undefined;
}): VNode {
  const { i18n } = props.chrome;
  const { t } = i18n;
  const pending = props.features.filter((f) => f.state === "pending").length;
  const hasUploads = props.features.some((f) => f.kind === "pull" && f.state === "pending");
  const title =
    props.message?.subject ||
    (props.card.name ? t("session.from", { name: props.card.name }) : t("session.defaultTitle"));
  return (
    <Layout
      title={title}
      {...props.chrome}
      withScript={hasUploads || !!props.chat}
      mainData={{ csrf: props.csrf, "session-base": props.base }}
    >
      <h1>{title}</h1>
      {props.recipientName ? <p class="fy-muted">{t("session.for", { name: props.recipientName })}</p> : null}
      <RequesterCard card={props.card} heading={t("card.sender")} i18n={i18n} />
      {props.notice ? <Alert kind="success" text={t(props.notice)} id="session-notice" /> : null}
      {props.message ? <MessageCard message={props.message.body} heading={t("message.heading")} /> : null}
      {props.features.length > 0 ? (
        <p class="fy-muted" id="session-summary">
          {t("session.summary", { count: props.features.length, open: pending })}
        </p>
      ) : null}
      {props.chat ? (
        <ChatCard
          chat={props.chat}
          base={props.base}
          csrf={props.csrf}
          sender={props.card.name || t("card.sender")}
          i18n={i18n}
        />
      ) : null}
      {props.features.map((f) =>
        f.kind === "step" ? (
          <StepCard card={f} i18n={i18n} />
        ) : f.kind === "push" ? (
          <PushCard card={f} base={props.base} i18n={i18n} />
        ) : (
          <PullCard card={f} base={props.base} csrf={props.csrf} i18n={i18n} />
        ),
      )}
      {props.features.length === 0 && !props.chat ? (
        <section class="fy-card">
          <p>{t("session.nothing")}</p>
        </section>
      ) : null}
    </Layout>
  );
}

/** Every feature of the session expired: nothing can be downloaded or uploaded any more. */
export function SessionExpiredPage(props: {
  chrome: PageChrome;
  card: RequesterCardView;
  expiredAt: string | null;
}): VNode {
  const { i18n } = props.chrome;
  const { t } = i18n;
  return (
    <Layout title={t("session.expiredTitle")} {...props.chrome}>
      <section class="fy-card">
        <h1>{t("session.expiredHeading")}</h1>
        <p>
          {props.expiredAt ? `${t("expired.on", { date: i18n.date(props.expiredAt) })} ` : ""}
          {t("session.expiredBody")}
        </p>
      </section>
      <RequesterCard card={props.card} heading={t("card.sender")} i18n={i18n} />
    </Layout>
  );
}
