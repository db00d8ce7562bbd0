import type { VNode } from "preact";
import { Layout } from "../../../web/layout.js";
import { type FileView, filesSummary, type RequesterCardView } from "../recipient.presenter.js";
import type { TfaStatus } from "../two-factor.service.js";
import { Alert, CsrfField, FileInfo, MessageCard, RequesterCard } from "./components.js";

/** Chrome shared by every page: branding and the sandbox marker. */
export interface PageChrome {
  sandbox: boolean;
  brandName: string;
  brandCssHref?: string | undefined;
  logoHref?: string | undefined;
}

const dateFormat = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "long",
  timeStyle: "short",
  timeZone: "UTC",
});

/** `15 January 2026 at 10:00 UTC` */
export function formatDate(iso: string): string {
  return `${dateFormat.format(new Date(iso))} UTC`;
}

/** The one page for unknown, deleted, draft and foreign identifiers alike. */
export function NotFoundPage(props: { chrome: PageChrome }): VNode {
  return (
    <Layout title="Link not found" {...props.chrome}>
      <section class="fy-card">
        <h1>This link is not valid</h1>
        <p>
          The link may be mistyped, or the request was withdrawn. Ask the sender for a new link if you still
          need it.
        </p>
      </section>
    </Layout>
  );
}

/** A date in UTC on the server, shown in the reader's own time zone by the page script. */
export function LocalTime(props: { iso: string }): VNode {
  return <time datetime={props.iso}>{formatDate(props.iso)}</time>;
}

/** An expired request: nothing can be downloaded or uploaded any more. */
export function ExpiredPage(props: {
  chrome: PageChrome;
  card: RequesterCardView;
  expiredAt: string | null;
  /** A push request offered files; a pull request asked for them. */
  kind: "push" | "pull";
}): VNode {
  const pull = props.kind === "pull";
  return (
    <Layout title="Request expired" {...props.chrome} withScript>
      <section class="fy-card">
        <h1>This request has expired</h1>
        <p>
          {props.expiredAt ? (
            <>
              It expired on <LocalTime iso={props.expiredAt} />.{" "}
            </>
          ) : null}
          {pull
            ? "It no longer accepts files. If you still need to send them, ask the requester for a new link."
            : "Its files are no longer available. Contact the sender if you still need them."}
        </p>
      </section>
      <RequesterCard card={props.card} heading={pull ? "Requested by" : "Sender"} />
    </Layout>
  );
}

/** What the two-factor page says after an action. */
export type TfaNotice =
  | { kind: "sent" }
  | { kind: "wrong"; attemptsLeft: number }
  | { kind: "locked" }
  | { kind: "locked_out" }
  | { kind: "expired" }
  | { kind: "no_code" }
  | { kind: "malformed" }
  | { kind: "send_limit"; retryAfterSeconds: number };

const LOCKED_OUT_TEXT =
  "Too many wrong codes were entered, so this link is locked to protect it. Ask the sender to send you the link again.";

function tfaNoticeText(notice: TfaNotice, status: TfaStatus): { kind: "error" | "success"; text: string } {
  switch (notice.kind) {
    case "sent":
      return {
        kind: "success",
        text: `We sent a 6-digit code to ${status.maskedDestination}. It is valid for 10 minutes.`,
      };
    case "wrong":
      return {
        kind: "error",
        text: `That code is not correct. ${notice.attemptsLeft} ${notice.attemptsLeft === 1 ? "attempt" : "attempts"} left.`,
      };
    case "locked":
      return {
        kind: "error",
        text: "Too many wrong codes: this code is locked. Send a new code to try again.",
      };
    case "locked_out":
      return { kind: "error", text: LOCKED_OUT_TEXT };
    case "expired":
      return { kind: "error", text: "This code has expired. Send a new code." };
    case "no_code":
      return { kind: "error", text: "No valid code: send a new code first." };
    case "malformed":
      return { kind: "error", text: "Enter the 6 digits of the code." };
    case "send_limit":
      return {
        kind: "error",
        text: `Too many codes were sent. You can request a new code in ${Math.ceil(notice.retryAfterSeconds / 60)} minutes.`,
      };
  }
}

/** The two-factor step: send a code to the masked destination, then enter it. */
export function TfaPage(props: {
  chrome: PageChrome;
  /** The path the forms post under (`<base>tfa/send`, `<base>tfa/verify`). */
  base: string;
  /** What the code opens: "request" or "session". */
  noun: string;
  csrf: string;
  status: TfaStatus;
  notice?: TfaNotice | undefined;
  card: RequesterCardView;
}): VNode {
  const { status, base } = props;
  const note = props.notice ? tfaNoticeText(props.notice, status) : undefined;
  const channelWord = status.channel === "sms" ? "text message" : "email";
  return (
    <Layout title="Verify it's you" {...props.chrome}>
      <section class="fy-card" aria-labelledby="tfa-heading">
        <h1 id="tfa-heading">Verify it's you</h1>
        <p>
          To open this {props.noun}, enter the code we send by {channelWord} to{" "}
          <strong>{status.maskedDestination}</strong>.
        </p>
        {note ? <Alert kind={note.kind} text={note.text} id="tfa-notice" /> : null}
        {status.lockedOut && props.notice?.kind !== "locked_out" ? (
          <Alert kind="error" text={LOCKED_OUT_TEXT} id="tfa-locked" />
        ) : null}
        {status.locked && !props.notice ? (
          <Alert
            kind="error"
            text="Too many wrong codes: this code is locked. Send a new code to try again."
          />
        ) : null}
        {status.codeActive ? (
          <form method="post" action={`${base}tfa/verify`} class="fy-field">
            <CsrfField token={props.csrf} />
            <div class="fy-field">
              <label for="tfa-code">6-digit code</label>
              <input
                id="tfa-code"
                class="fy-input fy-code"
                name="code"
                type="text"
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9]{6}"
                maxLength={6}
                required
                aria-describedby="tfa-code-hint"
              />
              <p class="fy-hint" id="tfa-code-hint">
                The code is valid for 10 minutes.
              </p>
            </div>
            <button type="submit" class="fy-button">
              Verify
            </button>
          </form>
        ) : null}
        {status.lockedOut ? null : (
          <form method="post" action={`${base}tfa/send`}>
            <CsrfField token={props.csrf} />
            <div class="fy-actions">
              <button
                type="submit"
                class={status.codeActive ? "fy-button fy-button-secondary" : "fy-button"}
                disabled={status.sendsLeft === 0}
              >
                {status.codeActive || status.locked ? "Send a new code" : "Send code"}
              </button>
              {status.sendsLeft === 0 ? (
                <p class="fy-hint">
                  Code limit reached. Try again in {Math.ceil(status.retryAfterSeconds / 60)} minutes.
                </p>
              ) : null}
            </div>
          </form>
        )}
      </section>
      <RequesterCard card={props.card} heading="Sender" />
    </Layout>
  );
}

/** A push request: message, requester card, files with download buttons, expiry date. */
export function PushPage(props: {
  chrome: PageChrome;
  identifier: string;
  message: string;
  card: RequesterCardView;
  files: FileView[];
  expiresAt: string | null;
  /** "expires in 14 days", when the request expires. */
  expiresIn?: string | undefined;
}): VNode {
  const base = `/r/${encodeURIComponent(props.identifier)}/`;
  const summary = [filesSummary(props.files), props.expiresIn].filter(Boolean).join(" · ");
  return (
    <Layout title="Files for you" {...props.chrome} withScript>
      <h1>{props.card.name ? `${props.card.name} sent you files` : "Files for you"}</h1>
      <RequesterCard card={props.card} heading="Sender" />
      <MessageCard message={props.message} heading="Message" />
      <section class="fy-card" aria-labelledby="files-heading">
        <h2 id="files-heading">Files ({props.files.length})</h2>
        <p class="fy-summary" id="files-summary">
          {summary}
        </p>
        {props.files.length === 0 ? <p>No files are available.</p> : null}
        {props.files.length > 1 ? (
          <p class="fy-actions">
            <a class="fy-button" href={`${base}files/zip`} download aria-describedby="files-summary">
              Download all (zip)
            </a>
          </p>
        ) : null}
        <ul class="fy-files">
          {props.files.map((file) => (
            <li class="fy-file">
              <FileInfo file={file} />
              <a
                class="fy-button"
                href={`${base}files/${file.id}/download`}
                download={file.name}
                aria-label={`Download ${file.name}`}
              >
                Download
              </a>
            </li>
          ))}
        </ul>
        {props.expiresAt ? (
          <p class="fy-muted">
            Available until <LocalTime iso={props.expiresAt} />.
          </p>
        ) : null}
      </section>
    </Layout>
  );
}

/** Upload rules of a pull request, shown and enforced by the page before upload. */
export interface UploadRules {
  extensions: string[];
  maxFileBytes: number;
  maxFileLabel: string;
  chunkBytes: number;
}

/** A pull request: message, requester card, uploader, reply message and Submit. */
export function PullPage(props: {
  chrome: PageChrome;
  identifier: string;
  csrf: string;
  message: string;
  card: RequesterCardView;
  received: FileView[];
  rules: UploadRules;
  error?: string | undefined;
  /** The last Submit was refused for want of a file. */
  emptyRefused?: boolean;
  receiverMessage?: string | undefined;
}): VNode {
  const base = `/r/${encodeURIComponent(props.identifier)}/`;
  const { rules } = props;
  const accept = rules.extensions.map((e) => `.${e}`).join(",");
  const rulesText = `${rules.extensions.length ? `Allowed types: ${rules.extensions.join(", ")}. ` : ""}Up to ${rules.maxFileLabel} per file.`;
  return (
    <Layout
      title="Upload files"
      {...props.chrome}
      withScript
      mainData={{
        identifier: props.identifier,
        csrf: props.csrf,
        "chunk-bytes": String(rules.chunkBytes),
        "max-file-bytes": String(rules.maxFileBytes),
        extensions: rules.extensions.join(","),
      }}
    >
      <h1>{props.card.name ? `${props.card.name} asks you for files` : "Upload files"}</h1>
      <RequesterCard card={props.card} heading="Requested by" />
      <MessageCard message={props.message} heading="Message" />
      {props.error ? <Alert kind="error" text={props.error} id="submit-error" /> : null}
      <section class="fy-card" aria-labelledby="upload-heading">
        <h2 id="upload-heading">Your files</h2>
        <p class="fy-hint" id="upload-rules">
          {rulesText}
        </p>
        <div class="fy-dropzone" id="dropzone">
          <p>Drag and drop files here, or choose them:</p>
          <label for="file-input" class="fy-visually-hidden">
            Choose files to upload
          </label>
          <input
            id="file-input"
            type="file"
            multiple
            accept={accept || undefined}
            aria-describedby="upload-rules"
          />
        </div>
        <noscript>
          <p class="fy-alert fy-alert-error">
            Uploading needs JavaScript. Please enable it and reload the page.
          </p>
        </noscript>
        <div id="overall" class="fy-field" hidden>
          <label for="overall-progress">Overall progress</label>
          <progress id="overall-progress" class="fy-progress" max={100} value={0} />
          <p class="fy-hint" id="overall-text" />
          <div class="fy-upload-actions">
            <button type="button" class="fy-button fy-button-secondary" id="pause-all">
              Pause
            </button>
            <button type="button" class="fy-button fy-button-secondary" id="resume-all" hidden>
              Resume
            </button>
          </div>
        </div>
        <ul class="fy-files" id="upload-list" aria-label="Uploads" />
        <div id="upload-status" class="fy-visually-hidden" role="status" aria-live="polite" />
        <h3 class="fy-muted" id="received-heading">
          Received ({props.received.length})
        </h3>
        <ul class="fy-files" id="received-list" aria-labelledby="received-heading">
          {props.received.map((file) => (
            <li class="fy-file" data-media-id={String(file.id)}>
              <FileInfo file={file} />
            </li>
          ))}
        </ul>
      </section>
      <form method="post" action={`${base}submit`} class="fy-card" id="submit-form">
        <CsrfField token={props.csrf} />
        <div class="fy-field">
          <label for="receiver-message">Message to the requester (optional)</label>
          <textarea id="receiver-message" class="fy-textarea" name="receiver_message" maxLength={10000}>
            {props.receiverMessage ?? ""}
          </textarea>
        </div>
        <div class="fy-field fy-check" id="confirm-empty" hidden={props.received.length > 0}>
          <input
            id="confirm-empty-input"
            type="checkbox"
            name="confirm_empty"
            value="1"
            aria-describedby="confirm-empty-hint"
          />
          <label for="confirm-empty-input">Submit without files</label>
          <p class="fy-hint" id="confirm-empty-hint">
            {props.emptyRefused
              ? "No file was uploaded: tick this box to confirm that you send none."
              : "No file is uploaded yet. Tick this box only if you have nothing to send."}
          </p>
        </div>
        <div class="fy-actions">
          <button type="submit" class="fy-button" id="submit-button">
            Submit
          </button>
          <p class="fy-hint" id="submit-hint">
            Submit when every file is uploaded. You cannot add files afterwards.
          </p>
        </div>
      </form>
    </Layout>
  );
}

/** A completed pull request: thanks, the requester's details, what was sent. */
export function CompletedPage(props: {
  chrome: PageChrome;
  /** Null when the request names no requester (the spec's blank requester data). */
  card: RequesterCardView | null;
  received: FileView[];
  receiverMessage: string | null;
  /** When the request was submitted. */
  completedAt: string | null;
}): VNode {
  return (
    <Layout title="Request complete" {...props.chrome} withScript>
      <section class="fy-card fy-completed" aria-labelledby="done-heading">
        <p class="fy-done-mark" aria-hidden="true">
          ✓
        </p>
        <h1 id="done-heading">Thank you, your files were sent</h1>
        <p>
          {props.completedAt ? (
            <>
              Sent on <LocalTime iso={props.completedAt} />.{" "}
            </>
          ) : null}
          This request is complete and accepts no more files.
        </p>
        {props.received.length > 0 ? (
          <ul class="fy-files" aria-label="Files sent">
            {props.received.map((file) => (
              <li class="fy-file">
                <FileInfo file={file} />
              </li>
            ))}
          </ul>
        ) : null}
        {props.receiverMessage ? (
          <>
            <h2>Your message</h2>
            <p class="fy-message">{props.receiverMessage}</p>
          </>
        ) : null}
      </section>
      {props.card ? <RequesterCard card={props.card} heading="Requester" withDetails /> : null}
    </Layout>
  );
}
