/**
 * Django's text filters as pure functions (https://docs.djangoproject.com/en/stable/ref/templates/builtins/),
 * plus the two value types the template engine passes between filters: SafeHtml and ZonedDateTime.
 */
import { type DateInput, formatDjangoDate, type Instant, toInstant } from "./django-date.js";
import { isValidTimeZone } from "./time-zones.js";

/**
 * Text that is already HTML-safe (escaped user data plus trusted markup). The engine prints it without
 * escaping; any other filter applied to it gets plain text back, which is escaped again on output.
 */
export class SafeHtml {
  readonly #html: string;

  constructor(html: string) {
    this.#html = html;
  }

  /** The HTML text. */
  toString(): string {
    return this.#html;
  }
}

/** An instant bound to an IANA zone, what the `timezone` filter returns; `date` formats it in that zone. */
export class ZonedDateTime {
  readonly #instant: Instant;
  readonly #timeZone: string;

  /** Throws RangeError for an unknown zone or an invalid date. */
  constructor(value: DateInput, timeZone: string) {
    if (!isValidTimeZone(timeZone)) throw new RangeError(`Unknown time zone: ${timeZone}`);
    this.#instant = toInstant(value);
    this.#timeZone = timeZone;
  }

  /** The point in time. */
  instant(): Instant {
    return this.#instant;
  }

  /** The IANA zone name. */
  timeZone(): string {
    return this.#timeZone;
  }

  /** Formats with Django date format characters in this value's zone. */
  format(format: string): string {
    return formatDjangoDate(this.#instant, format, this.#timeZone);
  }

  /** Django's default DATETIME_FORMAT ("N j, Y, P"), used when the value is printed as is. */
  toString(): string {
    return this.format(DEFAULT_DATETIME_FORMAT);
  }
}

/** Django's default DATE_FORMAT: the `date` filter's format when none is given. */
export const DEFAULT_DATE_FORMAT = "N j, Y";
/** Django's default DATETIME_FORMAT. */
export const DEFAULT_DATETIME_FORMAT = "N j, Y, P";

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#x27;",
};

/** Django's `escape`: replaces & < > " ' with entities (&amp; &lt; &gt; &quot; &#x27;). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/gu, (c) => HTML_ESCAPES[c]!);
}

/** Converts a template value to text as Liquid prints it: null/undefined → "", arrays joined, else String(). */
export function toText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(toText).join("");
  return String(value);
}

/** Python truthiness as Django's `default` sees it: None, False, 0, "", [] and {} are false. */
export function isDjangoFalsy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.keys(value).length === 0;
  }
  return false;
}

const CASED = /\p{Cased}/u;
// Characters whose title case differs from their upper case (Unicode digraphs).
const TITLE_CASE: Record<string, string> = {
  "\u01C4": "\u01C5",
  "\u01C5": "\u01C5",
  "\u01C6": "\u01C5",
  "\u01C7": "\u01C8",
  "\u01C8": "\u01C8",
  "\u01C9": "\u01C8",
  "\u01CA": "\u01CB",
  "\u01CB": "\u01CB",
  "\u01CC": "\u01CB",
  "\u01F1": "\u01F2",
  "\u01F2": "\u01F2",
  "\u01F3": "\u01F2",
};

function toTitleChar(ch: string): string {
  const special = TITLE_CASE[ch];
  if (special) return special;
  const upper = [...ch.toUpperCase()];
  // "ß" → "Ss", "ﬁ" → "Fi": only the first letter of an expansion is capital in title case.
  return upper[0]! + upper.slice(1).join("").toLowerCase();
}

/**
 * Django's `title`: Python's str.title() (each run of cased letters starts with a capital, the rest lower),
 * then a lower-case letter after an apostrophe ("they're") or a digit ("1st") is restored.
 */
export function titleCase(text: string): string {
  let out = "";
  let lowerRun = "";
  let previousCased = false;
  for (const ch of text) {
    if (previousCased) {
      lowerRun += ch;
    } else {
      // The run is lowered as a whole so a final sigma becomes "ς" as in Python.
      out += lowerRun.toLowerCase() + toTitleChar(ch);
      lowerRun = "";
    }
    previousCased = CASED.test(ch);
  }
  out += lowerRun.toLowerCase();
  return out
    .replace(/[a-z]'[A-Z]/gu, (m) => m.toLowerCase())
    .replace(/\p{Nd}[A-Z]/gu, (m) => m.toLowerCase());
}

// Django skips characters with a non-zero canonical combining class; nonspacing marks approximate that set.
const COMBINING = /^\p{Mn}$/u;
const ELLIPSIS = "\u2026";

/**
 * Django's `truncatechars:N`: NFC-normalizes, then if the text has more than N characters (combining marks
 * not counted) keeps N-1 of them and appends "…", so the result is at most N characters. N ≤ 0 gives "".
 */
export function truncateChars(text: string, length: number): string {
  if (length <= 0) return "";
  const chars = [...text.normalize("NFC")];
  const keep = length - 1;
  let counted = 0;
  let end: number | undefined;
  for (let i = 0; i < chars.length; i++) {
    if (COMBINING.test(chars[i]!)) continue;
    counted += 1;
    if (end === undefined && counted > keep) end = i;
    if (counted > length) return chars.slice(0, end ?? 0).join("") + ELLIPSIS;
  }
  return chars.join("");
}

/**
 * Django's `linebreaksbr`: normalizes CRLF/CR to LF, escapes the text (unless it is already SafeHtml),
 * then turns each newline into `<br>`. The result is SafeHtml so it is not escaped a second time.
 */
export function linebreaksbr(value: unknown): SafeHtml {
  const safe = value instanceof SafeHtml;
  const text = toText(value).replace(/\r\n|\r/gu, "\n");
  return new SafeHtml((safe ? text : escapeHtml(text)).replaceAll("\n", "<br>"));
}
