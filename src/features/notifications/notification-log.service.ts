import type { Database } from "../../db/database.js";
import type { NotificationStatus } from "../../db/schema.js";
import { notFound, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import type { PageRequest } from "../../shared/pagination.js";
import {
  countNotifications,
  findNotificationsByIds,
  type NotificationRow,
  pageOfNotificationIds,
} from "./notifications.repository.js";

/** A notification as GET /v1/notification/ answers it (docs/notifications.md). */
export interface NotificationRecordView {
  id: number;
  request: number | null;
  container: number | null;
  channel: string;
  destination: string;
  contact_first_name: string;
  contact_last_name: string;
  state: NotificationStatus;
  error: string | null;
  attempts: number;
  queued_at: string;
  sent_at: string | null;
  opened_at: string | null;
  created: string;
  updated: string;
}

/** Filters of the notification list, as query parameters. */
export interface NotificationListQuery {
  request?: unknown;
  container?: unknown;
  state?: unknown;
}

const STATES: readonly NotificationStatus[] = ["queued", "sent", "failed"];

/** Allow-lists a notification row. A container's notifications carry its id in `request_id`. */
export function presentNotificationRecord(row: NotificationRow): NotificationRecordView {
  const ofContainer = row.recipient_item_id !== null;
  return {
    id: row.id,
    request: ofContainer ? null : row.request_id,
    container: ofContainer ? row.request_id : null,
    channel: row.contact_method_interface_class,
    destination: row.contact_method_value,
    contact_first_name: row.contact_first_name,
    contact_last_name: row.contact_last_name,
    state: row.status,
    error: row.error,
    attempts: row.attempts,
    queued_at: row.sent_at,
    sent_at: row.delivered_at,
    opened_at: row.opened_at,
    created: row.created,
    updated: row.updated,
  };
}

function readIdFilter(value: unknown, field: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const id = parseId(String(value));
  if (id === undefined) throw ValidationError.field(field, "A valid integer is required.");
  return id;
}

/** The account's notifications: what was sent to whom, and how each delivery went. */
export class NotificationLog {
  constructor(private readonly database: Database) {}

  /** A page of the account's notifications, newest first, filtered by request, container or state. */
  async list(
    accountId: number,
    query: NotificationListQuery,
    page: PageRequest,
  ): Promise<{ results: NotificationRecordView[]; count: number }> {
    const request = readIdFilter(query.request, "request");
    const container = readIdFilter(query.container, "container");
    const state = query.state === undefined || query.state === "" ? undefined : String(query.state);
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      throw ValidationError.field("state", `"${state}" is not a valid choice. Choose ${STATES.join(", ")}.`);
    }
    const filter = { request, container, state: state as NotificationStatus | undefined };
    const { db } = this.database;
    // The count first (kept per account, ADR 0070), then the page's ids, then their rows.
    const count = await countNotifications(db, accountId, filter);
    const ids = await pageOfNotificationIds(
      db,
      accountId,
      filter,
      { offset: page.offset, limit: page.pageSize },
      count,
    );
    const rows = await findNotificationsByIds(db, accountId, ids);
    return { results: rows.map(presentNotificationRecord), count };
  }

  /** One notification of the account; 404 for a missing or foreign id. */
  async get(accountId: number, rawId: string): Promise<NotificationRecordView> {
    const id = parseId(rawId);
    if (id === undefined) throw notFound("Notification");
    const row = await this.database.db
      .selectFrom("notifications")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    if (!row) throw notFound("Notification");
    return presentNotificationRecord(row);
  }
}
