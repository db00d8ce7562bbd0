import type { Insertable, Selectable } from "kysely";
import type { CapturedMessage } from "../../adapters/mailer/capture-sink.js";
import type { Executor } from "../../db/database.js";
import { keptCount } from "../../db/list-counts.js";
import type {
  AccountSmtpSettingsTable,
  CapturedMessagesTable,
  NotificationStatus,
  NotificationsTable,
} from "../../db/schema.js";
import { idWindow } from "../../shared/pagination.js";

/** A notification row. */
export type NotificationRow = Selectable<NotificationsTable>;
/** A captured message row. */
export type CapturedMessageRow = Selectable<CapturedMessagesTable>;
/** An account's custom SMTP settings row. */
export type SmtpSettingsRow = Selectable<AccountSmtpSettingsTable>;

/** Inserts a notification and returns it. */
export async function insertNotification(
  ex: Executor,
  values: Omit<Insertable<NotificationsTable>, "id">,
): Promise<NotificationRow> {
  return ex.insertInto("notifications").values(values).returningAll().executeTakeFirstOrThrow();
}

/** A notification by id (any account: job handlers only get ids they wrote). */
export async function findNotification(ex: Executor, id: number): Promise<NotificationRow | undefined> {
  return ex.selectFrom("notifications").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Filters of the notification list: a request's, a container's, and/or one delivery state. */
export interface NotificationFilter {
  request?: number | undefined;
  container?: number | undefined;
  state?: NotificationStatus | undefined;
}

function notificationsOf(ex: Executor, accountId: number, filter: NotificationFilter) {
  let q = ex.selectFrom("notifications").where("account_id", "=", accountId);
  if (filter.request !== undefined)
    q = q.where("request_id", "=", filter.request).where("recipient_item_id", "is", null);
  if (filter.container !== undefined)
    q = q.where("request_id", "=", filter.container).where("recipient_item_id", "is not", null);
  if (filter.state !== undefined) q = q.where("status", "=", filter.state);
  return q;
}

/**
 * How many notifications of the account match `filter`. Unfiltered or by state alone: the kept
 * count (ADR 0070), one primary-key read. With a request or container: counted on the
 * (request_id, id) index, bounded by that request's notifications.
 */
export async function countNotifications(
  ex: Executor,
  accountId: number,
  filter: NotificationFilter,
): Promise<number> {
  if (filter.request === undefined && filter.container === undefined) {
    return keptCount(ex, accountId, filter.state ? `notifications_${filter.state}` : "notifications");
  }
  const row = await notificationsOf(ex, accountId, filter)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The ids of one page of the account's notifications matching `filter`, newest first, from one
 * index range ((account_id, id), (account_id, status, id) or (request_id, id)); `total` lets a page
 * in the older half be walked from the oldest end.
 */
export async function pageOfNotificationIds(
  ex: Executor,
  accountId: number,
  filter: NotificationFilter,
  page: { offset: number; limit: number },
  total: number,
): Promise<number[]> {
  const w = idWindow(page, total);
  const rows = await notificationsOf(ex, accountId, filter)
    .select("id")
    .orderBy("id", w.order)
    .limit(w.limit)
    .offset(w.offset)
    .execute();
  const ids = rows.map((r) => r.id);
  return w.order === "asc" ? ids.reverse() : ids;
}

/** The account's notifications with these ids, newest first. */
export async function findNotificationsByIds(
  ex: Executor,
  accountId: number,
  ids: number[],
): Promise<NotificationRow[]> {
  if (ids.length === 0) return [];
  return ex
    .selectFrom("notifications")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "in", ids)
    .orderBy("id", "desc")
    .execute();
}

/**
 * Moves a queued notification to its outcome; returns the updated row, or undefined when it was no
 * longer queued (another run recorded an outcome first).
 */
export async function recordOutcome(
  ex: Executor,
  id: number,
  patch: {
    status: "sent" | "failed";
    error: string | null;
    deliveredAt: string | null;
    providerMessageId: string | null;
    attempts: number;
    now: string;
  },
): Promise<NotificationRow | undefined> {
  return ex
    .updateTable("notifications")
    .set({
      status: patch.status,
      was_sent: patch.status === "sent" ? 1 : 0,
      error: patch.error,
      delivered_at: patch.deliveredAt,
      provider_message_id: patch.providerMessageId,
      attempts: patch.attempts,
      updated: patch.now,
    })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .returningAll()
    .executeTakeFirst();
}

/** Records a failed attempt that will be retried (status stays queued). */
export async function recordAttempt(
  ex: Executor,
  id: number,
  attempts: number,
  error: string,
  now: string,
): Promise<void> {
  await ex
    .updateTable("notifications")
    .set({ attempts, error, updated: now })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .execute();
}

/** Marks the notification with this open token opened, once; returns it when this call did so. */
export async function markOpened(
  ex: Executor,
  token: string,
  now: string,
): Promise<NotificationRow | undefined> {
  return ex
    .updateTable("notifications")
    .set({ opened_at: now })
    .where("open_token", "=", token)
    .where("opened_at", "is", null)
    .returningAll()
    .executeTakeFirst();
}

/** Stores a captured message; returns its id. */
export async function insertCapturedMessage(ex: Executor, m: CapturedMessage, now: string): Promise<number> {
  const row = await ex
    .insertInto("captured_messages")
    .values({
      account_id: m.accountId,
      channel: m.channel,
      to_address: m.to,
      from_address: m.from,
      subject: m.subject,
      text_body: m.text,
      html_body: m.html,
      links: JSON.stringify(m.links),
      notification_id: m.notificationId,
      created: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Filters of the captured message list. */
export interface CapturedFilter {
  channel?: "email" | "sms" | undefined;
  to?: string | undefined;
}

/** A page of an account's captured messages, newest first. */
export async function listCapturedMessages(
  ex: Executor,
  accountId: number,
  filter: CapturedFilter,
  limit: number,
  offset: number,
): Promise<CapturedMessageRow[]> {
  return ex
    .selectFrom("captured_messages")
    .selectAll()
    .where("account_id", "=", accountId)
    .$if(filter.channel !== undefined, (q) => q.where("channel", "=", filter.channel!))
    .$if(filter.to !== undefined, (q) => q.where("to_address", "=", filter.to!))
    .orderBy("id", "desc")
    .limit(limit)
    .offset(offset)
    .execute();
}

/** One captured message of an account, or undefined. */
export async function findCapturedMessage(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<CapturedMessageRow | undefined> {
  return ex
    .selectFrom("captured_messages")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** How many captured messages match. */
export async function countCapturedMessages(
  ex: Executor,
  accountId: number,
  filter: CapturedFilter,
): Promise<number> {
  const row = await ex
    .selectFrom("captured_messages")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .$if(filter.channel !== undefined, (q) => q.where("channel", "=", filter.channel!))
    .$if(filter.to !== undefined, (q) => q.where("to_address", "=", filter.to!))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** An account's custom SMTP settings, or undefined. */
export async function findSmtpSettings(
  ex: Executor,
  accountId: number,
): Promise<SmtpSettingsRow | undefined> {
  return ex
    .selectFrom("account_smtp_settings")
    .selectAll()
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

/** Inserts or replaces an account's custom SMTP settings. */
export async function upsertSmtpSettings(
  ex: Executor,
  row: Insertable<AccountSmtpSettingsTable>,
): Promise<SmtpSettingsRow> {
  return ex
    .insertInto("account_smtp_settings")
    .values(row)
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet({
        host: row.host,
        port: row.port,
        tls: row.tls,
        username: row.username ?? null,
        password_ciphertext: row.password_ciphertext ?? null,
        password_kid: row.password_kid ?? null,
        from_email: row.from_email,
        updated: row.updated,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes an account's custom SMTP settings; true when there were some. */
export async function deleteSmtpSettings(ex: Executor, accountId: number): Promise<boolean> {
  const res = await ex
    .deleteFrom("account_smtp_settings")
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
