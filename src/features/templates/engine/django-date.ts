/**
 * Django's `date` template filter format (https://docs.djangoproject.com/en/stable/ref/templates/builtins/#date),
 * written from Django's documented behaviour. Every field is computed in an IANA time zone via `Intl`, so
 * daylight saving changes are honoured. Spec: "Formats" (email templates, date format characters).
 */
import { isDaylightSavingTime, utcMidnight, zoneAbbreviation, zoneOffsetSeconds } from "./time-zones.js";

/** A point in time with microsecond precision: JS dates stop at milliseconds, Ferry timestamps do not. */
export interface Instant {
  /** Milliseconds since the Unix epoch (integer). */
  readonly epochMs: number;
  /** Microseconds beyond `epochMs`, 0 to 999. */
  readonly extraMicros: number;
}

/** What `formatDjangoDate` accepts: a Date, an ISO 8601 string or an already parsed Instant. */
export type DateInput = Date | string | Instant;

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;
// Associated Press style, as Django's MONTHS_AP.
const MONTHS_AP = [
  "Jan.",
  "Feb.",
  "March",
  "April",
  "May",
  "June",
  "July",
  "Aug.",
  "Sept.",
  "Oct.",
  "Nov.",
  "Dec.",
] as const;
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;

const DAY_MS = 86_400_000;

// Django's re_formatchars: a format character not directly preceded by a backslash.
const FORMAT_CHARS = /(?<!\\)([aAbcdDeEfFgGhHiIjlLmMnNoOPrsStTUuwWyYzZ])/u;
// Django's re_escaped: a backslash makes the next character literal (not across a newline).
const ESCAPED = /\\([^\n])/gu;

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/u;

/**
 * Parses a Date or an ISO 8601 string (`2026-03-08T06:59:59.123456Z`, `2026-03-08`, `...+01:00`) to an
 * Instant, keeping microseconds. A string without an offset is read as UTC. Throws RangeError when invalid.
 */
export function toInstant(value: DateInput): Instant {
  if (value instanceof Date) {
    const ms = value.getTime();
    if (!Number.isFinite(ms)) throw new RangeError("Invalid date");
    return { epochMs: ms, extraMicros: 0 };
  }
  if (typeof value === "string") return parseIsoString(value);
  if (isInstant(value)) return value;
  throw new RangeError("Not a date");
}

function isInstant(value: unknown): value is Instant {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    Number.isInteger(v["epochMs"]) &&
    Number.isInteger(v["extraMicros"]) &&
    (v["extraMicros"] as number) >= 0 &&
    (v["extraMicros"] as number) < 1000
  );
}

function parseIsoString(text: string): Instant {
  const m = ISO_PATTERN.exec(text.trim());
  if (!m) throw new RangeError(`Invalid ISO 8601 date: ${JSON.stringify(text)}`);
  const [, ys, mos, ds, hs = "0", mis = "0", ss = "0", frac = "", zone] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (
    year < 1 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw new RangeError(`Invalid ISO 8601 date: ${JSON.stringify(text)}`);
  }
  const micros = Number(frac.padEnd(6, "0").slice(0, 6));
  let offsetSeconds = 0;
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || "0");
    if (oh > 23 || om > 59) throw new RangeError(`Invalid ISO 8601 offset: ${JSON.stringify(text)}`);
    offsetSeconds = sign * (oh * 3600 + om * 60);
  }
  const epochMs =
    utcMidnight(year, month, day) +
    ((hour * 60 + minute) * 60 + second - offsetSeconds) * 1000 +
    Math.floor(micros / 1000);
  return { epochMs, extraMicros: micros % 1000 };
}

/**
 * Formats `value` with Django's `date` filter format characters, in the IANA zone `timeZone`.
 * Unknown characters are copied; `\x` prints x. Throws RangeError for an invalid date or time zone.
 * `z` is the day of the year 1 to 366: Django's code has always returned 1 for 1 January (the older
 * "0 to 365" wording, repeated in the spec, described the same code); Django ≥ 4 documents 1 to 366.
 * `e` and `T` print the zone's abbreviation (see `zoneAbbreviation`), as Django's tzname() does.
 */
export function formatDjangoDate(value: DateInput, format: string, timeZone = "UTC"): string {
  const wall = wallTime(toInstant(value), timeZone);
  const pieces = format.split(FORMAT_CHARS);
  let out = "";
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!;
    if (i % 2 === 1) out += formatChar(piece, wall);
    else if (piece) out += piece.replace(ESCAPED, "$1");
  }
  return out;
}

/** Local fields of an instant in a zone; `weekday` 0 = Sunday, `offsetSeconds` east of Greenwich. */
interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  micro: number;
  weekday: number;
  offsetSeconds: number;
  instant: Instant;
  timeZone: string;
}

function wallTime(instant: Instant, timeZone: string): WallTime {
  const offsetSeconds = zoneOffsetSeconds(instant.epochMs, timeZone);
  const local = new Date(instant.epochMs + offsetSeconds * 1000);
  const year = local.getUTCFullYear();
  if (year < 1 || year > 9999) throw new RangeError("Date out of range (years 1 to 9999)");
  return {
    year,
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    micro: local.getUTCMilliseconds() * 1000 + instant.extraMicros,
    weekday: local.getUTCDay(),
    offsetSeconds,
    instant,
    timeZone,
  };
}

function formatChar(c: string, w: WallTime): string {
  switch (c) {
    case "a":
      return w.hour > 11 ? "p.m." : "a.m.";
    case "A":
      return w.hour > 11 ? "PM" : "AM";
    case "b":
      return MONTHS[w.month - 1]!.slice(0, 3).toLowerCase();
    case "c":
      return isoFormat(w);
    case "d":
      return pad(w.day, 2);
    case "D":
      return WEEKDAYS[w.weekday]!.slice(0, 3);
    case "e":
      // Django prints the aware datetime's tzname(): the zone's abbreviation, as `T` does.
      return zoneAbbreviation(w.instant.epochMs, w.timeZone);
    case "E":
    case "F":
      return MONTHS[w.month - 1]!;
    case "f":
      return twelveHour(w);
    case "g":
      return String(hour12(w.hour));
    case "G":
      return String(w.hour);
    case "h":
      return pad(hour12(w.hour), 2);
    case "H":
      return pad(w.hour, 2);
    case "i":
      return pad(w.minute, 2);
    case "I":
      return isDaylightSavingTime(w.instant.epochMs, w.timeZone) ? "1" : "0";
    case "j":
      return String(w.day);
    case "l":
      return WEEKDAYS[w.weekday]!;
    case "L":
      return isLeapYear(w.year) ? "True" : "False";
    case "m":
      return pad(w.month, 2);
    case "M":
      return MONTHS[w.month - 1]!.slice(0, 3);
    case "n":
      return String(w.month);
    case "N":
      return MONTHS_AP[w.month - 1]!;
    case "o":
      return String(isoWeek(w.year, w.month, w.day).year);
    case "O":
      return compactOffset(w.offsetSeconds);
    case "P":
      if (w.minute === 0 && w.hour === 0) return "midnight";
      if (w.minute === 0 && w.hour === 12) return "noon";
      return `${twelveHour(w)} ${w.hour > 11 ? "p.m." : "a.m."}`;
    case "r":
      return (
        `${WEEKDAYS[w.weekday]!.slice(0, 3)}, ${pad(w.day, 2)} ${MONTHS[w.month - 1]!.slice(0, 3)} ` +
        `${pad(w.year, 4)} ${pad(w.hour, 2)}:${pad(w.minute, 2)}:${pad(w.second, 2)} ` +
        compactOffset(w.offsetSeconds, true)
      );
    case "s":
      return pad(w.second, 2);
    case "S":
      return ordinalSuffix(w.day);
    case "t":
      return String(daysInMonth(w.year, w.month));
    case "T":
      return zoneAbbreviation(w.instant.epochMs, w.timeZone);
    case "u":
      return pad(w.micro, 6);
    case "U":
      return String(Math.trunc(w.instant.epochMs / 1000));
    case "w":
      return String(w.weekday);
    case "W":
      return String(isoWeek(w.year, w.month, w.day).week);
    case "y":
      return pad(w.year % 100, 2);
    case "Y":
      return pad(w.year, 4);
    case "z":
      return String(dayOfYear(w.year, w.month, w.day));
    case "Z":
      return String(w.offsetSeconds);
    default:
      return c;
  }
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function hour12(hour: number): number {
  return hour % 12 || 12;
}

// Django's `f`: "1", "1:30".
function twelveHour(w: WallTime): string {
  const h = hour12(w.hour);
  return w.minute ? `${h}:${pad(w.minute, 2)}` : String(h);
}

function ordinalSuffix(day: number): string {
  if (day === 11 || day === 12 || day === 13) return "th";
  switch (day % 10) {
    case 1:
      return "st";
    case 2:
      return "nd";
    case 3:
      return "rd";
    default:
      return "th";
  }
}

// "+0100"; with `withSeconds`, a non-zero seconds part is appended as Python's %z does (RFC 5322 `r`).
function compactOffset(offsetSeconds: number, withSeconds = false): string {
  const sign = offsetSeconds < 0 ? "-" : "+";
  const abs = Math.abs(offsetSeconds);
  const base = `${sign}${pad(Math.floor(abs / 3600), 2)}${pad(Math.floor(abs / 60) % 60, 2)}`;
  return withSeconds && abs % 60 ? base + pad(abs % 60, 2) : base;
}

// Python's datetime.isoformat(): microseconds only when non-zero, offset as +HH:MM[:SS].
function isoFormat(w: WallTime): string {
  const date = `${pad(w.year, 4)}-${pad(w.month, 2)}-${pad(w.day, 2)}`;
  const time = `${pad(w.hour, 2)}:${pad(w.minute, 2)}:${pad(w.second, 2)}${w.micro ? `.${pad(w.micro, 6)}` : ""}`;
  const sign = w.offsetSeconds < 0 ? "-" : "+";
  const abs = Math.abs(w.offsetSeconds);
  let offset = `${sign}${pad(Math.floor(abs / 3600), 2)}:${pad(Math.floor(abs / 60) % 60, 2)}`;
  if (abs % 60) offset += `:${pad(abs % 60, 2)}`;
  return `${date}T${time}${offset}`;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  const lengths = [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return lengths[month - 1]!;
}

function dayOfYear(year: number, month: number, day: number): number {
  return (utcMidnight(year, month, day) - utcMidnight(year, 1, 1)) / DAY_MS + 1;
}

// ISO 8601: weeks start on Monday; week 1 is the week holding the year's first Thursday.
function isoWeek(year: number, month: number, day: number): { year: number; week: number } {
  const date = utcMidnight(year, month, day);
  const isoWeekday = ((new Date(date).getUTCDay() + 6) % 7) + 1;
  const thursday = date + (4 - isoWeekday) * DAY_MS;
  const isoYear = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - utcMidnight(isoYear, 1, 1)) / DAY_MS / 7) + 1;
  return { year: isoYear, week };
}
