import type { Config } from "../../config/config.js";
import { parseId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import {
  type Body,
  type FieldErrors,
  Messages,
  readBoolean,
  readInteger,
  readReference,
  readString,
} from "../../shared/validation.js";
import { checkCallbackUrl } from "../callbacks/index.js";
import { type ContactInput, checkMethodValue, parseContactInput } from "../contacts/index.js";

/** A `contact` item of a request body: a reference to an existing contact, or a new one. */
export type ContactItem = { ref: number; index: number } | { create: ContactInput; index: number };

/** Request fields as accepted from a client; absent fields are undefined. */
export interface RequestInput {
  type?: "push" | "pull";
  message?: string;
  requesterPrivatenotes?: string;
  isDraft?: boolean;
  shortMessage?: string;
  longMessageSubject?: string;
  longMessage?: string;
  callbackUrl?: string | null;
  requesterId?: number | null;
  emailTemplateSlug?: string | null;
  tfaSendTo?: "email" | "sms" | null;
  tfaSendToValue?: string | null;
  /** Lower-case extensions without dots; null = any. */
  allowedExtensions?: string[] | null;
  maxFileBytes?: number | null;
  /** Stored timestamp form. */
  expiresAt?: string | null;
  contacts?: ContactItem[];
}

/** Field length limits of a request (documented in docs/requests.md). */
export const RequestLimits = {
  message: 5000,
  requester_privatenotes: 5000,
  short_message: 160,
  long_message_subject: 255,
  long_message: 20_000,
  callback_url: 2048,
  email_template_slug: 100,
  tfa_send_to_value: 254,
  contacts: 50,
  allowed_extensions: 50,
} as const;

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

function readChoice<T extends string>(
  body: Body,
  key: string,
  choices: readonly T[],
  errors: FieldErrors,
): T | null | undefined {
  const raw = readString(body, key, errors, { max: 20, nullable: true });
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return null;
  const v = raw.toLowerCase();
  if ((choices as readonly string[]).includes(v)) return v as T;
  errors.add(key, `"${raw}" is not a valid choice. Choose ${choices.join(" or ")}.`);
  return undefined;
}

function readExtensions(body: Body, errors: FieldErrors): string[] | null | undefined {
  const raw = body.allowed_extensions;
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return null;
  const items = typeof raw === "string" ? [raw] : raw;
  if (!Array.isArray(items)) {
    errors.add("allowed_extensions", 'Expected a list of extensions such as ["pdf", "jpg"].');
    return undefined;
  }
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== "string") {
      errors.add("allowed_extensions", "Each extension must be a string.");
      return undefined;
    }
    for (const part of item.split(",")) {
      const ext = part.trim().toLowerCase().replace(/^\.+/, "");
      if (ext === "") continue;
      if (!/^[a-z0-9]{1,16}$/.test(ext)) {
        errors.add(
          "allowed_extensions",
          `"${part.trim()}" is not a valid extension (letters and digits, at most 16).`,
        );
        return undefined;
      }
      if (!out.includes(ext)) out.push(ext);
    }
  }
  if (out.length > RequestLimits.allowed_extensions) {
    errors.add(
      "allowed_extensions",
      `Ensure this list has no more than ${RequestLimits.allowed_extensions} items.`,
    );
    return undefined;
  }
  return out.length === 0 ? null : out;
}

function readContacts(body: Body, errors: FieldErrors): ContactItem[] | undefined {
  const raw = body.contact;
  if (raw === undefined) return undefined;
  if (raw === null) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > RequestLimits.contacts) {
    errors.add("contact", `Ensure this list has no more than ${RequestLimits.contacts} items.`);
    return undefined;
  }
  const out: ContactItem[] = [];
  list.forEach((item, index) => {
    if (typeof item === "number" || typeof item === "string") {
      const id = parseId(item);
      if (id === undefined) errors.add("contact", Messages.invalidPk(item));
      else out.push({ ref: id, index });
      return;
    }
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      errors.add(`contact.${index}`, Messages.notObject);
      return;
    }
    const obj = item as Body;
    if (obj.id !== undefined && obj.id !== null) {
      const id = parseId(obj.id);
      if (id === undefined) errors.add("contact", Messages.invalidPk(obj.id));
      else out.push({ ref: id, index });
      return;
    }
    out.push({ create: parseContactInput(obj, errors, `contact.${index}.`), index });
  });
  return out;
}

/**
 * Reads a request body (create or PATCH) into a RequestInput, recording field errors. Accepts the
 * aliases `contact_method` (inside contacts), `requestor_privatenotes` and `is_sending`. `now` is
 * the clock's time (expires_at must be later). Cross-field rules needing the stored request (two-
 * factor consistency) are checked by checkTfa on the merged values.
 */
export function parseRequestInput(
  body: Body,
  errors: FieldErrors,
  config: Pick<Config, "FERRY_ENVIRONMENT" | "ALLOW_HTTP_CALLBACKS_IN_LIVE">,
  now: Date,
): RequestInput {
  const out: RequestInput = {};
  const type = readChoice(body, "type", ["push", "pull"] as const, errors);
  if (type === null) errors.add("type", Messages.notNull);
  else if (type !== undefined) out.type = type;
  if (out.type === undefined && body.type === undefined) {
    const sending = readBoolean(body, "is_sending", errors);
    if (sending !== undefined) out.type = sending ? "push" : "pull";
  }
  const text = (key: keyof typeof RequestLimits, field = key) =>
    readString(body, key, errors, { max: RequestLimits[key], nullable: true, field });
  const message = text("message");
  if (message !== undefined) out.message = message ?? "";
  const notesKey =
    body.requester_privatenotes !== undefined ? "requester_privatenotes" : "requestor_privatenotes";
  const notes = readString(body, notesKey, errors, {
    max: RequestLimits.requester_privatenotes,
    nullable: true,
  });
  if (notes !== undefined) out.requesterPrivatenotes = notes ?? "";
  const draft = readBoolean(body, "is_draft", errors);
  if (draft !== undefined) out.isDraft = draft;
  const short = text("short_message");
  if (short !== undefined) out.shortMessage = short ?? "";
  const subject = text("long_message_subject");
  if (subject !== undefined) out.longMessageSubject = subject ?? "";
  const long = text("long_message");
  if (long !== undefined) out.longMessage = long ?? "";
  const callback = text("callback_url");
  if (callback === null || callback === "") out.callbackUrl = null;
  else if (callback !== undefined) {
    const checked = checkCallbackUrl(callback, config, errors);
    if (checked !== undefined) out.callbackUrl = checked;
  }
  const requester = readReference(body, "requester", errors);
  if (requester !== undefined) out.requesterId = requester;
  const slug = text("email_template_slug");
  if (slug === null || slug === "") out.emailTemplateSlug = null;
  else if (slug !== undefined) {
    if (/^[A-Za-z0-9_-]+$/.test(slug)) out.emailTemplateSlug = slug;
    else errors.add("email_template_slug", "Enter a valid slug: letters, digits, underscores or hyphens.");
  }
  const tfa = readChoice(body, "tfa_send_to", ["email", "sms"] as const, errors);
  if (tfa !== undefined) out.tfaSendTo = tfa;
  const tfaValue = text("tfa_send_to_value");
  if (tfaValue !== undefined) out.tfaSendToValue = tfaValue === "" ? null : tfaValue;
  const extensions = readExtensions(body, errors);
  if (extensions !== undefined) out.allowedExtensions = extensions;
  const maxBytes = readInteger(body, "max_file_bytes", errors, {
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    nullable: true,
  });
  if (maxBytes !== undefined) out.maxFileBytes = maxBytes;
  const expires = readString(body, "expires_at", errors, { max: 40, nullable: true });
  if (expires === null || expires === "") out.expiresAt = null;
  else if (expires !== undefined) {
    const date = ISO_DATETIME.test(expires)
      ? new Date(/[zZ]|[+-]\d{2}(:?\d{2})?$/.test(expires.slice(10)) ? expires : `${expires}Z`)
      : undefined;
    if (!date || Number.isNaN(date.getTime())) {
      errors.add(
        "expires_at",
        "Datetime has wrong format. Use ISO 8601: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][Z|+HH:MM].",
      );
    } else if (date.getTime() <= now.getTime()) {
      errors.add("expires_at", "Ensure this datetime is in the future.");
    } else out.expiresAt = toTimestamp(date);
  }
  const contacts = readContacts(body, errors);
  if (contacts !== undefined) out.contacts = contacts;
  return out;
}

/**
 * The two-factor rule on the values a request will have: a channel needs a valid destination
 * (email address or E.164 number); a destination needs a channel. Returns the normalised value.
 */
export function checkTfa(
  sendTo: "email" | "sms" | null,
  value: string | null,
  errors: FieldErrors,
): string | null | undefined {
  if (sendTo === null) {
    if (value) errors.add("tfa_send_to", "Set tfa_send_to (email or sms) when tfa_send_to_value is given.");
    return value === null ? null : undefined;
  }
  if (!value) {
    errors.add("tfa_send_to_value", `This field is required when tfa_send_to is ${sendTo}.`);
    return undefined;
  }
  return checkMethodValue(sendTo, value, errors, "tfa_send_to_value");
}
