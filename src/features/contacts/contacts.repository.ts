import { type Selectable, sql } from "kysely";
import type { Executor } from "../../db/database.js";
import { keptCount } from "../../db/list-counts.js";
import type { ContactMethodsTable, ContactsTable } from "../../db/schema.js";

/** A contact row. */
export type ContactRow = Selectable<ContactsTable>;
/** A contact method row. */
export type ContactMethodRow = Selectable<ContactMethodsTable>;
/** A contact with its methods (ordered by id). */
export interface ContactWithMethods {
  contact: ContactRow;
  methods: ContactMethodRow[];
}

/** Inserts a contact of `accountId`. */
export async function insertContact(
  ex: Executor,
  v: { accountId: number; firstName: string; lastName: string; now: string },
): Promise<ContactRow> {
  return ex
    .insertInto("contacts")
    .values({
      account_id: v.accountId,
      first_name: v.firstName,
      last_name: v.lastName,
      created: v.now,
      updated: v.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Inserts contact methods of one contact, returned in insertion order. */
export async function insertContactMethods(
  ex: Executor,
  v: {
    accountId: number;
    contactId: number;
    now: string;
    methods: { interfaceClass: string; value: string }[];
  },
): Promise<ContactMethodRow[]> {
  if (v.methods.length === 0) return [];
  const rows = await ex
    .insertInto("contact_methods")
    .values(
      v.methods.map((m) => ({
        account_id: v.accountId,
        contact_id: v.contactId,
        interface_class: m.interfaceClass,
        value: m.value,
        created: v.now,
        updated: v.now,
      })),
    )
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.id - b.id);
}

/** Finds a contact by id within an account (undefined for absent or foreign ids). */
export async function findContact(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<ContactRow | undefined> {
  return ex
    .selectFrom("contacts")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** The account's contacts among `ids` (foreign or missing ids are simply absent). */
export async function findContactsByIds(
  ex: Executor,
  accountId: number,
  ids: number[],
): Promise<ContactRow[]> {
  if (ids.length === 0) return [];
  return ex
    .selectFrom("contacts")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "in", ids)
    .execute();
}

/** One page of the account's contacts, newest first. */
export async function listContacts(
  ex: Executor,
  accountId: number,
  page: { offset: number; limit: number },
): Promise<ContactRow[]> {
  return ex
    .selectFrom("contacts")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/**
 * Ids of the account's contacts whose first name, last name or a method value contains `pattern`
 * (a LIKE pattern with `\` as escape, lower case), newest first, at most `limit`.
 */
export async function findContactIdsMatching(
  ex: Executor,
  accountId: number,
  pattern: string,
  limit: number,
): Promise<number[]> {
  const rows = await ex
    .selectFrom("contacts")
    .select("contacts.id")
    .where("contacts.account_id", "=", accountId)
    .where((eb) =>
      eb.or([
        sql<boolean>`lower(contacts.first_name) like ${pattern} escape '\\'`,
        sql<boolean>`lower(contacts.last_name) like ${pattern} escape '\\'`,
        eb.exists(
          eb
            .selectFrom("contact_methods")
            .select("contact_methods.id")
            .whereRef("contact_methods.contact_id", "=", "contacts.id")
            .where(sql<boolean>`lower(contact_methods.value) like ${pattern} escape '\\'`),
        ),
      ]),
    )
    .orderBy("contacts.id", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Number of the account's contacts. */
export async function countContacts(ex: Executor, accountId: number): Promise<number> {
  return keptCount(ex, accountId, "contacts");
}

/** Methods of the given contacts, ordered by id. */
export async function methodsOfContacts(ex: Executor, contactIds: number[]): Promise<ContactMethodRow[]> {
  if (contactIds.length === 0) return [];
  return ex
    .selectFrom("contact_methods")
    .selectAll()
    .where("contact_id", "in", contactIds)
    .orderBy("id", "asc")
    .execute();
}

/** Updates a contact's names and `updated`. */
export async function updateContactRow(
  ex: Executor,
  id: number,
  v: { firstName?: string; lastName?: string; now: string },
): Promise<void> {
  await ex
    .updateTable("contacts")
    .set({
      ...(v.firstName !== undefined ? { first_name: v.firstName } : {}),
      ...(v.lastName !== undefined ? { last_name: v.lastName } : {}),
      updated: v.now,
    })
    .where("id", "=", id)
    .execute();
}

/** Updates one contact method in place. */
export async function updateContactMethodRow(
  ex: Executor,
  id: number,
  v: { interfaceClass: string; value: string; now: string },
): Promise<void> {
  await ex
    .updateTable("contact_methods")
    .set({ interface_class: v.interfaceClass, value: v.value, updated: v.now })
    .where("id", "=", id)
    .execute();
}

/** Deletes contact methods by id. */
export async function deleteContactMethodRows(ex: Executor, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await ex.deleteFrom("contact_methods").where("id", "in", ids).execute();
}

/** Deletes a contact (its methods and request links cascade). */
export async function deleteContactRow(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("contacts").where("id", "=", id).execute();
}
