/**
 * Recipient-facing languages: the catalogues, locale negotiation (Accept-Language, an explicit
 * choice, the account's default, then English) and a translator that formats ICU messages, dates,
 * numbers and sizes for one locale (ADR 0033).
 */
import { IntlMessageFormat } from "intl-messageformat";
import Negotiator from "negotiator";
import { de } from "./catalogues/de.js";
import { type Catalogue, en, type MessageKey } from "./catalogues/en.js";
import { es } from "./catalogues/es.js";
import { fr } from "./catalogues/fr.js";
import { pt } from "./catalogues/pt.js";

export type { Catalogue, MessageKey } from "./catalogues/en.js";

/** The languages recipients can read Ferry's pages and messages in; `en` is the source. */
export const SUPPORTED_LOCALES = ["en", "es", "fr", "de", "pt"] as const;
/** One of SUPPORTED_LOCALES. */
export type Locale = (typeof SUPPORTED_LOCALES)[number];
/** The language used when nothing else decides. */
export const DEFAULT_LOCALE: Locale = "en";

/** Each language's own name, as the language switcher lists it. */
export const LOCALE_NAMES: Record<Locale, string> = {
  en: "English",
  es: "Español",
  fr: "Français",
  de: "Deutsch",
  pt: "Português",
};

/** Every catalogue, by locale. */
export const CATALOGUES: Record<Locale, Catalogue> = { en, es, fr, de, pt };

/** The regional variant each language's dates and numbers follow (day-first English, Brazilian Portuguese). */
const FORMAT_LOCALES: Record<Locale, string> = {
  en: "en-GB",
  es: "es-ES",
  fr: "fr-FR",
  de: "de-DE",
  pt: "pt-BR",
};

/** Primary languages written right to left (for locales added later; none of the five is). */
const RTL_LANGUAGES = new Set(["ar", "dv", "fa", "he", "ku", "ps", "sd", "ug", "ur", "yi"]);

/** True when `value` is a supported locale code. */
export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (SUPPORTED_LOCALES as readonly string[]).includes(value);
}

/** The writing direction of a language tag ("ar-EG" → rtl, "es" → ltr). */
export function textDirection(tag: string): "ltr" | "rtl" {
  return RTL_LANGUAGES.has(tag.toLowerCase().split(/[-_]/)[0] ?? "") ? "rtl" : "ltr";
}

/**
 * The locale for a reader: an explicit choice (the language cookie) when supported, else the best
 * supported match of the Accept-Language header (parsed by `negotiator`; a bare `*` states no
 * preference), else the account's default, else English.
 */
export function negotiateLocale(input: {
  choice?: string | undefined;
  acceptLanguage?: string | undefined;
  accountDefault?: string | undefined;
}): Locale {
  if (isLocale(input.choice)) return input.choice;
  const header = input.acceptLanguage?.trim();
  if (header && !/^\*(\s*;.*)?$/.test(header)) {
    const negotiator = new Negotiator({ headers: { "accept-language": header } });
    const best = negotiator.languages([...SUPPORTED_LOCALES]).find((l) => l !== "*");
    if (isLocale(best)) return best;
  }
  if (isLocale(input.accountDefault)) return input.accountDefault;
  return DEFAULT_LOCALE;
}

/** A value an ICU placeholder takes: text, a number, or (for rich messages) any node. */
type Values<T = never> = Record<string, string | number | T>;

/** Formats one locale's messages, dates, numbers and sizes. */
export interface Translator {
  readonly locale: Locale;
  /** `dir` of the document. */
  readonly dir: "ltr" | "rtl";
  /** The message `key` with `values` in its placeholders. */
  t(key: MessageKey, values?: Values): string;
  /** The message with nodes (links, <time>, <strong>) in placeholders: text and nodes in order. */
  rich<T>(key: MessageKey, values: Values<T>): (string | T)[];
  /** "15 January 2026 at 10:00 UTC" (in the locale's words; always UTC). */
  date(iso: string): string;
  /** Human size with one decimal, powers of 1000: "0 B", "1.5 KB", "50,0 Mo" (fr). */
  bytes(bytes: number): string;
  /** "pdf, jpg" as the language lists things. */
  list(items: string[]): string;
}

const formatters = new Map<string, IntlMessageFormat>();

function formatterOf(locale: Locale, key: MessageKey): IntlMessageFormat {
  const id = `${locale}\u0000${key}`;
  let mf = formatters.get(id);
  if (!mf) {
    mf = new IntlMessageFormat(CATALOGUES[locale][key] ?? en[key], FORMAT_LOCALES[locale]);
    formatters.set(id, mf);
  }
  return mf;
}

const SIZE_UNITS = ["KB", "MB", "GB", "TB"] as const;

/** The size unit and value of `bytes` (powers of 1000, as file managers show them). */
export function sizeParts(bytes: number): { unit: "B" | (typeof SIZE_UNITS)[number]; value: number } {
  if (bytes < 1000) return { unit: "B", value: bytes };
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < SIZE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return { unit: SIZE_UNITS[unit]!, value: Math.round(value * 10) / 10 };
}

const translators = new Map<Locale, Translator>();

/** The translator of `locale` (built once per locale, then shared). */
export function translator(locale: Locale): Translator {
  const cached = translators.get(locale);
  if (cached) return cached;
  const tag = FORMAT_LOCALES[locale];
  // Built on first use: a page that formats no date never has ICU load its date patterns (creating
  // the first date formatter of a process makes about 6 MB of the node binary's ICU data resident).
  let dates: Intl.DateTimeFormat | undefined;
  let oneDecimal: Intl.NumberFormat | undefined;
  let integer: Intl.NumberFormat | undefined;
  let lists: Intl.ListFormat | undefined;
  const t: Translator = {
    locale,
    dir: textDirection(locale),
    t: (key, values) => String(formatterOf(locale, key).format(values)),
    rich: <T>(key: MessageKey, values: Values<T>) => {
      const out = formatterOf(locale, key).format<T>(values);
      return Array.isArray(out) ? out : [out];
    },
    date: (iso) => {
      dates ??= new Intl.DateTimeFormat(tag, { dateStyle: "long", timeStyle: "short", timeZone: "UTC" });
      return `${dates.format(new Date(iso))} UTC`;
    },
    bytes: (bytes) => {
      const { unit, value } = sizeParts(bytes);
      let number: string;
      if (unit === "B") {
        integer ??= new Intl.NumberFormat(tag, { maximumFractionDigits: 0 });
        number = integer.format(value);
      } else {
        oneDecimal ??= new Intl.NumberFormat(tag, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
        number = oneDecimal.format(value);
      }
      return String(formatterOf(locale, `size.${unit}`).format({ value: number }));
    },
    list: (items) => {
      lists ??= new Intl.ListFormat(tag, { style: "narrow", type: "unit" });
      return lists.format(items);
    },
  };
  translators.set(locale, t);
  return t;
}

/** The BCP 47 tag dates and numbers of `locale` are formatted with ("es" → "es-ES"). */
export function formatLocale(locale: Locale): string {
  return FORMAT_LOCALES[locale];
}

/** The messages the page scripts use (`client.*` and `size.*`) in `locale`, for the page's JSON tag. */
export function clientCatalogue(locale: Locale): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, text] of Object.entries(CATALOGUES[locale]))
    if (key.startsWith("client.") || key.startsWith("size.")) out[key] = text;
  return out;
}
