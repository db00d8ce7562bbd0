import { createRequire } from "node:module";
import type { PhoneNumber } from "libphonenumber-js/max";
/**
 * Input checking shared by the API's features: a collector of field errors in the spec's
 * `{"field": ["message"]}` shape, typed readers that accept what real clients send (numbers and
 * numeric strings for integers, "true"/"false" for booleans), and the email / E.164 rules.
 */
import { unprocessable, ValidationError } from "./errors.js";
import { parseId } from "./ids.js";

type PhoneLibrary = typeof import("libphonenumber-js/max");
let phoneLibrary: PhoneLibrary | undefined;

/** libphonenumber-js with its full metadata, loaded with the first phone number read (about 2 MB). */
function phones(): PhoneLibrary {
  phoneLibrary ??= createRequire(import.meta.url)("libphonenumber-js/max") as PhoneLibrary;
  return phoneLibrary;
}

/** Collects messages per field and throws them together as one 400 ValidationError. */
export class FieldErrors {
  readonly fields: Record<string, string[]> = {};

  /** Records `message` for `field` (a dotted path such as `contact.0.contactmethod.1.value`). */
  add(field: string, message: string): void {
    const list = this.fields[field] ?? [];
    if (!list.includes(message)) list.push(message);
    this.fields[field] = list;
  }

  /** True when at least one message was recorded. */
  get any(): boolean {
    return Object.keys(this.fields).length > 0;
  }

  /** Throws ValidationError (400) when any message was recorded. */
  throwIfAny(): void {
    if (this.any) throw new ValidationError(this.fields);
  }
}

/** The DRF-style messages used across the API. */
export const Messages = {
  required: "This field is required.",
  blank: "This field may not be blank.",
  notNull: "This field may not be null.",
  notString: "Not a valid string.",
  notBoolean: "Must be a valid boolean.",
  notInteger: "A valid integer is required.",
  notList: "Expected a list of items.",
  notObject: "Expected a JSON object.",
  email: "Enter a valid email address.",
  tooLong: (max: number) => `Ensure this field has no more than ${max} characters.`,
  invalidPk: (raw: unknown) => `Invalid pk "${String(raw)}" - object does not exist.`,
} as const;

/** A JSON object body (anything else is a 400 naming non_field_errors). */
export type Body = Record<string, unknown>;

/** Checks that a parsed body is a JSON object; throws 400 otherwise. */
export function requireObjectBody(body: unknown): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    const got = Array.isArray(body) ? "list" : typeof body;
    throw new ValidationError({ non_field_errors: [`Invalid data. Expected a dictionary, but got ${got}.`] });
  }
  return body as Body;
}

/** Options of readString. */
export interface StringRule {
  max: number;
  /** Absent is an error ("This field is required."). */
  required?: boolean;
  /** Empty (after trimming) is an error. */
  notBlank?: boolean;
  /** null is accepted (returned as null); otherwise null is "may not be null". */
  nullable?: boolean;
  /** The field name used in messages (default: key). */
  field?: string;
}

/**
 * Reads a string field: undefined when absent, null when null and allowed; numbers are accepted
 * as their decimal text. Strings are trimmed. Records an error and returns undefined otherwise.
 */
export function readString(body: Body, key: string, errors: FieldErrors, rule: StringRule) {
  const field = rule.field ?? key;
  const raw = body[key];
  if (raw === undefined) {
    if (rule.required) errors.add(field, Messages.required);
    return undefined;
  }
  if (raw === null) {
    if (rule.nullable && !rule.required) return null;
    errors.add(field, Messages.notNull);
    return undefined;
  }
  let value: string;
  if (typeof raw === "string") value = raw.trim();
  else if (typeof raw === "number" && Number.isFinite(raw)) value = String(raw);
  else {
    errors.add(field, Messages.notString);
    return undefined;
  }
  if (value === "" && (rule.notBlank || rule.required)) {
    errors.add(field, Messages.blank);
    return undefined;
  }
  if (value.length > rule.max) {
    errors.add(field, Messages.tooLong(rule.max));
    return undefined;
  }
  return value;
}

/** Reads a boolean: true/false, 1/0, or their strings ("true", "False", "1"...); undefined when absent. */
export function readBoolean(body: Body, key: string, errors: FieldErrors, field = key): boolean | undefined {
  const raw = body[key];
  if (raw === undefined) return undefined;
  if (typeof raw === "boolean") return raw;
  if (raw === 1 || raw === 0) return raw === 1;
  if (typeof raw === "string") {
    const v = raw.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(v)) return true;
    if (["false", "0", "no", "off"].includes(v)) return false;
  }
  errors.add(field, Messages.notBoolean);
  return undefined;
}

/**
 * Reads an integer given as a number or numeric string, within [min, max]; null when null and
 * `nullable`; undefined when absent or invalid (an error is recorded when invalid).
 */
export function readInteger(
  body: Body,
  key: string,
  errors: FieldErrors,
  rule: { min: number; max: number; nullable?: boolean; field?: string },
): number | null | undefined {
  const field = rule.field ?? key;
  const raw = body[key];
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") {
    if (rule.nullable) return null;
    errors.add(field, Messages.notNull);
    return undefined;
  }
  const n =
    typeof raw === "number" ? raw : typeof raw === "string" && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) {
    errors.add(field, Messages.notInteger);
    return undefined;
  }
  if (n < rule.min) errors.add(field, `Ensure this value is greater than or equal to ${rule.min}.`);
  else if (n > rule.max) errors.add(field, `Ensure this value is less than or equal to ${rule.max}.`);
  else return n;
  return undefined;
}

/**
 * Reads a reference to an existing row: `{ "id": 5 }`, `5` or `"5"` (foreign keys arrive as numbers or numeric strings). Returns the id,
 * null for an explicit null, undefined when absent; records "Invalid pk" for anything else.
 */
export function readReference(body: Body, key: string, errors: FieldErrors): number | null | undefined {
  const raw = body[key];
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return null;
  const isObject = typeof raw === "object" && !Array.isArray(raw);
  if (isObject && (raw as Body).id === undefined) {
    errors.add(key, 'Expected {"id": <integer>} of an existing object.');
    return undefined;
  }
  const candidate = isObject ? (raw as Body).id : raw;
  const id = parseId(candidate);
  if (id === undefined) {
    errors.add(
      key,
      Messages.invalidPk(typeof candidate === "object" ? JSON.stringify(candidate) : candidate),
    );
    return undefined;
  }
  return id;
}

const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** True for an address of the form local@domain.tld (dot-atom local part, DNS labels, ≤ 254 chars). */
export function isValidEmail(value: string): boolean {
  if (value.length > 254) return false;
  const at = value.lastIndexOf("@");
  if (at <= 0) return false;
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split(".");
  if (local.length > 64 || !EMAIL_LOCAL.test(local)) return false;
  if (labels.length < 2) return false;
  if (!labels.every((l) => DOMAIN_LABEL.test(l))) return false;
  return /^[A-Za-z]{2,63}$|^xn--[A-Za-z0-9-]+$/.test(labels[labels.length - 1]!);
}

/** A phone number read as E.164, or why it cannot be. */
export type PhoneReading = { e164: string } | { error: string };

const PHONE_EXAMPLE = "e.g. +44 7700 900123";

/**
 * Reads a phone number written in international form, in any usual spelling (spaces, dashes, dots,
 * parentheses, a national trunk prefix such as "+44 (0)20", or 00 instead of +), and checks it
 * against the lengths its country's number plan allows (libphonenumber-js, full metadata). Numbers
 * reserved for fiction and tests (+1 555 01xx, +44 7700 900xxx) are accepted: integrators test with
 * them. A number without its country code cannot be read: Ferry serves recipients in every country
 * and guesses none.
 */
export function readPhone(value: string): PhoneReading {
  const text = value.trim().replace(/^00(?=\s*[1-9])/, "+");
  if (!/\d/.test(text)) return { error: `Enter a phone number with its country code, ${PHONE_EXAMPLE}.` };
  if (!text.startsWith("+")) {
    return {
      error: `Start the number with + and its country code, ${PHONE_EXAMPLE}; numbers without a country code are not accepted.`,
    };
  }
  const { ParseError, parsePhoneNumberWithError, validatePhoneNumberLength } = phones();
  let parsed: PhoneNumber;
  try {
    parsed = parsePhoneNumberWithError(text);
  } catch (error) {
    const reason = error instanceof ParseError ? error.message : "NOT_A_NUMBER";
    if (reason === "INVALID_COUNTRY") return { error: "Unknown country calling code." };
    if (reason === "TOO_LONG") return { error: "The number has too many digits (E.164 allows at most 15)." };
    return { error: `Enter a phone number with its country code, ${PHONE_EXAMPLE}.` };
  }
  const country = `+${parsed.countryCallingCode}`;
  const length = validatePhoneNumberLength(parsed.number);
  if (length === "TOO_SHORT") return { error: `The number is too short for country code ${country}.` };
  if (length === "TOO_LONG") return { error: `The number is too long for country code ${country}.` };
  if (length === "INVALID_LENGTH")
    return { error: `The number has a wrong number of digits for country code ${country}.` };
  if (!parsed.isPossible()) return { error: `Not a valid phone number for country code ${country}.` };
  return { e164: parsed.number };
}

/** Number types that cannot receive SMS, as libphonenumber-js names them, and how to say so. */
const NOT_FOR_SMS: Record<string, string> = {
  FIXED_LINE: "a landline (fixed-line) number",
  TOLL_FREE: "a toll-free number",
  PREMIUM_RATE: "a premium-rate number",
  SHARED_COST: "a shared-cost number",
  UAN: "a universal access number",
  VOICEMAIL: "a voicemail access number",
};

/**
 * Throws 422 when the number plan says `e164` (a valid number, see readPhone) is of a type that
 * cannot receive SMS: a landline, toll-free, premium-rate... Mobile numbers, numbers that may be
 * either (the North American plan) and numbers whose type the metadata cannot tell are accepted.
 * `field` names the field in the message.
 */
export function requireSmsCapable(e164: string, field: string): void {
  const type = phones().parsePhoneNumberWithError(e164).getType();
  const kind = type === undefined ? undefined : NOT_FOR_SMS[type];
  if (kind)
    throw unprocessable(`${field}: the number is ${kind}, which cannot receive SMS. Give a mobile number.`);
}

/** The E.164 form of a phone number (see readPhone), or undefined when it is not valid. */
export function normaliseE164(value: string): string | undefined {
  const reading = readPhone(value);
  return "e164" in reading ? reading.e164 : undefined;
}
