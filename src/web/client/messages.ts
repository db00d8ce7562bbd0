/**
 * The page scripts' words, in the page's language: the messages the server put in the page's
 * `<script type="application/json" id="fy-i18n">` data block (no inline script, CSP-safe), formatted
 * with intl-messageformat. The catalogues stay on the server: a page without the block (or a key
 * missing from it) shows the key, which tests would catch.
 */
import { IntlMessageFormat } from "intl-messageformat";
import type { MessageKey } from "../../shared/i18n/catalogues/en.js";

export interface PageMessages {
  locale: string;
  /** The BCP 47 tag of dates and numbers ("es-ES"). */
  format: string;
  messages: Partial<Record<MessageKey, string>>;
}

function readPageMessages(): PageMessages {
  const fallback: PageMessages = { locale: "en", format: "en-GB", messages: {} };
  if (typeof document === "undefined") return fallback;
  try {
    const parsed = JSON.parse(
      document.getElementById("fy-i18n")?.textContent ?? "null",
    ) as PageMessages | null;
    return parsed && typeof parsed.messages === "object" ? parsed : fallback;
  } catch {
    return fallback;
  }
}

let page = readPageMessages();
const cache = new Map<MessageKey, IntlMessageFormat>();

/** The page's language ("es") and the tag its dates and numbers use ("es-ES"). */
export const pageLocale = { locale: page.locale, format: page.format };

/** Replaces the page's messages (unit tests, which run without a page). */
export function setPageMessages(messages: PageMessages): void {
  page = messages;
  pageLocale.locale = messages.locale;
  pageLocale.format = messages.format;
  cache.clear();
}

/** The message `key` in the page's language with `values` in its placeholders. */
export function t(key: MessageKey, values?: Record<string, string | number>): string {
  let mf = cache.get(key);
  if (!mf) {
    mf = new IntlMessageFormat(page.messages[key] ?? key, page.format);
    cache.set(key, mf);
  }
  return String(mf.format(values));
}

const UNITS = ["KB", "MB", "GB", "TB"] as const;

/** Human size (powers of 1000, one decimal) in the page's language, as the server-rendered lists show it. */
export function formatBytes(bytes: number): string {
  const integer = new Intl.NumberFormat(page.format, { maximumFractionDigits: 0 });
  const oneDecimal = new Intl.NumberFormat(page.format, {
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  });
  if (bytes < 1000) return t("size.B", { value: integer.format(bytes) });
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return t(`size.${UNITS[unit]!}`, { value: oneDecimal.format(Math.round(value * 10) / 10) });
}
