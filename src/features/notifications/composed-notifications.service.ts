import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Executor } from "../../db/database.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { randomId } from "../../shared/ids.js";
import { toMillisTimestamp, toTimestamp } from "../../shared/time.js";
import { checkDestination, type NotificationOutcomes } from "./notification-outcomes.js";
import { DeliverNotificationJob } from "./notifications.jobs.js";
import { insertNotification, type NotificationRow } from "./notifications.repository.js";
import { type Sealed, sealSecret } from "./secret-box.js";

/** A message composed by the feature that sends it. */
export interface ComposedMessage {
  /** Email subject (ignored for SMS). */
  subject: string;
  /** Email text part, or the SMS text. */
  text: string;
  /** Email HTML part (ignored for SMS). */
  html: string;
}

/** One composed notification to queue. */
export interface ComposedNotification {
  accountId: number;
  /** The request (or container, same id space) it belongs to. */
  requestId: number;
  recipientItemId: number | null;
  /** `link`: nothing is delivered, the notification is recorded as sent. */
  channel: "email" | "sms" | "link";
  to: string;
  firstName: string;
  lastName: string;
  message: ComposedMessage;
  /** Merged into the outcome callback's body (instead of the Request object). */
  eventContext: Record<string, unknown>;
}

/** Label of the key-ring seal of composed messages. */
export function composedLabel(accountId: number): string {
  return `notification:${accountId}`;
}

/**
 * Notifications composed by the feature that sends them (containers): recorded, sealed, and
 * delivered by the same jobs, retries, transports and outcome callbacks as request notifications.
 */
export class ComposedNotifications {
  constructor(
    private readonly keyRing: KeyRing,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly outcomes: NotificationOutcomes,
  ) {}

  /**
   * Records `n` in the caller's transaction: a `link` notification is sent at once (nothing to
   * deliver) with its outcome callback; an invalid email or phone number is failed at once with its outcome callback; any other
   * is queued for delivery. Returns the row.
   */
  async queue(trx: Executor, n: ComposedNotification): Promise<NotificationRow> {
    const now = this.clock.now();
    const ts = toTimestamp(now);
    const problem = n.channel === "link" ? undefined : checkDestination(n.channel, n.to);
    const sealed: Sealed = sealSecret(this.keyRing, JSON.stringify(n.message), composedLabel(n.accountId));
    const row = await insertNotification(trx, {
      account_id: n.accountId,
      request_id: n.requestId,
      contact_id: null,
      contact_method_id: null,
      recipient_item_id: n.recipientItemId,
      contact_first_name: n.firstName,
      contact_last_name: n.lastName,
      contact_method_value: n.to,
      contact_method_interface_class: n.channel,
      status: n.channel === "link" ? "sent" : problem ? "failed" : "queued",
      was_sent: n.channel === "link" ? 1 : 0,
      removed: 0,
      error: problem ?? null,
      attempts: 0,
      sent_at: toMillisTimestamp(now),
      delivered_at: n.channel === "link" ? ts : null,
      provider_message_id: null,
      open_token: !problem && n.channel === "email" ? randomId(24) : null,
      opened_at: null,
      sealed_message: JSON.stringify(sealed),
      event_context: JSON.stringify(n.eventContext),
      created: ts,
      updated: ts,
    });
    if (problem) await this.outcomes.emit(trx, row, false, problem);
    else if (n.channel === "link") await this.outcomes.emit(trx, row, true, "");
    else await this.jobs.enqueue(trx, DeliverNotificationJob, { notification_id: row.id });
    return row;
  }
}
