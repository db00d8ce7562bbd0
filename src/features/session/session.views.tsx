import type { VNode } from "preact";
import { Layout } from "../../web/layout.js";
import {
  Alert,
  CsrfField,
  FileInfo,
  type FileView,
  formatBytes,
  formatDate,
  MessageCard,
  type PageChrome,
  RequesterCard,
  type RequesterCardView,
  type UploadRules,
} from "../recipient/index.js";

/** A state as the recipient reads it. */
const STATE_LABELS = { pending: "Open", complete: "Done", expired: "Expired" } as const;
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
  /** Replies are taken (the container is neither complete nor expired). */
  open: boolean;
  entries: ChatEntryView[];
  /** The newest owner message and reply ids shown, from which the page asks for newer ones. */
  afterMessage: number;
  afterReply: number;
  /** A refused reply's text, kept in the box, and why it was refused. */
  draft?: string | undefined;
  error?: string | undefined;
}

interface FeatureCardBase {
  id: number;
  title: string;
  description: string;
  state: FeatureState;
  expiresAt: string | null;
  completedAt: string | null;
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
  /** After a refused submit: why, the message as typed, and whether to offer submitting with no file. */
  error?: string | undefined;
  draftMessage?: string | undefined;
  confirmEmpty?: boolean | undefined;
}

export type FeatureCardView = PushCardView | PullCardView;

function StateBadge(props: { state: FeatureState }): VNode {
  return <span class={`fy-badge fy-badge-${props.state}`}>{STATE_LABELS[props.state]}</span>;
}

function Expiry(props: { state: FeatureState; expiresAt: string | null }): VNode | null {
  if (!props.expiresAt) return null;
  const text =
    props.state === "expired" ? "Expired on" : props.state === "pending" ? "Open until" : "Was open until";
  return (
    <p class="fy-muted">
      {text} <time datetime={props.expiresAt}>{formatDate(props.expiresAt)}</time>.
    </p>
  );
}

function PushCard(props: { card: PushCardView; base: string }): VNode {
  const { card, base } = props;
  const total = card.files.reduce((sum, f) => sum + f.bytes, 0);
  const headingId = `feature-${card.id}-heading`;
  return (
    <section class="fy-card fy-feature" id={`feature-${card.id}`} aria-labelledby={headingId}>
      <div class="fy-feature-head">
        <h2 id={headingId}>{card.title || "Files for you"}</h2>
        <StateBadge state={card.state} />
      </div>
      {card.description ? <p class="fy-message">{card.description}</p> : null}
      {card.state === "expired" ? (
        <p>These files are no longer available. Contact the sender if you still need them.</p>
      ) : card.files.length === 0 ? (
        <p>No files yet. The sender has not added any file here.</p>
      ) : (
        <>
          <p class="fy-muted">
            {card.files.length} {card.files.length === 1 ? "file" : "files"} · {formatBytes(total)}
          </p>
          <ul class="fy-files">
            {card.files.map((file) => (
              <li class="fy-file">
                <FileInfo file={file} />
                {file.downloaded ? <span class="fy-badge fy-badge-complete">Downloaded</span> : null}
                <a
                  class="fy-button"
                  href={`${base}features/${card.id}/files/${file.id}/download`}
                  download={file.name}
                  aria-label={`Download ${file.name}`}
                >
                  Download
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
                aria-label={`Download all ${card.files.length} files as one zip`}
              >
                Download all (zip)
              </a>
            </p>
          ) : null}
        </>
      )}
      <Expiry state={card.state} expiresAt={card.expiresAt} />
    </section>
  );
}

function PullCard(props: { card: PullCardView; base: string; csrf: string }): VNode {
  const { card, base, csrf } = props;
  const id = card.id;
  const headingId = `feature-${id}-heading`;
  const { rules } = card;
  const accept = rules.extensions.map((e) => `.${e}`).join(",");
  const rulesText = [
    rules.extensions.length ? `Allowed types: ${rules.extensions.join(", ")}.` : "",
    `Up to ${rules.maxFileLabel} per file.`,
    card.maxFiles ? `At most ${card.maxFiles} ${card.maxFiles === 1 ? "file" : "files"}.` : "",
  ]
    .filter(Boolean)
    .join(" ");
  const open = card.state === "pending";
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
        <h2 id={headingId}>{card.title || "Files requested"}</h2>
        <StateBadge state={card.state} />
      </div>
      {card.description ? <p class="fy-message">{card.description}</p> : null}
      {card.expected.length > 0 ? (
        <>
          <h3 class="fy-subheading">Files asked for</h3>
          <ul class="fy-expected">
            {card.expected.map((name) => (
              <li>{name}</li>
            ))}
          </ul>
        </>
      ) : null}
      {card.error ? <Alert kind="error" text={card.error} id={`feature-${id}-error`} /> : null}
      {open ? (
        <>
          <p class="fy-hint" id={`upload-rules-${id}`}>
            {rulesText}
          </p>
          <div class="fy-dropzone" data-role="dropzone">
            <p>Drag and drop files here, or choose them:</p>
            <label for={`file-input-${id}`} class="fy-visually-hidden">
              Choose files to upload for {card.title || "this request"}
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
            <p class="fy-alert fy-alert-error">
              Uploading needs JavaScript. Please enable it and reload the page.
            </p>
          </noscript>
          <div class="fy-field" data-role="overall" hidden>
            <label for={`overall-progress-${id}`}>Overall progress</label>
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
                Pause
              </button>
              <button type="button" class="fy-button fy-button-secondary" data-role="resume" hidden>
                Resume
              </button>
            </div>
          </div>
          <ul class="fy-files" data-role="upload-list" aria-label="Uploads" />
          <div class="fy-visually-hidden" data-role="status" role="status" aria-live="polite" />
        </>
      ) : null}
      <h3 class="fy-muted" id={`received-heading-${id}`} data-role="received-heading">
        {open ? "Received" : "Sent"} ({card.received.length})
      </h3>
      <ul class="fy-files" data-role="received" aria-labelledby={`received-heading-${id}`}>
        {card.received.map((file) => (
          <li class="fy-file" data-media-id={String(file.id)}>
            <FileInfo file={file} />
          </li>
        ))}
      </ul>
      {open ? (
        <form method="post" action={`${base}features/${id}/submit`} data-role="submit-form">
          <CsrfField token={csrf} />
          <div class="fy-field">
            <label for={`receiver-message-${id}`}>Message to the sender (optional)</label>
            <textarea
              id={`receiver-message-${id}`}
              class="fy-textarea"
              name="receiver_message"
              maxLength={10000}
            >
              {card.draftMessage ?? ""}
            </textarea>
          </div>
          <div class="fy-actions">
            <button type="submit" class="fy-button" data-role="submit">
              Submit
            </button>
            {card.confirmEmpty ? (
              <button type="submit" class="fy-button fy-button-secondary" name="confirm_empty" value="1">
                Submit without files
              </button>
            ) : null}
            <p class="fy-hint" data-role="submit-hint">
              Submit when every file is uploaded. You cannot add files afterwards.
            </p>
          </div>
        </form>
      ) : card.receiverMessage ? (
        <>
          <h3 class="fy-subheading">Your message</h3>
          <p class="fy-message">{card.receiverMessage}</p>
        </>
      ) : null}
      {card.state === "complete" ? (
        <p class="fy-done">
          <span aria-hidden="true">✓ </span>
          Sent{card.completedAt ? " on " : ""}
          {card.completedAt ? <time datetime={card.completedAt}>{formatDate(card.completedAt)}</time> : null}.
        </p>
      ) : null}
      {card.state === "expired" ? <p>This request has expired and accepts no more files.</p> : null}
      <Expiry state={card.state} expiresAt={card.expiresAt} />
    </section>
  );
}

function ChatCard(props: { chat: ChatView; base: string; csrf: string; sender: string }): VNode {
  const { chat, base, csrf } = props;
  return (
    <section
      class="fy-card fy-chat"
      id="chat"
      aria-labelledby="chat-heading"
      data-chat-url={`${base}chat`}
      data-after-message={String(chat.afterMessage)}
      data-after-reply={String(chat.afterReply)}
      data-sender={props.sender}
    >
      <h2 id="chat-heading">Messages</h2>
      <ol class="fy-chat-log" id="chat-log" aria-live="polite" aria-relevant="additions">
        {chat.entries.length === 0 ? (
          <li class="fy-chat-empty fy-muted" data-role="chat-empty">
            No messages yet.
          </li>
        ) : null}
        {chat.entries.map((entry) => (
          <li class={`fy-chat-entry fy-chat-${entry.kind}`}>
            <p class="fy-chat-meta">
              <span class="fy-chat-author">{entry.author}</span>{" "}
              <time class="fy-muted" datetime={entry.created}>
                {formatDate(entry.created)}
              </time>
            </p>
            {entry.title ? <p class="fy-chat-title">{entry.title}</p> : null}
            <p class="fy-message">{entry.body}</p>
          </li>
        ))}
      </ol>
      {chat.error ? <Alert kind="error" text={chat.error} id="chat-error" /> : null}
      {chat.open ? (
        <form method="post" action={`${base}chat`} id="chat-form" class="fy-chat-form">
          <CsrfField token={csrf} />
          <label for="chat-body">Your reply</label>
          <textarea id="chat-body" class="fy-textarea" name="body" maxLength={10000} required>
            {chat.draft ?? ""}
          </textarea>
          <div class="fy-actions">
            <button type="submit" class="fy-button">
              Send
            </button>
            <p class="fy-hint" id="chat-status" role="status" aria-live="polite" />
          </div>
        </form>
      ) : (
        <p class="fy-muted">This conversation is closed.</p>
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
  notice?: string | undefined;
}): VNode {
  const pending = props.features.filter((f) => f.state === "pending").length;
  const hasUploads = props.features.some((f) => f.kind === "pull" && f.state === "pending");
  const title =
    props.message?.subject || (props.card.name ? `From ${props.card.name}` : "Your secure session");
  return (
    <Layout
      title={title}
      {...props.chrome}
      withScript={hasUploads || !!props.chat}
      mainData={{ csrf: props.csrf, "session-base": props.base }}
    >
      <h1>{title}</h1>
      {props.recipientName ? <p class="fy-muted">For {props.recipientName}</p> : null}
      <RequesterCard card={props.card} heading="Sender" />
      {props.notice ? <Alert kind="success" text={props.notice} id="session-notice" /> : null}
      {props.message ? <MessageCard message={props.message.body} heading="Message" /> : null}
      {props.features.length > 0 ? (
        <p class="fy-muted" id="session-summary">
          {props.features.length} {props.features.length === 1 ? "item" : "items"} · {pending} open
        </p>
      ) : null}
      {props.chat ? (
        <ChatCard
          chat={props.chat}
          base={props.base}
          csrf={props.csrf}
          sender={props.card.name || "Sender"}
        />
      ) : null}
      {props.features.map((f) =>
        f.kind === "push" ? (
          <PushCard card={f} base={props.base} />
        ) : (
          <PullCard card={f} base={props.base} csrf={props.csrf} />
        ),
      )}
      {props.features.length === 0 && !props.chat ? (
        <section class="fy-card">
          <p>There is nothing for you here yet. The sender may add files or requests later.</p>
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
  return (
    <Layout title="Session expired" {...props.chrome}>
      <section class="fy-card">
        <h1>This session has expired</h1>
        <p>
          {props.expiredAt ? `It expired on ${formatDate(props.expiredAt)}. ` : ""}
          Its files are no longer available and it accepts no more files. Contact the sender if you still need
          something.
        </p>
      </section>
      <RequesterCard card={props.card} heading="Sender" />
    </Layout>
  );
}
