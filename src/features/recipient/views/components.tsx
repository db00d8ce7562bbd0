import type { VNode } from "preact";
import type { FileView, RequesterCardView } from "../recipient.presenter.js";

/** Picture or initials, name and role of whoever sent or asked for the files. */
export function RequesterCard(props: {
  card: RequesterCardView;
  heading: string;
  withDetails?: boolean;
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
              <dt>{d.label}</dt>
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

/** A file's name, size and type. */
export function FileInfo(props: { file: FileView }): VNode {
  const { file } = props;
  return (
    <div class="fy-file-info">
      <p class="fy-file-name">{file.name}</p>
      <p class="fy-muted">
        {file.sizeLabel} · {file.typeLabel}
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
