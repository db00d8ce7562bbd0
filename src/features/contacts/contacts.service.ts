import type { Database, Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, unprocessable } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { containsPattern } from "../../shared/like.js";
import type { PageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { type Body, FieldErrors, Messages, readString, requireObjectBody } from "../../shared/validation.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import { type ContactView, presentContact } from "./contacts.presenter.js";
import {
  type ContactWithMethods,
  countContacts,
  deleteContactMethodRows,
  deleteContactRow,
  findContact,
  findContactIdsMatching,
  findContactsByIds,
  insertContact,
  insertContactMethods,
  listContacts,
  methodsOfContacts,
  updateContactMethodRow,
  updateContactRow,
} from "./contacts.repository.js";
import { checkMethodValue, INTERFACE_CLASSES, type InterfaceClass } from "./contacts.validation.js";

/** A contact method as accepted from a client, already checked and normalised. */
export interface ContactMethodInput {
  /** On PATCH: an existing method of the contact to keep (and update). */
  id?: number;
  interfaceClass: InterfaceClass;
  value: string;
}

/** Contact fields as accepted from a client; absent fields are undefined. */
export interface ContactInput {
  firstName?: string;
  lastName?: string;
  /** undefined: not given (PATCH keeps the methods); an array replaces them. */
  methods?: ContactMethodInput[];
}

/** Most contact methods one contact may have. */
export const MAX_METHODS_PER_CONTACT = 20;
const NAME_MAX = 150;
const VALUE_MAX = 254;

/**
 * Reads a contact object (standalone or inside a request's `contact` list). Field errors are
 * recorded under `prefix` (e.g. "contact.0.") so the client sees where they are.
 */
export function parseContactInput(raw: Body, errors: FieldErrors, prefix = ""): ContactInput {
  const out: ContactInput = {};
  const first = readString(raw, "first_name", errors, {
    max: NAME_MAX,
    nullable: true,
    field: `${prefix}first_name`,
  });
  if (first !== undefined) out.firstName = first ?? "";
  const last = readString(raw, "last_name", errors, {
    max: NAME_MAX,
    nullable: true,
    field: `${prefix}last_name`,
  });
  if (last !== undefined) out.lastName = last ?? "";
  const key =
    raw.contactmethod !== undefined
      ? "contactmethod"
      : raw.contact_method !== undefined
        ? "contact_method"
        : undefined;
  if (key === undefined) return out;
  const list = raw[key];
  if (list === null) {
    out.methods = [];
    return out;
  }
  if (!Array.isArray(list)) {
    errors.add(`${prefix}${key}`, Messages.notList);
    return out;
  }
  if (list.length > MAX_METHODS_PER_CONTACT) {
    errors.add(`${prefix}${key}`, `Ensure this list has no more than ${MAX_METHODS_PER_CONTACT} items.`);
    return out;
  }
  const methods: ContactMethodInput[] = [];
  list.forEach((item, i) => {
    const at = `${prefix}${key}.${i}.`;
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      errors.add(`${prefix}${key}.${i}`, Messages.notObject);
      return;
    }
    const m = item as Body;
    const cls = readString(m, "interface_class", errors, {
      max: 20,
      required: true,
      field: `${at}interface_class`,
    });
    const value = readString(m, "value", errors, { max: VALUE_MAX, required: true, field: `${at}value` });
    let id: number | undefined;
    if (m.id !== undefined && m.id !== null) {
      id = parseId(m.id);
      if (id === undefined) errors.add(`${at}id`, Messages.invalidPk(m.id));
    }
    if (cls === undefined || cls === null) return;
    if (!(INTERFACE_CLASSES as readonly string[]).includes(cls.toLowerCase())) {
      errors.add(`${at}interface_class`, `"${cls}" is not a valid choice. Choose email or sms.`);
      return;
    }
    const interfaceClass = cls.toLowerCase() as InterfaceClass;
    if (value === undefined || value === null) return;
    const normalised = checkMethodValue(interfaceClass, value, errors, `${at}value`);
    if (normalised !== undefined) methods.push({ ...(id ? { id } : {}), interfaceClass, value: normalised });
  });
  out.methods = methods;
  return out;
}

/** Names of the fields a ContactInput sets, for audit values (names only, never contents). */
export function contactFields(input: ContactInput): string[] {
  const out: string[] = [];
  if (input.firstName !== undefined) out.push("first_name");
  if (input.lastName !== undefined) out.push("last_name");
  if (input.methods !== undefined) out.push("contactmethod");
  return out;
}

/**
 * What contacts need to know about the requests that target them (the requests feature answers):
 * a contact of an open sent request cannot be deleted.
 */
export interface ContactUsage {
  /** The id of an open sent request (not a draft, not complete) that targets the contact, if any. */
  openSentRequestOf(ex: Executor, contactId: number): Promise<number | undefined>;
}

/** Contacts and their contact methods (spec: Contacts), scoped to the caller's account. */
export class ContactsService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly audit: AuditWriter,
    private readonly usage: ContactUsage,
  ) {}

  private now(): string {
    return toTimestamp(this.clock.now());
  }

  /** POST /v1/contact/: creates a contact with its methods; 400 on bad input. Audited ABA-0010. */
  async create(auth: AuthContext, body: unknown): Promise<ContactView> {
    const errors = new FieldErrors();
    const input = parseContactInput(requireObjectBody(body), errors);
    errors.throwIfAny();
    return this.database.db.transaction().execute(async (trx) => {
      const created = await this.createInTransaction(trx, auth.accountId, input);
      await this.audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.ENTITY_CREATED,
        apiKeyId: auth.applicationId,
        relatedModel: "contact",
        relationKey: created.contact.id,
        value: JSON.stringify({ fields: contactFields(input) }),
      });
      return presentContact(created.contact, created.methods);
    });
  }

  /**
   * Inserts a checked contact and its methods inside the caller's transaction (used by request
   * creation for inline contacts). Does not audit: the caller records the change it belongs to.
   */
  async createInTransaction(
    ex: Executor,
    accountId: number,
    input: ContactInput,
  ): Promise<ContactWithMethods> {
    const now = this.now();
    const contact = await insertContact(ex, {
      accountId,
      firstName: input.firstName ?? "",
      lastName: input.lastName ?? "",
      now,
    });
    const methods = await insertContactMethods(ex, {
      accountId,
      contactId: contact.id,
      now,
      methods: input.methods ?? [],
    });
    return { contact, methods };
  }

  /** Loads the account's contacts among `ids` with their methods; missing or foreign ids are absent. */
  async loadContacts(
    ex: Executor,
    accountId: number,
    ids: number[],
  ): Promise<Map<number, ContactWithMethods>> {
    // Both queries at once (one round trip less); methods of ids outside the account are dropped below.
    const [contacts, methods] = await Promise.all([
      findContactsByIds(ex, accountId, ids),
      methodsOfContacts(ex, ids),
    ]);
    const out = new Map<number, ContactWithMethods>();
    for (const contact of contacts) out.set(contact.id, { contact, methods: [] });
    for (const m of methods) out.get(m.contact_id)?.methods.push(m);
    return out;
  }

  private async withMethods(
    ex: Executor,
    contacts: ContactWithMethods["contact"][],
  ): Promise<Map<number, ContactWithMethods>> {
    const methods = await methodsOfContacts(
      ex,
      contacts.map((c) => c.id),
    );
    const out = new Map<number, ContactWithMethods>();
    for (const contact of contacts) out.set(contact.id, { contact, methods: [] });
    for (const m of methods) out.get(m.contact_id)?.methods.push(m);
    return out;
  }

  /** Ids of the account's contacts whose name or a method value contains `text` (at most 500). */
  async idsMatching(accountId: number, text: string): Promise<number[]> {
    return findContactIdsMatching(this.database.db, accountId, containsPattern(text), 500);
  }

  /** GET /v1/contact/: one page of the account's contacts, newest first, and the total. */
  async list(auth: AuthContext, page: PageRequest): Promise<{ results: ContactView[]; count: number }> {
    const { db } = this.database;
    const [rows, count] = await Promise.all([
      listContacts(db, auth.accountId, { offset: page.offset, limit: page.pageSize }),
      countContacts(db, auth.accountId),
    ]);
    const loaded = await this.withMethods(db, rows);
    return { results: rows.map((r) => presentContact(r, loaded.get(r.id)?.methods ?? [])), count };
  }

  /** GET /v1/contact/{id}/: 404 for a missing or foreign id. */
  async get(auth: AuthContext, rawId: string): Promise<ContactView> {
    const item = await this.require(this.database.db, auth.accountId, rawId);
    return presentContact(item.contact, item.methods);
  }

  private async require(ex: Executor, accountId: number, rawId: string): Promise<ContactWithMethods> {
    const id = parseId(rawId);
    const contact = id === undefined ? undefined : await findContact(ex, accountId, id);
    if (!contact) throw notFound("Contact");
    return { contact, methods: await methodsOfContacts(ex, [contact.id]) };
  }

  /**
   * PATCH /v1/contact/{id}/: partial update. A given `contactmethod` list replaces the methods:
   * items with the id of one of the contact's methods update it, items without id are added, the
   * rest are deleted. Audited ABA-0030 with the changed field names.
   */
  async update(auth: AuthContext, rawId: string, body: unknown): Promise<ContactView> {
    const errors = new FieldErrors();
    const input = parseContactInput(requireObjectBody(body), errors);
    errors.throwIfAny();
    return this.database.db.transaction().execute(async (trx) => {
      const { contact, methods } = await this.require(trx, auth.accountId, rawId);
      const now = this.now();
      if (input.methods !== undefined) {
        const existing = new Map(methods.map((m) => [m.id, m]));
        const key = (body as Body).contactmethod !== undefined ? "contactmethod" : "contact_method";
        input.methods.forEach((m, i) => {
          if (m.id !== undefined && !existing.has(m.id))
            errors.add(`${key}.${i}.id`, Messages.invalidPk(m.id));
        });
        errors.throwIfAny();
        const kept = new Set<number>();
        for (const m of input.methods) {
          if (m.id === undefined || kept.has(m.id)) continue;
          kept.add(m.id);
          const old = existing.get(m.id)!;
          if (old.interface_class !== m.interfaceClass || old.value !== m.value) {
            await updateContactMethodRow(trx, m.id, {
              interfaceClass: m.interfaceClass,
              value: m.value,
              now,
            });
          }
        }
        await deleteContactMethodRows(
          trx,
          methods.filter((m) => !kept.has(m.id)).map((m) => m.id),
        );
        await insertContactMethods(trx, {
          accountId: auth.accountId,
          contactId: contact.id,
          now,
          methods: input.methods.filter((m) => m.id === undefined),
        });
      }
      await updateContactRow(trx, contact.id, { firstName: input.firstName, lastName: input.lastName, now });
      await this.audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.ENTITY_UPDATED,
        apiKeyId: auth.applicationId,
        relatedModel: "contact",
        relationKey: contact.id,
        value: JSON.stringify({ fields: contactFields(input) }),
      });
      const fresh = await this.require(trx, auth.accountId, String(contact.id));
      return presentContact(fresh.contact, fresh.methods);
    });
  }

  /**
   * DELETE /v1/contact/{id}/: 422 while the contact belongs to an open sent request (not draft,
   * not complete); otherwise deletes it with its methods and its links to drafts and complete
   * requests. Audited ABA-0020.
   */
  async delete(auth: AuthContext, rawId: string): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      const { contact } = await this.require(trx, auth.accountId, rawId);
      const openRequest = await this.usage.openSentRequestOf(trx, contact.id);
      if (openRequest !== undefined) {
        throw unprocessable(
          `This contact belongs to the open sent request ${openRequest}; it can be deleted once that request is complete or deleted.`,
        );
      }
      await deleteContactRow(trx, contact.id);
      await this.audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: auth.applicationId,
        relatedModel: "contact",
        relationKey: contact.id,
        value: JSON.stringify({ fields: [] }),
      });
    });
  }
}
