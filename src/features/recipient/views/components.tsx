import type { VNode } from "preact";
import type { MessageKey, Translator } from "../../../shared/i18n/i18n.js";
import { type FileView, fileTypeLabel, type RequesterCardView } from "../recipient.presenter.js";

/** Picture or initials, name and role of whoever sent or asked for the files. */
export function RequesterCard(props: {
  card: RequesterCardView;
  heading: string;
  withDetails?: boolean;
  i18n: Translator;
}): VNode {
  const { card } = props;
  return (
    <section class="fy-card fy-requester-card" aria-labelledby="requester-heading">
      <h2 id="requester-heading" class="fy-visually-hidden">
        {props.heading}
      </h2>
      <div class="fy-requester">
        {card.avatarUrl ? (
          <img class="fy-avatar" src={card.avatarUrl} alt="" width={56} height={56} />
        ) : (
          <span class="fy-avatar" aria-hidden="true">
            {card.initials}
          </span>
        )}
        <div>
          <p class="fy-requester-name">{card.name || "—"}</p>
          {card.role || card.company ? (
            <p class="fy-requester-role">{[card.role, card.company].filter(Boolean).join(", ")}</p>
          ) : null}
        </div>
      </div>
      {props.withDetails && card.details.length > 0 ? (
        <dl class="fy-details">
          {card.details.map((d) => (
            <>
              <dt>{d.label.startsWith("card.") ? props.i18n.t(d.label as MessageKey) : d.label}</dt>
              <dd>{d.href ? <a href={d.href}>{d.value}</a> : d.value}</dd>
            </>
          ))}
        </dl>
      ) : null}
    </section>
  );
}

/** The owner's message, as text (line breaks kept by CSS). */
export function MessageCard(props: { message: string; heading: string }): VNode | null {
  if (!props.message.trim()) return null;
  return (
    <section class="fy-card" aria-labelledby="message-heading">
      <h2 id="message-heading">{props.heading}</h2>
      <p class="fy-message">{props.message}</p>
    </section>
  );
}

/** A file's name, size and type, in the reader's language. */
export function FileInfo(props: { file: FileView; i18n: Translator }): VNode {
  const { file, i18n } = props;
  return (
    <div class="fy-file-info">
      <p class="fy-file-name">{file.name}</p>
      <p class="fy-muted">
        {i18n.bytes(file.bytes)} · {fileTypeLabel(file.extension, file.contentType, i18n)}
      </p>
    </div>
  );
}

/** A hidden CSRF field for a form. */
export function CsrfField(props: { token: string }): VNode {
  return <input type="hidden" name="csrf_token" value={props.token} />;
}

/** An alert box; errors are announced at once, other notes politely. */
export function Alert(props: { kind: "error" | "success" | "info"; text: string; id?: string }): VNode {
  return (
    <div
      id={props.id}
      class={`fy-alert fy-alert-${props.kind}`}
      role={props.kind === "error" ? "alert" : "status"}
    >
      {props.text}
    </div>
  );
}
