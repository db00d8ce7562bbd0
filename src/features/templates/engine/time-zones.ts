/**
 * IANA time zone facts via `Intl`: offsets, daylight saving and tz-database-style abbreviations, for the
 * Django date format characters O, Z, I and T.
 */

/** Milliseconds since the epoch of 00:00 UTC on a proleptic Gregorian date (years 0-99 are not 19xx). */
export function utcMidnight(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime();
}

// Formatter caches are keyed by caller-supplied zone names, so they are bounded.
const MAX_CACHED_FORMATTERS = 500;
const wallFormatters = new Map<string, Intl.DateTimeFormat>();

function remember(cache: Map<string, Intl.DateTimeFormat>, key: string, f: Intl.DateTimeFormat): void {
  if (cache.size >= MAX_CACHED_FORMATTERS) cache.clear();
  cache.set(key, f);
}

function wallFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = wallFormatters.get(timeZone);
  if (!f) {
    // Throws RangeError for an unknown zone.
    f = new Intl.DateTimeFormat("en-US-u-ca-gregory-nu-latn", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    remember(wallFormatters, timeZone, f);
  }
  return f;
}

/** Offset of `timeZone` from UTC at `epochMs`, in seconds east of Greenwich (-05:00 → -18000). */
export function zoneOffsetSeconds(epochMs: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of wallFormatter(timeZone).formatToParts(new Date(epochMs))) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  const wallSeconds =
    utcMidnight(fields["year"]!, fields["month"]!, fields["day"]!) / 1000 +
    fields["hour"]! * 3600 +
    fields["minute"]! * 60 +
    fields["second"]!;
  return wallSeconds - Math.floor(epochMs / 1000);
}

/** True when daylight saving time is in force in `timeZone` at `epochMs` (Django's `I`). */
export function isDaylightSavingTime(epochMs: number, timeZone: string): boolean {
  // In force when the offset is above the smaller of the year's January and July offsets.
  const year = new Date(epochMs).getUTCFullYear();
  const jan = zoneOffsetSeconds(utcMidnight(year, 1, 1), timeZone);
  const jul = zoneOffsetSeconds(utcMidnight(year, 7, 1), timeZone);
  return jan !== jul && zoneOffsetSeconds(epochMs, timeZone) > Math.min(jan, jul);
}

// tz database abbreviations (standard, daylight) of common zones that ICU has no English short name for,
// or names differently; keyed by ICU's canonical zone id.
const TZDATA_ABBREVIATIONS: Record<string, readonly [string, string?]> = {
  "Asia/Tokyo": ["JST"],
  "Asia/Seoul": ["KST"],
  "Asia/Shanghai": ["CST"],
  "Asia/Taipei": ["CST"],
  "Asia/Macau": ["CST"],
  "Asia/Karachi": ["PKT"],
  "Asia/Jakarta": ["WIB"],
  "Asia/Pontianak": ["WIB"],
  "Asia/Makassar": ["WITA"],
  "Asia/Jayapura": ["WIT"],
  "Asia/Manila": ["PST", "PDT"],
  "Asia/Jerusalem": ["IST", "IDT"],
  "Asia/Dubai": ["+04"],
  "Europe/Moscow": ["MSK"],
  "Europe/Simferopol": ["MSK"],
  "Pacific/Guam": ["ChST"],
  "Pacific/Saipan": ["ChST"],
  "Pacific/Pago_Pago": ["SST"],
  "America/Havana": ["CST", "CDT"],
};
// ICU folds these into "UTC"; the tz database calls them GMT.
const GMT_ALIASES = new Set([
  "GMT",
  "Etc/GMT",
  "GMT0",
  "Etc/GMT0",
  "GMT+0",
  "Etc/GMT+0",
  "GMT-0",
  "Etc/GMT-0",
  "Greenwich",
  "Etc/Greenwich",
]);

// English locales tried in turn for a zone's abbreviation: ICU only names a zone in a locale of its region.
const ABBREVIATION_LOCALES = [
  "en-US",
  "en-GB",
  "en-IE",
  "en-CA",
  "en-AU",
  "en-NZ",
  "en-IN",
  "en-ZA",
  "en-HK",
];
const NUMERIC_NAME = /^(?:GMT|UTC)[+\-\u2212]/u;
const abbreviationFormatters = new Map<string, Intl.DateTimeFormat>();

/**
 * The abbreviation of `timeZone` at `epochMs` as the tz database spells it (EST/EDT, GMT/BST, CET/CEST, JST,
 * UTC): a small table of zones ICU does not name in English, else ICU's English short names, else the tz
 * database's numeric style ("+04", "+0530", "-03"). Zones outside the table may differ from tzdata.
 */
export function zoneAbbreviation(epochMs: number, timeZone: string): string {
  if (GMT_ALIASES.has(timeZone)) return "GMT";
  const canonical = wallFormatter(timeZone).resolvedOptions().timeZone;
  const known = TZDATA_ABBREVIATIONS[canonical];
  if (known) return (known[1] && isDaylightSavingTime(epochMs, timeZone) ? known[1] : known[0]) as string;
  const date = new Date(epochMs);
  for (const locale of ABBREVIATION_LOCALES) {
    const key = `${locale} ${timeZone}`;
    let f = abbreviationFormatters.get(key);
    if (!f) {
      f = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: "short" });
      remember(abbreviationFormatters, key, f);
    }
    const name = f.formatToParts(date).find((p) => p.type === "timeZoneName")?.value;
    if (name && !NUMERIC_NAME.test(name)) return name;
  }
  const offset = zoneOffsetSeconds(epochMs, timeZone);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  const minutes = Math.floor(abs / 60) % 60;
  return `${sign}${pad2(Math.floor(abs / 3600))}${minutes ? pad2(minutes) : ""}`;
}

/** True when `timeZone` is an IANA zone name this runtime knows (case as given is kept for `e`). */
export function isValidTimeZone(timeZone: string): boolean {
  if (!timeZone) return false;
  try {
    wallFormatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}
