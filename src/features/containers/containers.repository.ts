import { type Insertable, type Selectable, sql, type Updateable } from "kysely";
import type { Executor } from "../../db/database.js";
import { keptCount } from "../../db/list-counts.js";
import type {
  ContainerEmailsTable,
  ContainerMessageRepliesTable,
  ContainerMessagesTable,
  ContainerRecipientItemsTable,
  ContainerRecipientsTable,
  ContainersTable,
} from "../../db/schema.js";
import { idWindow } from "../../shared/pagination.js";

/** A container's own row. */
export type ContainerRow = Selectable<ContainersTable>;
/** A container's email text. */
export type ContainerEmailRow = Selectable<ContainerEmailsTable>;
/** A recipient of a container. */
export type RecipientRow = Selectable<ContainerRecipientsTable>;
/** A recipient item (email, sms or link) with its session token. */
export type RecipientItemRow = Selectable<ContainerRecipientItemsTable>;
/** A chat message of the owner. */
export type MessageRow = Selectable<ContainerMessagesTable>;
/** A recipient's chat reply. */
export type ReplyRow = Selectable<ContainerMessageRepliesTable>;

/** A page window. */
export interface Window {
  offset: number;
  limit: number;
}

// ---------------------------------------------------------------------------------------------
// containers

/** Inserts a container's own row (its shared row in `requests` exists already, same id). */
export async function insertContainer(
  ex: Executor,
  values: Insertable<ContainersTable>,
): Promise<ContainerRow> {
  return ex.insertInto("containers").values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * A row lock on PostgreSQL (SQLite runs one write transaction at a time): `update` for a change of the
 * container's state, `share` for a change that depends on it (a chat message while the chat is open).
 */
export type ContainerLock = "update" | "share";

/** The container `id` of `accountId` (undefined for absent or foreign ids). */
export async function findContainer(
  ex: Executor,
  accountId: number,
  id: number,
  opts: { forUpdate?: boolean; lock?: ContainerLock } = {},
): Promise<ContainerRow | undefined> {
  let q = ex.selectFrom("containers").selectAll().where("account_id", "=", accountId).where("id", "=", id);
  const lock = opts.lock ?? (opts.forUpdate ? "update" : undefined);
  if (lock === "update") q = q.forUpdate();
  else if (lock === "share") q = q.forShare();
  return q.executeTakeFirst();
}

/** The container `id` of any account (for jobs and recipient sessions, which resolved it already). */
export async function findContainerById(
  ex: Executor,
  id: number,
  opts: { lock?: ContainerLock } = {},
): Promise<ContainerRow | undefined> {
  let q = ex.selectFrom("containers").selectAll().where("id", "=", id);
  if (opts.lock === "update") q = q.forUpdate();
  else if (opts.lock === "share") q = q.forShare();
  return q.executeTakeFirst();
}

/**
 * The ids of one page of the account's containers, newest first, from the (account_id, id) index
 * alone. `total` (the kept count, or the filtered count) lets a page in the older half be walked
 * from the oldest end. `recipientId` keeps the container of that recipient.
 */
export async function pageOfContainerIds(
  ex: Executor,
  accountId: number,
  filter: { recipientId?: number | undefined },
  window: Window,
  total: number,
): Promise<number[]> {
  const w = idWindow(window, total);
  const rows = await containersOf(ex, accountId, filter)
    .select("containers.id")
    .orderBy("containers.id", w.order)
    .limit(w.limit)
    .offset(w.offset)
    .execute();
  const ids = rows.map((r) => r.id);
  return w.order === "asc" ? ids.reverse() : ids;
}

/** How many containers the account has: its kept count (ADR 0070), one primary-key read. */
export async function countContainers(ex: Executor, accountId: number): Promise<number> {
  return keptCount(ex, accountId, "containers");
}

/** How many of the account's containers have the recipient `recipientId` (0 or 1). */
export async function countContainersOfRecipient(
  ex: Executor,
  accountId: number,
  recipientId: number,
): Promise<number> {
  const row = await containersOf(ex, accountId, { recipientId })
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The account's containers with these ids, newest first (foreign or absent ids left out). */
export async function findContainersByIds(
  ex: Executor,
  accountId: number,
  ids: number[],
): Promise<ContainerRow[]> {
  if (ids.length === 0) return [];
  return ex
    .selectFrom("containers")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "in", ids)
    .orderBy("id", "desc")
    .execute();
}

function containersOf(ex: Executor, accountId: number, filter: { recipientId?: number | undefined }) {
  let base = ex.selectFrom("containers").where("containers.account_id", "=", accountId);
  if (filter.recipientId !== undefined) {
    const recipientId = filter.recipientId;
    base = base.where((eb) =>
      eb.exists(
        eb
          .selectFrom("container_recipients")
          .select("container_recipients.id")
          .whereRef("container_recipients.container_id", "=", "containers.id")
          .where("container_recipients.id", "=", recipientId),
      ),
    );
  }
  return base;
}

/** Filters of the owner's container list (dashboard); every one optional. */
export interface OwnerContainerFilter {
  pageType?: "pushpull" | "p2" | undefined;
  state?: ContainerRow["state"] | undefined;
  since?: string | undefined;
  until?: string | undefined;
  /** A `containsPattern` matched against recipients' names and item values (email, phone). */
  contact?: string | undefined;
  /** A `containsPattern` matched against the email subject. */
  search?: string | undefined;
  /** Exactly this container id (a number typed in the search box). */
  id?: number | undefined;
}

/** One window of the account's containers matching `filter`, newest first. */
export async function searchOwnerContainers(
  ex: Executor,
  accountId: number,
  filter: OwnerContainerFilter,
  window: Window,
): Promise<ContainerRow[]> {
  let q = ex.selectFrom("containers").selectAll("containers").where("containers.account_id", "=", accountId);
  if (filter.pageType) q = q.where("containers.page_type", "=", filter.pageType);
  if (filter.state) q = q.where("containers.state", "=", filter.state);
  if (filter.since) q = q.where("containers.created", ">=", filter.since);
  if (filter.until) q = q.where("containers.created", "<", filter.until);
  const contact = filter.contact;
  if (contact) {
    q = q.where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom("container_recipients")
            .select("container_recipients.id")
            .whereRef("container_recipients.container_id", "=", "containers.id")
            .where((r) =>
              r.or([
                sql<boolean>`lower(container_recipients.first_name) like ${contact} escape '\\'`,
                sql<boolean>`lower(container_recipients.last_name) like ${contact} escape '\\'`,
              ]),
            ),
        ),
        eb.exists(
          eb
            .selectFrom("container_recipient_items")
            .select("container_recipient_items.id")
            .whereRef("container_recipient_items.container_id", "=", "containers.id")
            .where(sql<boolean>`lower(container_recipient_items.value) like ${contact} escape '\\'`),
        ),
      ]),
    );
  }
  const search = filter.search;
  if (search || filter.id !== undefined) {
    q = q.where((eb) =>
      eb.or([
        ...(filter.id !== undefined ? [eb("containers.id", "=", filter.id)] : []),
        ...(search
          ? [
              eb.exists(
                eb
                  .selectFrom("container_emails")
                  .select("container_emails.id")
                  .whereRef("container_emails.container_id", "=", "containers.id")
                  .where(sql<boolean>`lower(container_emails.subject) like ${search} escape '\\'`),
              ),
            ]
          : []),
      ]),
    );
  }
  return q.orderBy("containers.id", "desc").limit(window.limit).offset(window.offset).execute();
}

/** Updates a container's own row; returns it. */
export async function updateContainer(
  ex: Executor,
  id: number,
  values: Updateable<ContainersTable>,
): Promise<ContainerRow> {
  return ex
    .updateTable("containers")
    .set(values)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------
// email text

/** The container's email text, if set. */
export async function findEmail(ex: Executor, containerId: number): Promise<ContainerEmailRow | undefined> {
  return ex
    .selectFrom("container_emails")
    .selectAll()
    .where("container_id", "=", containerId)
    .executeTakeFirst();
}

/** Sets the container's email text (one per container: a second call replaces the first). */
export async function upsertEmail(
  ex: Executor,
  v: { accountId: number; containerId: number; subject: string; body: string; now: string },
): Promise<ContainerEmailRow> {
  return ex
    .insertInto("container_emails")
    .values({
      account_id: v.accountId,
      container_id: v.containerId,
      subject: v.subject,
      body: v.body,
      created: v.now,
      updated: v.now,
    })
    .onConflict((oc) =>
      oc.column("container_id").doUpdateSet({ subject: v.subject, body: v.body, updated: v.now }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------
// recipients and their items

/** Inserts a recipient. */
export async function insertRecipient(
  ex: Executor,
  values: Insertable<ContainerRecipientsTable>,
): Promise<RecipientRow> {
  return ex.insertInto("container_recipients").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The recipient `id` of `accountId` (undefined for absent or foreign ids). */
export async function findRecipient(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<RecipientRow | undefined> {
  return ex
    .selectFrom("container_recipients")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Every recipient of a container, oldest first. */
export async function recipientsOf(ex: Executor, containerId: number): Promise<RecipientRow[]> {
  return ex
    .selectFrom("container_recipients")
    .selectAll()
    .where("container_id", "=", containerId)
    .orderBy("id")
    .execute();
}

/** A page of the account's recipients, oldest first, optionally of one container. */
export async function listRecipients(
  ex: Executor,
  accountId: number,
  filter: { containerId?: number | undefined },
  window: Window,
): Promise<{ rows: RecipientRow[]; count: number }> {
  let base = ex.selectFrom("container_recipients").where("account_id", "=", accountId);
  if (filter.containerId !== undefined) base = base.where("container_id", "=", filter.containerId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

/** Updates a recipient; returns it. */
export async function updateRecipient(
  ex: Executor,
  id: number,
  values: Updateable<ContainerRecipientsTable>,
): Promise<RecipientRow> {
  return ex
    .updateTable("container_recipients")
    .set(values)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a recipient (its items, replies and permissions cascade). */
export async function deleteRecipient(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("container_recipients").where("id", "=", id).execute();
}

/** Inserts a recipient item. */
export async function insertItem(
  ex: Executor,
  values: Insertable<ContainerRecipientItemsTable>,
): Promise<RecipientItemRow> {
  return ex.insertInto("container_recipient_items").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The item `id` of `accountId` (undefined for absent or foreign ids). */
export async function findItem(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<RecipientItemRow | undefined> {
  return ex
    .selectFrom("container_recipient_items")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** The item with this session token (any account), or undefined. */
export async function findItemByToken(ex: Executor, token: string): Promise<RecipientItemRow | undefined> {
  return ex
    .selectFrom("container_recipient_items")
    .selectAll()
    .where("session_token", "=", token)
    .executeTakeFirst();
}

/** Every item of a container, by recipient then id. */
export async function itemsOfContainer(ex: Executor, containerId: number): Promise<RecipientItemRow[]> {
  return ex
    .selectFrom("container_recipient_items")
    .selectAll()
    .where("container_id", "=", containerId)
    .orderBy("recipient_id")
    .orderBy("id")
    .execute();
}

/** A page of the account's recipient items, oldest first, of one recipient or one container. */
export async function listItems(
  ex: Executor,
  accountId: number,
  filter: { recipientId?: number | undefined; containerId?: number | undefined },
  window: Window,
): Promise<{ rows: RecipientItemRow[]; count: number }> {
  let base = ex.selectFrom("container_recipient_items").where("account_id", "=", accountId);
  if (filter.recipientId !== undefined) base = base.where("recipient_id", "=", filter.recipientId);
  if (filter.containerId !== undefined) base = base.where("container_id", "=", filter.containerId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

/** Updates an item; returns it. */
export async function updateItem(
  ex: Executor,
  id: number,
  values: Updateable<ContainerRecipientItemsTable>,
): Promise<RecipientItemRow> {
  return ex
    .updateTable("container_recipient_items")
    .set(values)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes an item. */
export async function deleteItem(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("container_recipient_items").where("id", "=", id).execute();
}

// ---------------------------------------------------------------------------------------------
// chat

/** Inserts an owner's chat message. */
export async function insertMessage(
  ex: Executor,
  values: Insertable<ContainerMessagesTable>,
): Promise<MessageRow> {
  return ex.insertInto("container_messages").values(values).returningAll().executeTakeFirstOrThrow();
}

/** A page of the account's chat messages, oldest first, optionally of one container. */
export async function listMessages(
  ex: Executor,
  accountId: number,
  filter: { containerId?: number | undefined },
  window: Window,
): Promise<{ rows: MessageRow[]; count: number }> {
  let base = ex.selectFrom("container_messages").where("account_id", "=", accountId);
  if (filter.containerId !== undefined) base = base.where("container_id", "=", filter.containerId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

/** The message `id` of `accountId`. */
export async function findMessage(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<MessageRow | undefined> {
  return ex
    .selectFrom("container_messages")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Every message of a container after `afterId` (0: all), oldest first. */
export async function messagesOf(ex: Executor, containerId: number, afterId = 0): Promise<MessageRow[]> {
  return ex
    .selectFrom("container_messages")
    .selectAll()
    .where("container_id", "=", containerId)
    .where("id", ">", afterId)
    .orderBy("id")
    .execute();
}

/** Inserts a recipient's reply. */
export async function insertReply(
  ex: Executor,
  values: Insertable<ContainerMessageRepliesTable>,
): Promise<ReplyRow> {
  return ex.insertInto("container_message_replies").values(values).returningAll().executeTakeFirstOrThrow();
}

/** A page of the account's replies, oldest first, filtered by container and/or recipient. */
export async function listReplies(
  ex: Executor,
  accountId: number,
  filter: { containerId?: number | undefined; recipientId?: number | undefined },
  window: Window,
): Promise<{ rows: ReplyRow[]; count: number }> {
  let base = ex.selectFrom("container_message_replies").where("account_id", "=", accountId);
  if (filter.containerId !== undefined) base = base.where("container_id", "=", filter.containerId);
  if (filter.recipientId !== undefined) base = base.where("recipient_id", "=", filter.recipientId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

/** The reply `id` of `accountId`. */
export async function findReply(ex: Executor, accountId: number, id: number): Promise<ReplyRow | undefined> {
  return ex
    .selectFrom("container_message_replies")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Every reply of a container after `afterId`, oldest first. */
export async function repliesOf(ex: Executor, containerId: number, afterId = 0): Promise<ReplyRow[]> {
  return ex
    .selectFrom("container_message_replies")
    .selectAll()
    .where("container_id", "=", containerId)
    .where("id", ">", afterId)
    .orderBy("id")
    .execute();
}

/** A recipient's replies in a container after `afterId`, oldest first, at most `limit`. */
export async function repliesOfRecipient(
  ex: Executor,
  containerId: number,
  recipientId: number,
  afterId: number,
  limit: number,
): Promise<ReplyRow[]> {
  return ex
    .selectFrom("container_message_replies")
    .selectAll()
    .where("container_id", "=", containerId)
    .where("recipient_id", "=", recipientId)
    .where("id", ">", afterId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** A container's owner messages after `afterId`, oldest first, at most `limit`. */
export async function messagesAfter(
  ex: Executor,
  containerId: number,
  afterId: number,
  limit: number,
): Promise<MessageRow[]> {
  return ex
    .selectFrom("container_messages")
    .selectAll()
    .where("container_id", "=", containerId)
    .where("id", ">", afterId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** Marks an item's session opened unless it already was; true for the one call that marked it. */
export async function markItemOpened(ex: Executor, id: number, at: string): Promise<boolean> {
  const res = await ex
    .updateTable("container_recipient_items")
    .set({ opened_at: at, updated: at })
    .where("id", "=", id)
    .where("opened_at", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
