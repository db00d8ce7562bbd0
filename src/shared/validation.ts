/**
 * Input checking shared by the API's features: a collector of field errors in the spec's
 * `{"field": ["message"]}` shape, typed readers that accept what real clients send (numbers and
 * numeric strings for integers, "true"/"false" for booleans), and the email / E.164 rules.
 */
import { ValidationError } from "./errors.js";
import { parseId } from "./ids.js";

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
  phone: "Enter a valid phone number in E.164 format: + then country code and number, at most 15 digits.",
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

/**
 * Normalises a phone number to E.164 (`+` then 2..15 digits, no leading 0 country code); spaces,
 * dashes, dots and parentheses are removed first. Returns undefined when it is not valid.
 */
export function normaliseE164(value: string): string | undefined {
  const compact = value.replace(/[\s\-.()]/g, "");
  return /^\+[1-9]\d{1,14}$/.test(compact) ? compact : undefined;
}
