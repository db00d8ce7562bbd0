import { CompiledQuery, type Insertable, type Selectable, sql, type Updateable } from "kysely";
import type { Dialect, Executor } from "../../db/database.js";
import { allColumns, jsonAggregation, parseJsonValue } from "../../db/json.js";
import { keptCount } from "../../db/list-counts.js";
import type {
  ContactMethodsTable,
  ContactsTable,
  MediaTable,
  RequestersTable,
  RequestsTable,
} from "../../db/schema.js";
import { idWindow } from "../../shared/pagination.js";

/** A request row. */
export type RequestRow = Selectable<RequestsTable>;

/** Columns a request update sets. */
export type RequestChanges = Updateable<RequestsTable>;

/** Inserts a request. */
export async function insertRequest(ex: Executor, values: Insertable<RequestsTable>): Promise<RequestRow> {
  return ex.insertInto("requests").values(values).returningAll().executeTakeFirstOrThrow();
}

/** Finds a request by id within an account (undefined for absent or foreign ids). */
export async function findRequest(
  ex: Executor,
  accountId: number,
  id: number,
  opts: { forUpdate?: boolean } = {},
): Promise<RequestRow | undefined> {
  // forUpdate locks the row until the transaction ends (PostgreSQL; SQLite serialises writers).
  let q = ex
    .selectFrom("requests")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("kind", "=", "request");
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Finds a request by its public identifier (any account). */
export async function findRequestByIdentifier(
  ex: Executor,
  identifier: string,
): Promise<RequestRow | undefined> {
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("identifier", "=", identifier)
    .where("kind", "=", "request")
    .executeTakeFirst();
}

/**
 * The query of one page of the account's requests, newest first (walks the (account_id, id) index
 * backwards). Exported so the benchmark can print its plan.
 */
export function listRequestsQuery(ex: Executor, accountId: number, page: { offset: number; limit: number }) {
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("kind", "=", "request")
    .orderBy("id", "desc")
    .limit(page.limit)
    .offset(page.offset);
}

/**
 * The ids of one page of the account's requests, newest first, from the (account_id, kind, id)
 * index alone. `total` (the kept count) lets a page in the older half be walked from the oldest
 * end, so the last page costs what the first does; only pages near the middle walk far.
 */
export async function pageOfRequestIds(
  ex: Executor,
  accountId: number,
  page: { offset: number; limit: number },
  total: number,
): Promise<number[]> {
  const w = idWindow(page, total);
  const rows = await ex
    .selectFrom("requests")
    .select("id")
    .where("account_id", "=", accountId)
    .where("kind", "=", "request")
    .orderBy("id", w.order)
    .limit(w.limit)
    .offset(w.offset)
    .execute();
  const ids = rows.map((r) => r.id);
  return w.order === "asc" ? ids.reverse() : ids;
}

/** Filters of the owner's request list (dashboard); every one optional. */
export interface OwnerRequestFilter {
  type?: "push" | "pull" | undefined;
  state?: "draft" | "sent" | "complete" | "expired" | undefined;
  /** Created at or after (stored timestamp form). */
  since?: string | undefined;
  /** Created before (stored timestamp form). */
  until?: string | undefined;
  /** Only requests linked to one of these contacts (an empty list matches nothing). */
  contactIds?: number[] | undefined;
  /** A `containsPattern` matched against identifier, message and email subject. */
  search?: string | undefined;
}

/**
 * The ids of one window of the account's requests matching `filter`, newest first. Unfiltered, the
 * (account_id, kind, id) index alone answers, however deep the window; filters are checked on the
 * rows it walks.
 */
export async function searchOwnerRequests(
  ex: Executor,
  accountId: number,
  filter: OwnerRequestFilter,
  window: { offset: number; limit: number },
): Promise<{ id: number }[]> {
  if (filter.contactIds !== undefined && filter.contactIds.length === 0) return [];
  return searchOwnerRequestsQuery(ex, accountId, filter, window).execute();
}

/** The query of searchOwnerRequests (`contactIds`, when given, not empty); exported for the benchmark. */
export function searchOwnerRequestsQuery(
  ex: Executor,
  accountId: number,
  filter: OwnerRequestFilter,
  window: { offset: number; limit: number },
) {
  let q = ex
    .selectFrom("requests")
    .select("id")
    .where("account_id", "=", accountId)
    .where("kind", "=", "request");
  if (filter.type) q = q.where("type", "=", filter.type);
  if (filter.state === "draft") q = q.where("is_draft", "=", 1);
  if (filter.state === "sent")
    q = q.where("is_draft", "=", 0).where("complete", "=", 0).where("is_expired", "=", 0);
  if (filter.state === "complete") q = q.where("complete", "=", 1);
  if (filter.state === "expired") q = q.where("is_expired", "=", 1);
  if (filter.since) q = q.where("created", ">=", filter.since);
  if (filter.until) q = q.where("created", "<", filter.until);
  if (filter.contactIds) {
    const ids = filter.contactIds;
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom("request_contacts")
          .select("request_contacts.request_id")
          .whereRef("request_contacts.request_id", "=", "requests.id")
          .where("request_contacts.contact_id", "in", ids),
      ),
    );
  }
  if (filter.search) {
    const p = filter.search;
    q = q.where((eb) =>
      eb.or([
        sql<boolean>`lower(requests.identifier) like ${p} escape '\\'`,
        sql<boolean>`lower(requests.message) like ${p} escape '\\'`,
        sql<boolean>`lower(requests.long_message_subject) like ${p} escape '\\'`,
      ]),
    );
  }
  return q.orderBy("id", "desc").limit(window.limit).offset(window.offset);
}
/** The query counting the account's requests (`sentOnly`: not drafts); exported for the benchmark. */
export function countRequestsQuery(ex: Executor, accountId: number, sentOnly = false) {
  let q = ex
    .selectFrom("requests")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .where("kind", "=", "request");
  if (sentOnly) q = q.where("is_draft", "=", 0);
  return q;
}

/**
 * Number of the account's requests; `sentOnly` counts those that are not drafts. Read from the
 * counts the database keeps per account (one primary-key row), not by counting rows.
 */
export async function countRequests(ex: Executor, accountId: number, sentOnly = false): Promise<number> {
  return keptCount(ex, accountId, sentOnly ? "requests_sent" : "requests");
}

/** Updates the given columns of a request; returns the fresh row. */
export async function updateRequestRow(
  ex: Executor,
  id: number,
  values: RequestChanges,
): Promise<RequestRow> {
  return ex.updateTable("requests").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/** Deletes a request; its media, media parts and contact links cascade. */
export async function deleteRequestRow(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("requests").where("id", "=", id).execute();
}

/** Replaces the request's contact links with `contactIds` in that order (`fresh`: none exist yet). */
export async function setRequestContacts(
  ex: Executor,
  requestId: number,
  contactIds: number[],
  opts: { fresh?: boolean } = {},
): Promise<void> {
  if (!opts.fresh) await ex.deleteFrom("request_contacts").where("request_id", "=", requestId).execute();
  if (contactIds.length === 0) return;
  await ex
    .insertInto("request_contacts")
    .values(
      contactIds.map((contactId, position) => ({ request_id: requestId, contact_id: contactId, position })),
    )
    .execute();
}

/** The id of an open sent request (not draft, not complete) that targets the contact, if any. */
export async function findOpenSentRequestOfContact(
  ex: Executor,
  contactId: number,
): Promise<number | undefined> {
  const row = await ex
    .selectFrom("request_contacts")
    .innerJoin("requests", "requests.id", "request_contacts.request_id")
    .select("requests.id")
    .where("request_contacts.contact_id", "=", contactId)
    .where("requests.kind", "=", "request")
    .where("requests.is_draft", "=", 0)
    .where("requests.complete", "=", 0)
    .orderBy("requests.id", "asc")
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/** True while a request of the account that is not complete (draft or sent) names the template. */
export async function isTemplateUsedByOpenRequest(
  ex: Executor,
  accountId: number,
  slug: string,
): Promise<boolean> {
  const row = await ex
    .selectFrom("requests")
    .select("id")
    .where("account_id", "=", accountId)
    .where("email_template_slug", "=", slug)
    .where("kind", "=", "request")
    .where("complete", "=", 0)
    .executeTakeFirst();
  return row !== undefined;
}

/** The request `id` of any account with the columns media rules read (undefined when absent). */
export async function findRequestForMedia(ex: Executor, id: number) {
  return ex
    .selectFrom("requests")
    .select([
      "id",
      "account_id",
      "type",
      "is_draft",
      "complete",
      "is_expired",
      "expires_at",
      "allowed_extensions",
      "max_file_bytes",
      "kind",
    ])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** The request's callback_url (undefined when the request is absent or not the account's). */
export async function findRequestCallbackUrl(
  ex: Executor,
  accountId: number,
  requestId: number,
): Promise<{ callback_url: string | null } | undefined> {
  return ex
    .selectFrom("requests")
    .select("callback_url")
    .where("account_id", "=", accountId)
    .where("id", "=", requestId)
    .executeTakeFirst();
}

/** Mirrors a delivery outcome on its request (`callback_status`, `callback_tries`). */
export async function updateRequestCallbackState(
  ex: Executor,
  requestId: number,
  status: string,
  countTry: boolean,
): Promise<void> {
  await ex
    .updateTable("requests")
    .set((eb) => ({
      callback_status: status,
      callback_tries: countTry ? eb("callback_tries", "+", 1) : eb.ref("callback_tries"),
    }))
    .where("id", "=", requestId)
    .execute();
}

/** Locks a request row for the rest of the transaction (PostgreSQL; SQLite serialises writers anyway). */
export async function lockRequestRow(ex: Executor, id: number, postgres: boolean): Promise<void> {
  if (!postgres) return;
  await ex.selectFrom("requests").select("id").where("id", "=", id).forUpdate().execute();
}

/**
 * Serialises two-factor sends of one request (a no-op update takes the row lock on both
 * dialects), so two racing clicks cannot both pass the send limit.
 */
export async function lockForTfaSend(ex: Executor, id: number): Promise<void> {
  await ex
    .updateTable("requests")
    .set({ tfa_times_sent: (eb) => eb.ref("tfa_times_sent") })
    .where("id", "=", id)
    .execute();
}

/** Counts a two-factor code sent for the request (`tfa_times_sent`). */
export async function countTfaSend(ex: Executor, id: number): Promise<void> {
  await ex
    .updateTable("requests")
    .set((eb) => ({ tfa_times_sent: eb("tfa_times_sent", "+", 1) }))
    .where("id", "=", id)
    .execute();
}

/**
 * Counts one two-factor attempt against the request's failures before it is checked, so parallel
 * guesses can never test more than `max` codes in a row. Returns the new count, or undefined when
 * the request is already locked (`max` failures).
 */
export async function reserveTfaFailure(ex: Executor, id: number, max: number): Promise<number | undefined> {
  const row = await ex
    .updateTable("requests")
    .set((eb) => ({ tfa_failures: eb("tfa_failures", "+", 1) }))
    .where("id", "=", id)
    .where("tfa_failures", "<", max)
    .returning("tfa_failures")
    .executeTakeFirst();
  return row ? Number(row.tfa_failures) : undefined;
}

/**
 * Forgets the failures after a right code whose attempt was numbered `reserved`, unless other
 * attempts locked the subject meanwhile (`max` reached by others): a success cannot clear a lock
 * it did not set. False when the lock stays.
 */
export async function clearTfaFailuresAfter(
  ex: Executor,
  id: number,
  reserved: number,
  max: number,
): Promise<boolean> {
  const res = await ex
    .updateTable("requests")
    .set({ tfa_failures: 0 })
    .where("id", "=", id)
    .where((eb) => eb.or([eb("tfa_failures", "<", max), eb("tfa_failures", "=", reserved)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Forgets the request's two-factor failures (a correct code, or the owner's reset). */
export async function clearTfaFailures(ex: Executor, id: number): Promise<void> {
  await ex.updateTable("requests").set({ tfa_failures: 0 }).where("id", "=", id).execute();
}

/** Sent push requests still open whose expires_at has passed (oldest first), at most `limit`. */
export async function findDuePushExpiries(
  ex: Executor,
  now: string,
  limit: number,
): Promise<{ id: number; account_id: number }[]> {
  return ex
    .selectFrom("requests")
    .select(["id", "account_id"])
    .where("complete", "=", 0)
    .where("expires_at", "is not", null)
    .where("expires_at", "<=", now)
    .where("type", "=", "push")
    .where("is_draft", "=", 0)
    .where("kind", "=", "request")
    .orderBy("expires_at")
    .limit(limit)
    .execute();
}

/**
 * Marks an open, sent push request expired (complete, is_expired, completed_at). Unless `force`,
 * only when its expires_at has passed; with `force`, expires_at becomes `now`. False when nothing
 * matched (already complete, or another worker got there first).
 */
export async function markPushExpired(
  ex: Executor,
  requestId: number,
  now: string,
  force: boolean,
): Promise<boolean> {
  let q = ex
    .updateTable("requests")
    .set({
      complete: 1,
      is_expired: 1,
      completed_at: now,
      updated: now,
      ...(force ? { expires_at: now } : {}),
    })
    .where("id", "=", requestId)
    .where("kind", "=", "request")
    .where("type", "=", "push")
    .where("is_draft", "=", 0)
    .where("complete", "=", 0);
  if (!force) q = q.where("expires_at", "is not", null).where("expires_at", "<=", now);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Marks an open pull request complete with the recipient's message; false when it was already complete. */
export async function markPullComplete(
  ex: Executor,
  requestId: number,
  receiverMessage: string | null,
  now: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("requests")
    .set({ complete: 1, receiver_message: receiverMessage, completed_at: now, updated: now })
    .where("id", "=", requestId)
    .where("kind", "=", "request")
    .where("type", "=", "pull")
    .where("complete", "=", 0)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Inserts a container's row in the id space it shares with requests (kind 'container'): its
 * account, public identifier, callback URL and requester. Returns the id.
 */
export async function insertContainerRow(
  ex: Executor,
  v: {
    accountId: number;
    identifier: string;
    callbackUrl: string | null;
    requesterId: number | null;
    now: string;
  },
): Promise<number> {
  const row = await ex
    .insertInto("requests")
    .values({
      account_id: v.accountId,
      identifier: v.identifier,
      kind: "container",
      type: "pull",
      message: "",
      requester_privatenotes: "",
      is_draft: 1,
      complete: 0,
      is_expired: 0,
      receiver_message: null,
      short_message: "",
      long_message_subject: "",
      long_message: "",
      callback_url: v.callbackUrl,
      requester_id: v.requesterId,
      email_template_slug: null,
      tfa_send_to: null,
      tfa_send_to_value: null,
      tfa_times_sent: 0,
      allowed_extensions: null,
      max_file_bytes: null,
      expires_at: null,
      sent_at: null,
      completed_at: null,
      callback_status: null,
      callback_tries: 0,
      created: v.now,
      updated: v.now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A container's shared row (undefined when absent, foreign or not a container). */
export async function findContainerRow(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<RequestRow | undefined> {
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("kind", "=", "container")
    .executeTakeFirst();
}

/** The shared rows of the account's containers with these ids (absent or foreign ids left out). */
export async function findContainerRows(
  ex: Executor,
  accountId: number,
  ids: number[],
): Promise<RequestRow[]> {
  if (ids.length === 0) return [];
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "in", ids)
    .where("kind", "=", "container")
    .execute();
}

/** A container's shared row by its public identifier (any account). */
export async function findContainerRowByIdentifier(
  ex: Executor,
  identifier: string,
): Promise<RequestRow | undefined> {
  return ex
    .selectFrom("requests")
    .selectAll()
    .where("identifier", "=", identifier)
    .where("kind", "=", "container")
    .executeTakeFirst();
}

/** Changes a container's callback URL and requester (only the fields given). */
export async function updateContainerRow(
  ex: Executor,
  id: number,
  v: { callbackUrl?: string | null; requesterId?: number | null; now: string },
): Promise<void> {
  await ex
    .updateTable("requests")
    .set({
      ...(v.callbackUrl !== undefined ? { callback_url: v.callbackUrl } : {}),
      ...(v.requesterId !== undefined ? { requester_id: v.requesterId } : {}),
      updated: v.now,
    })
    .where("id", "=", id)
    .where("kind", "=", "container")
    .execute();
}

/** Deletes a container's shared row (its container rows, media and events cascade). */
export async function deleteContainerRow(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("requests").where("id", "=", id).where("kind", "=", "container").execute();
}

const contactColumns = allColumns<ContactsTable>()([
  "id",
  "account_id",
  "first_name",
  "last_name",
  "created",
  "updated",
]);
const methodColumns = allColumns<ContactMethodsTable>()([
  "id",
  "account_id",
  "contact_id",
  "interface_class",
  "value",
  "created",
  "updated",
]);
const requesterColumns = allColumns<RequestersTable>()([
  "id",
  "account_id",
  "first_name",
  "last_name",
  "email",
  "mobile",
  "company",
  "role",
  "location",
  "facebook",
  "linkedin",
  "twitter",
  "skype",
  "avatar",
  "created",
  "updated",
]);
const mediaColumns = allColumns<MediaTable>()([
  "id",
  "account_id",
  "request_id",
  "name",
  "content_type",
  "extension",
  "file",
  "bytes",
  "total_chunks",
  "received_chunks",
  "state",
  "sha256",
  "md5",
  "wrapped_key",
  "uploaded_by",
  "times_downloaded",
  "max_allowed_times_downloaded",
  "download_claimed_until",
  "download_claim_token",
  "removed_at",
  "feature_id",
  "recipient_id",
  "declared_bytes",
  "fingerprint",
  "digest_chunks",
  "digest_state",
  "created",
  "updated",
]);

/** A request row with its related rows, read in the same statement. */
export interface RequestWithRelations {
  row: RequestRow;
  /** Its contacts (of the same account) in request order, each with its methods in id order. */
  contacts: { contact: Selectable<ContactsTable>; methods: Selectable<ContactMethodsTable>[] }[];
  requester: Selectable<RequestersTable> | null;
  /** Its media (any state), in id order. */
  media: Selectable<MediaTable>[];
  /** The account's custom recipient host, or null. */
  recipientHost: string | null;
  /** The owner's account name ("" when none). */
  ownerName: string;
}

/** Which requests `findRequestsWithRelations` reads. */
export type RequestSelection =
  | { accountId: number; id: number }
  | { accountId: number; ids: number[] }
  | { identifier: string }
  | { accountId: number; page: { offset: number; limit: number } };

/**
 * Requests with their contacts, contact methods, requester, media, the account's recipient host
 * and name, in one statement (JSON aggregation per row); a page comes newest first like
 * `listRequestsQuery`. The requests feature owns this read of the tables around a request.
 */
export async function findRequestsWithRelations(
  ex: Executor,
  dialect: Dialect,
  selection: RequestSelection,
): Promise<RequestWithRelations[]> {
  if ("ids" in selection) {
    // A list of ids (the dashboard's filtered page) varies in length: built each time.
    if (selection.ids.length === 0) return [];
    const rows = await relationsQuery(ex, dialect, selection).execute();
    return (rows as RelationRow[]).map(toRequestWithRelations);
  }
  // Building and compiling this query costs far more CPU than running it: compile each shape once
  // with placeholder values, then run it with the caller's values in their places.
  const shape = "identifier" in selection ? "identifier" : "id" in selection ? "id" : "page";
  const key = `${dialect} ${shape}`;
  let template = compiledRelationQueries.get(key);
  if (!template) {
    template = relationsQuery(ex, dialect, PLACEHOLDERS[shape]).compile();
    compiledRelationQueries.set(key, template);
  }
  const values = placeholderValues(selection);
  const parameters = template.parameters.map((p) => (values.has(p) ? values.get(p) : p));
  const result = await ex.executeQuery<RelationRow>(CompiledQuery.raw(template.sql, parameters));
  return result.rows.map(toRequestWithRelations);
}

type RelationRow = RequestRow & {
  contacts_json: unknown;
  requester_json: unknown;
  media_json: unknown;
  recipient_host_of_account: string | null;
  owner_name: string | null;
};

const compiledRelationQueries = new Map<string, CompiledQuery>();

// Values no caller passes (ids are positive; identifiers have no NUL), replaced at run time.
const ACCOUNT = -910_001;
const ID = -910_002;
const IDENTIFIER = "\u0000identifier";
const LIMIT = 910_003;
const OFFSET = 910_004;
const PLACEHOLDERS: Record<"identifier" | "id" | "page", RequestSelection> = {
  identifier: { identifier: IDENTIFIER },
  id: { accountId: ACCOUNT, id: ID },
  page: { accountId: ACCOUNT, page: { offset: OFFSET, limit: LIMIT } },
};

function placeholderValues(selection: Exclude<RequestSelection, { ids: number[] }>): Map<unknown, unknown> {
  if ("identifier" in selection) return new Map([[IDENTIFIER, selection.identifier]]);
  if ("id" in selection) {
    return new Map<unknown, unknown>([
      [ACCOUNT, selection.accountId],
      [ID, selection.id],
    ]);
  }
  return new Map<unknown, unknown>([
    [ACCOUNT, selection.accountId],
    [LIMIT, selection.page.limit],
    [OFFSET, selection.page.offset],
  ]);
}

function relationsQuery(ex: Executor, dialect: Dialect, selection: RequestSelection) {
  const json = jsonAggregation(dialect);
  let q = ex
    .selectFrom("requests as r")
    .selectAll("r")
    .select((eb) => [
      json
        .arrayFrom(
          eb
            .selectFrom("request_contacts as rc")
            .innerJoin("contacts as c", "c.id", "rc.contact_id")
            .select(contactColumns.map((c) => `c.${c}` as const))
            .select((inner) =>
              json
                .arrayFrom(
                  inner
                    .selectFrom("contact_methods as m")
                    .select(methodColumns.map((c) => `m.${c}` as const))
                    .whereRef("m.contact_id", "=", "c.id")
                    .orderBy("m.id"),
                )
                .as("methods"),
            )
            .whereRef("rc.request_id", "=", "r.id")
            .whereRef("c.account_id", "=", "r.account_id")
            .orderBy("rc.position"),
        )
        .as("contacts_json"),
      json
        .objectFrom(
          eb
            .selectFrom("requesters as q")
            .select(requesterColumns.map((c) => `q.${c}` as const))
            .whereRef("q.id", "=", "r.requester_id"),
        )
        .as("requester_json"),
      json
        .arrayFrom(
          eb
            .selectFrom("media as md")
            .select(mediaColumns.map((c) => `md.${c}` as const))
            .whereRef("md.request_id", "=", "r.id")
            .orderBy("md.id"),
        )
        .as("media_json"),
      eb
        .selectFrom("account_branding as b")
        .select("b.recipient_host")
        .whereRef("b.account_id", "=", "r.account_id")
        .as("recipient_host_of_account"),
      eb.selectFrom("accounts as a").select("a.name").whereRef("a.id", "=", "r.account_id").as("owner_name"),
    ])
    .where("r.kind", "=", "request");
  if ("identifier" in selection) {
    q = q.where("r.identifier", "=", selection.identifier);
  } else {
    q = q.where("r.account_id", "=", selection.accountId);
    if ("id" in selection) q = q.where("r.id", "=", selection.id);
    else if ("ids" in selection) q = q.where("r.id", "in", selection.ids).orderBy("r.id", "desc");
    else {
      // The page's ids first, from the (account_id, kind, id) index alone however deep the page;
      // the related subqueries then run for those rows only, not for every row OFFSET skips.
      const { limit, offset } = selection.page;
      const accountId = selection.accountId;
      q = q
        .where("r.id", "in", (eb) =>
          eb
            .selectFrom("requests as p")
            .select("p.id")
            .where("p.account_id", "=", accountId)
            .where("p.kind", "=", "request")
            .orderBy("p.id", "desc")
            .limit(limit)
            .offset(offset),
        )
        .orderBy("r.id", "desc");
    }
  }
  return q;
}

function toRequestWithRelations({
  contacts_json,
  requester_json,
  media_json,
  recipient_host_of_account,
  owner_name,
  ...row
}: RelationRow): RequestWithRelations {
  return {
    row,
    contacts: parseJsonValue<(Selectable<ContactsTable> & { methods: unknown })[]>(contacts_json).map(
      ({ methods, ...contact }) => ({
        contact,
        methods: parseJsonValue<Selectable<ContactMethodsTable>[]>(methods),
      }),
    ),
    requester: parseJsonValue<Selectable<RequestersTable> | null>(requester_json),
    media: parseJsonValue<Selectable<MediaTable>[]>(media_json),
    recipientHost: recipient_host_of_account ?? null,
    ownerName: owner_name ?? "",
  };
}
