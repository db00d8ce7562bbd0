import type { ContactMethodRow, ContactRow, ContactWithMethods } from "./contacts.repository.js";

/** The API Contact Method object (spec: Contact Method). */
export interface ContactMethodView {
  id: number;
  interface_class: string;
  value: string;
  created: string;
  updated: string;
}

/** The API Contact object (spec: Contact); `contactmethod` is [] when the contact has none. */
export interface ContactView {
  id: number;
  first_name: string;
  last_name: string;
  contactmethod: ContactMethodView[];
  created: string;
  updated: string;
}

/** Allow-lists a contact method row into the API object. */
export function presentContactMethod(row: ContactMethodRow): ContactMethodView {
  return {
    id: row.id,
    interface_class: row.interface_class,
    value: row.value,
    created: row.created,
    updated: row.updated,
  };
}

/** Allow-lists a contact and its methods into the API object. */
export function presentContact(contact: ContactRow, methods: ContactMethodRow[]): ContactView {
  return {
    id: contact.id,
    first_name: contact.first_name,
    last_name: contact.last_name,
    contactmethod: methods.map(presentContactMethod),
    created: contact.created,
    updated: contact.updated,
  };
}

/** presentContact for a loaded ContactWithMethods. */
export function presentContactWithMethods(item: ContactWithMethods): ContactView {
  return presentContact(item.contact, item.methods);
}
