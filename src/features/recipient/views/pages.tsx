import type { VNode } from "preact";
import type { MessageKey, Translator } from "../../../shared/i18n/i18n.js";
import { Layout } from "../../../web/layout.js";
import { type FileView, filesSummary, type RequesterCardView } from "../recipient.presenter.js";
import type { TfaStatus } from "../two-factor.service.js";
import { Alert, CsrfField, FileInfo, MessageCard, RequesterCard } from "./components.js";

/** Chrome shared by every page: branding, the sandbox marker and the reader's language. */
export interface PageChrome {
  sandbox: boolean;
  brandName: string;
  brandCssHref?: string | undefined;
  logoHref?: string | undefined;
  /** The reader's language (negotiated per request: src/web/i18n.ts). */
  i18n: Translator;
}

/** A date in UTC on the server, shown in the reader's own time zone by the page script. */
export function LocalTime(props: { iso: string; i18n: Translator }): VNode {
  return <time datetime={props.iso}>{props.i18n.date(props.iso)}</time>;
}

/** The one page for unknown, deleted, draft and foreign identifiers alike. */
export function NotFoundPage(props: { chrome: PageChrome }): VNode {
  const { t } = props.chrome.i18n;
  return (
    <Layout title={t("notFound.title")} {...props.chrome}>
      <section class="fy-card">
        <h1>{t("notFound.heading")}</h1>
        <p>{t("notFound.body")}</p>
      </section>
    </Layout>
  );
}

/** An expired request: nothing can be downloaded or uploaded any more. */
export function ExpiredPage(props: {
  chrome: PageChrome;
  card: RequesterCardView;
  expiredAt: string | null;
  /** A push request offered files; a pull request asked for them. */
  kind: "push" | "pull";
}): VNode {
  const { i18n } = props.chrome;
  const { t } = i18n;
  const pull = props.kind === "pull";
  return (
    <Layout title={t("expired.title")} {...props.chrome} withScript>
      <section class="fy-card">
        <h1>{t("expired.heading")}</h1>
        <p>
          {props.expiredAt ? (
            <>{i18n.rich("expired.on", { date: <LocalTime iso={props.expiredAt} i18n={i18n} /> })} </>
          ) : null}
          {pull ? t("expired.pull") : t("expired.push")}
        </p>
      </section>
      <RequesterCard
        card={props.card}
        heading={pull ? t("card.requestedBy") : t("card.sender")}
        i18n={i18n}
      />
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

function tfaNoticeText(
  notice: TfaNotice,
  status: TfaStatus,
  { t }: Translator,
): { kind: "error" | "success"; text: string } {
  switch (notice.kind) {
    case "sent":
      return { kind: "success", text: t("tfa.sent", { destination: status.maskedDestination }) };
    case "wrong":
      return { kind: "error", text: t("tfa.wrong", { left: notice.attemptsLeft }) };
    case "locked":
      return { kind: "error", text: t("tfa.locked") };
    case "locked_out":
      return { kind: "error", text: t("tfa.lockedOut") };
    case "expired":
      return { kind: "error", text: t("tfa.expired") };
    case "no_code":
      return { kind: "error", text: t("tfa.noCode") };
    case "malformed":
      return { kind: "error", text: t("tfa.malformed") };
    case "send_limit":
      return {
        kind: "error",
        text: t("tfa.sendLimit", { minutes: Math.ceil(notice.retryAfterSeconds / 60) }),
      };
  }
}

/** The two-factor step: send a code to the masked destination, then enter it. */
export function TfaPage(props: {
  chrome: PageChrome;
  /** The path the forms post under (`<base>tfa/send`, `<base>tfa/verify`). */
  base: string;
  /** What the code opens. */
  noun: "request" | "session";
  csrf: string;
  status: TfaStatus;
  notice?: TfaNotice | undefined;
  card: RequesterCardView;
}): VNode {
  const { status, base } = props;
  const { i18n } = props.chrome;
  const { t } = i18n;
  const note = props.notice ? tfaNoticeText(props.notice, status, i18n) : undefined;
  return (
    <Layout title={t("tfa.title")} {...props.chrome}>
      <section class="fy-card" aria-labelledby="tfa-heading">
        <h1 id="tfa-heading">{t("tfa.title")}</h1>
        <p>
          {i18n.rich("tfa.intro", {
            noun: props.noun,
            channel: status.channel === "sms" ? "sms" : "email",
            destination: <strong>{status.maskedDestination}</strong>,
          })}
        </p>
        {note ? <Alert kind={note.kind} text={note.text} id="tfa-notice" /> : null}
        {status.lockedOut && props.notice?.kind !== "locked_out" ? (
          <Alert kind="error" text={t("tfa.lockedOut")} id="tfa-locked" />
        ) : null}
        {status.locked && !props.notice ? <Alert kind="error" text={t("tfa.locked")} /> : null}
        {status.codeActive ? (
          <form method="post" action={`${base}tfa/verify`} class="fy-field">
            <CsrfField token={props.csrf} />
            <div class="fy-field">
              <label for="tfa-code">{t("tfa.codeLabel")}</label>
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
                {t("tfa.codeHint")}
              </p>
            </div>
            <button type="submit" class="fy-button">
              {t("tfa.verify")}
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
                {status.codeActive || status.locked ? t("tfa.sendNew") : t("tfa.send")}
              </button>
              {status.sendsLeft === 0 ? (
                <p class="fy-hint">
                  {t("tfa.limitReached", { minutes: Math.ceil(status.retryAfterSeconds / 60) })}
                </p>
              ) : null}
            </div>
          </form>
        )}
      </section>
      <RequesterCard card={props.card} heading={t("card.sender")} i18n={i18n} />
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
  const { i18n } = props.chrome;
  const { t } = i18n;
  const base = `/r/${encodeURIComponent(props.identifier)}/`;
  const summary = [filesSummary(props.files, i18n), props.expiresIn].filter(Boolean).join(" · ");
  return (
    <Layout title={t("push.title")} {...props.chrome} withScript>
      <h1>{props.card.name ? t("push.headingNamed", { name: props.card.name }) : t("push.title")}</h1>
      <RequesterCard card={props.card} heading={t("card.sender")} i18n={i18n} />
      <MessageCard message={props.message} heading={t("message.heading")} />
      <section class="fy-card" aria-labelledby="files-heading">
        <h2 id="files-heading">{t("push.files", { count: props.files.length })}</h2>
        <p class="fy-summary" id="files-summary">
          {summary}
        </p>
        {props.files.length === 0 ? <p>{t("push.none")}</p> : null}
        {props.files.length > 1 ? (
          <p class="fy-actions">
            <a class="fy-button" href={`${base}files/zip`} download aria-describedby="files-summary">
              {t("push.downloadAll")}
            </a>
          </p>
        ) : null}
        <ul class="fy-files">
          {props.files.map((file) => (
            <li class="fy-file">
              <FileInfo file={file} i18n={i18n} />
              <a
                class="fy-button"
                href={`${base}files/${file.id}/download`}
                download={file.name}
                aria-label={t("push.downloadLabel", { name: file.name })}
              >
                {t("push.download")}
              </a>
            </li>
          ))}
        </ul>
        {props.expiresAt ? (
          <p class="fy-muted">
            {i18n.rich("push.availableUntil", { date: <LocalTime iso={props.expiresAt} i18n={i18n} /> })}
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
  /** The limit in English, for the upload endpoints' error texts (pages word it themselves). */
  maxFileLabel: string;
  chunkBytes: number;
}

/** "Allowed types: pdf, jpg. Up to 10.0 MB per file." in the reader's language. */
export function uploadRulesText(rules: UploadRules, i18n: Translator): string {
  const types = rules.extensions.length
    ? `${i18n.t("pull.allowedTypes", { types: rules.extensions.join(", ") })} `
    : "";
  return `${types}${i18n.t("pull.upTo", { size: i18n.bytes(rules.maxFileBytes) })}`;
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
  /** Why the last Submit was refused (a catalogue key). */
  error?: MessageKey | undefined;
  /** The last Submit was refused for want of a file. */
  emptyRefused?: boolean;
  receiverMessage?: string | undefined;
}): VNode {
  const { i18n } = props.chrome;
  const { t } = i18n;
  const base = `/r/${encodeURIComponent(props.identifier)}/`;
  const { rules } = props;
  const accept = rules.extensions.map((e) => `.${e}`).join(",");
  return (
    <Layout
      title={t("pull.title")}
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
      <h1>{props.card.name ? t("pull.headingNamed", { name: props.card.name }) : t("pull.title")}</h1>
      <RequesterCard card={props.card} heading={t("card.requestedBy")} i18n={i18n} />
      <MessageCard message={props.message} heading={t("message.heading")} />
      {props.error ? <Alert kind="error" text={t(props.error)} id="submit-error" /> : null}
      <section class="fy-card" aria-labelledby="upload-heading">
        <h2 id="upload-heading">{t("pull.yourFiles")}</h2>
        <p class="fy-hint" id="upload-rules">
          {uploadRulesText(rules, i18n)}
        </p>
        <div class="fy-dropzone" id="dropzone">
          <p>{t("pull.drop")}</p>
          <label for="file-input" class="fy-visually-hidden">
            {t("pull.chooseLabel")}
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
          <p class="fy-alert fy-alert-error">{t("pull.noscript")}</p>
        </noscript>
        <div id="overall" class="fy-field" hidden>
          <label for="overall-progress">{t("pull.overall")}</label>
          <progress id="overall-progress" class="fy-progress" max={100} value={0} />
          <p class="fy-hint" id="overall-text" />
          <div class="fy-upload-actions">
            <button type="button" class="fy-button fy-button-secondary" id="pause-all">
              {t("pull.pause")}
            </button>
            <button type="button" class="fy-button fy-button-secondary" id="resume-all" hidden>
              {t("pull.resume")}
            </button>
          </div>
        </div>
        <ul class="fy-files" id="upload-list" aria-label={t("pull.uploads")} />
        <div id="upload-status" class="fy-visually-hidden" role="status" aria-live="polite" />
        <h3 class="fy-muted" id="received-heading" hidden={props.received.length === 0}>
          {t("client.received", { count: props.received.length })}
        </h3>
        <ul class="fy-files" id="received-list" aria-labelledby="received-heading">
          {props.received.map((file) => (
            <li class="fy-file" data-media-id={String(file.id)}>
              <FileInfo file={file} i18n={i18n} />
            </li>
          ))}
        </ul>
      </section>
      <form method="post" action={`${base}submit`} class="fy-card" id="submit-form">
        <CsrfField token={props.csrf} />
        <div class="fy-field">
          <label for="receiver-message">{t("pull.replyLabel")}</label>
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
          <label for="confirm-empty-input">{t("pull.confirmEmpty")}</label>
          <p class="fy-hint" id="confirm-empty-hint">
            {props.emptyRefused ? t("pull.emptyRefused") : t("pull.emptyHint")}
          </p>
        </div>
        <div class="fy-actions">
          <button type="submit" class="fy-button" id="submit-button">
            {t("pull.submit")}
          </button>
          <p class="fy-hint" id="submit-hint">
            {t("pull.submitHint")}
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
  const { i18n } = props.chrome;
  const { t } = i18n;
  return (
    <Layout title={t("done.title")} {...props.chrome} withScript>
      <section class="fy-card fy-completed" aria-labelledby="done-heading">
        <p class="fy-done-mark" aria-hidden="true">
          ✓
        </p>
        <h1 id="done-heading">{t("done.heading")}</h1>
        <p>
          {props.completedAt ? (
            <>{i18n.rich("done.sentOn", { date: <LocalTime iso={props.completedAt} i18n={i18n} /> })} </>
          ) : null}
          {t("done.complete")}
        </p>
        {props.received.length > 0 ? (
          <ul class="fy-files" aria-label={t("done.filesSent")}>
            {props.received.map((file) => (
              <li class="fy-file">
                <FileInfo file={file} i18n={i18n} />
              </li>
            ))}
          </ul>
        ) : null}
        {props.receiverMessage ? (
          <>
            <h2>{t("done.yourMessage")}</h2>
            <p class="fy-message">{props.receiverMessage}</p>
          </>
        ) : null}
      </section>
      {props.card ? (
        <RequesterCard card={props.card} heading={t("card.requester")} withDetails i18n={i18n} />
      ) : null}
    </Layout>
  );
}
