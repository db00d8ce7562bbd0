/**
 * What the request and container pages share: files with the owner's download, notifications with
 * their delivery status, and callback deliveries with every attempt and a Redeliver button.
 */
import type { VNode } from "preact";
import { sizeParts } from "../../../shared/i18n/i18n.js";
import type { CallbackService } from "../../callbacks/index.js";
import type { MediaView } from "../../media/index.js";
import type { Notifications } from "../../notifications/index.js";
import { CsrfField } from "../views/layout.js";
import { Time } from "./page-parts.js";

/** A delivery with its payload and attempts, as the callbacks feature shows it. */
export type DeliveryDetail = Awaited<ReturnType<CallbackService["getDelivery"]>>;
/** A notification with its outcome. */
export type NotificationRecord = Awaited<ReturnType<Notifications["log"]["get"]>>;

/**
 * A byte count for people, as the recipient pages show it: powers of 1000 and one decimal
 * (180.6 KB), so one file reads the same size on every surface.
 */
export function formatBytes(bytes: number): string {
  const { unit, value } = sizeParts(bytes);
  return unit === "B" ? `${bytes} B` : `${value.toFixed(1)} ${unit}`;
}

/**
 * The owner's download of a file: a form post with the page's CSRF token, so no other page or
 * site can start it (a download may use up a one-time file; ADR 0055).
 */
export function DownloadButton(props: { file: MediaView; csrfToken: string; primary?: boolean }): VNode {
  return (
    <form method="post" action={`/dashboard/media/${props.file.id}/download`} class="fd-inline">
      <CsrfField token={props.csrfToken} />
      <button type="submit" class={props.primary ? "fd-button" : "fd-link-button"}>
        Download<span class="fd-visually-hidden"> {props.file.name}</span>
      </button>
    </form>
  );
}

/**
 * What a download link opened from elsewhere (a bookmark, another site, a browser without Fetch
 * Metadata) shows instead of downloading: the file and its Download button.
 */
export function DownloadConfirmation(props: { file: MediaView; csrfToken: string }): VNode {
  const { file } = props;
  return (
    <section class="fd-card" aria-label="File">
      <p>This download link was opened from outside the dashboard, so nothing was downloaded yet.</p>
      <p>
        <strong class="fd-break">{file.name}</strong> · {file.content_type} · {formatBytes(file.bytes)}
      </p>
      <p class="fd-hint">
        Files a recipient uploaded can be downloaded once (here or through the API), then they are destroyed.
      </p>
      <DownloadButton file={file} csrfToken={props.csrfToken} primary />
    </section>
  );
}

/** The files section: name, type, size and the owner's download. */
export function FilesSection(props: { files: MediaView[]; oneDownload: boolean; csrfToken: string }): VNode {
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      {props.files.length === 0 ? (
        <p>No files.</p>
      ) : (
        <>
          {props.oneDownload ? (
            <p class="fd-hint">
              Files a recipient uploaded can be downloaded once (here or through the API), then they are
              destroyed.
            </p>
          ) : null}
          <div class="fd-table-wrap">
            <table class="fd-table">
              <caption class="fd-visually-hidden">Files</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Size</th>
                  <th scope="col">Download</th>
                </tr>
              </thead>
              <tbody>
                {props.files.map((f) => (
                  <tr key={f.id}>
                    <td class="fd-break">{f.name}</td>
                    <td>{f.content_type}</td>
                    <td>{formatBytes(f.bytes)}</td>
                    <td>
                      <DownloadButton file={f} csrfToken={props.csrfToken} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function NotificationState(props: { n: NotificationRecord }): VNode {
  const { n } = props;
  if (n.state === "failed") return <span class="fd-badge fd-badge-off">Failed</span>;
  if (n.state === "queued") return <span class="fd-badge">Queued</span>;
  return <span class="fd-badge fd-badge-ok">{n.opened_at ? "Sent, opened" : "Sent"}</span>;
}

/** The notifications section: channel, destination, status (sent, failed and why, opened). */
export function NotificationsSection(props: { notifications: NotificationRecord[] }): VNode {
  return (
    <section aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Notifications</h2>
      {props.notifications.length === 0 ? (
        <p>No notifications were sent.</p>
      ) : (
        <div class="fd-table-wrap">
          <table class="fd-table">
            <caption class="fd-visually-hidden">Notifications, newest first</caption>
            <thead>
              <tr>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Queued</th>
                <th scope="col">Sent</th>
                <th scope="col">Opened</th>
              </tr>
            </thead>
            <tbody>
              {props.notifications.map((n) => (
                <tr key={n.id} id={`notification-${n.id}`}>
                  <td class="fd-break">
                    {`${n.contact_first_name} ${n.contact_last_name}`.trim()}
                    <br />
                    <span class="fd-muted">
                      {n.channel === "sms" ? "SMS" : "Email"} {n.destination}
                    </span>
                  </td>
                  <td>
                    <NotificationState n={n} />
                    {n.error ? <div class="fd-break">{n.error}</div> : null}
                    <div class="fd-muted">{n.attempts === 1 ? "1 attempt" : `${n.attempts} attempts`}</div>
                  </td>
                  <td>
                    <Time value={n.queued_at} />
                  </td>
                  <td>
                    <Time value={n.sent_at} />
                  </td>
                  <td>
                    <Time value={n.opened_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const STATUS_LABEL: Record<string, string> = {
  pending: "Pending",
  delivered: "Delivered",
  failed: "Failed",
  stopped: "Stopped",
};

/**
 * The state of a delivery in words: a pending delivery whose attempts failed is retrying, and says
 * how many failed, rather than reading as if nothing had been tried.
 */
function DeliveryBadge(props: { delivery: DeliveryDetail }): VNode {
  const d = props.delivery;
  const failed = d.attempts.filter((a) => a.outcome !== "success").length;
  if (d.status === "pending" && failed > 0)
    return (
      <span class="fd-badge fd-badge-warn">
        Retrying · {failed === 1 ? "1 failed attempt" : `${failed} failed attempts`}
      </span>
    );
  const tone = d.status === "delivered" ? "fd-badge-ok" : d.status === "failed" ? "fd-badge-off" : "";
  return <span class={`fd-badge ${tone}`}>{STATUS_LABEL[d.status] ?? d.status}</span>;
}

/** The callback deliveries section: each delivery, every attempt, and a Redeliver button. */
export function DeliveriesSection(props: {
  deliveries: DeliveryDetail[];
  csrfToken: string;
  back: "requests" | "containers";
  callbackUrl: string | null;
}): VNode {
  return (
    <section aria-labelledby="callbacks-heading">
      <h2 id="callbacks-heading">Callback deliveries</h2>
      <p class="fd-hint">
        {props.callbackUrl ? (
          <>
            Events are sent to <code class="fd-break">{props.callbackUrl}</code>.{" "}
          </>
        ) : (
          "No callback URL is set. "
        )}
        <a href="/dashboard/callbacks">Callback secret and payload shape</a>
      </p>
      {props.deliveries.length === 0 ? (
        <p>No callback deliveries.</p>
      ) : (
        props.deliveries.map((d) => (
          <article
            class="fd-card"
            key={d.id}
            id={`delivery-${d.id}`}
            aria-labelledby={`delivery-${d.id}-title`}
          >
            <h3 id={`delivery-${d.id}-title`}>
              {d.type} <DeliveryBadge delivery={d} />
            </h3>
            <dl class="fd-fields">
              <dt>Delivery</dt>
              <dd>
                {d.id} · <code class="fd-break">{d.webhook_id}</code>
              </dd>
              <dt>URL</dt>
              <dd class="fd-break">{d.url}</dd>
              {d.next_attempt_at ? (
                <>
                  <dt>Next attempt</dt>
                  <dd>
                    <Time value={d.next_attempt_at} />
                  </dd>
                </>
              ) : null}
            </dl>
            <h4>{d.attempts.length === 1 ? "1 attempt" : `${d.attempts.length} attempts`}</h4>
            {d.attempts.length > 0 ? (
              <ol class="fd-attempts">
                {d.attempts.map((a) => (
                  <li key={a.id}>
                    <Time value={a.attempted_at} /> · {a.trigger} · {a.outcome}
                    {a.status_code !== null ? ` · HTTP ${a.status_code}` : ""} · {a.duration_ms} ms
                    {a.error ? <div class="fd-break">{a.error}</div> : null}
                    {a.response_excerpt ? (
                      <>
                        <span class="fd-visually-hidden">Response body:</span>
                        <pre class="fd-pre">{a.response_excerpt}</pre>
                      </>
                    ) : null}
                  </li>
                ))}
              </ol>
            ) : null}
            <details>
              <summary>Payload</summary>
              <pre class="fd-pre">{JSON.stringify(d.payload, null, 2)}</pre>
            </details>
            <form method="post" action={`/dashboard/deliveries/${d.id}/redeliver`} class="fd-row">
              <CsrfField token={props.csrfToken} />
              <input type="hidden" name="back" value={props.back} />
              <button type="submit" class="fd-button fd-button-secondary">
                Redeliver<span class="fd-visually-hidden"> delivery {d.id}</span>
              </button>
            </form>
          </article>
        ))
      )}
    </section>
  );
}
