/**
 * The page a rate-limited page load gets (429): in the pages' own style and the reader's language
 * (cookie or Accept-Language; no lookup), with no script, built the first time a language needs it so it
 * costs nothing to send however often it is asked for, and nothing at start (formatting messages
 * makes the ICU data of each language resident).
 */
import { isLocale, type Locale, translator } from "../shared/i18n/i18n.js";

function escapeText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const PAGES = new Map<Locale, string>();

function buildPage(locale: Locale): string {
  const { t, dir } = translator(locale);
  const title = escapeText(t("tooMany.title"));
  return `<!doctype html><html lang="${locale}" dir="${dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><title>${title}</title><link rel="stylesheet" href="/static/recipient.css"></head><body><main id="main" class="fy-main"><section class="fy-card"><h1>${title}</h1><p>${escapeText(t("tooMany.body"))}</p></section></main></body></html>`;
}

/** The 429 page in `locale` (English for anything else). */
export function tooManyRequestsPage(locale: Locale): string {
  const key: Locale = isLocale(locale) ? locale : "en";
  let page = PAGES.get(key);
  if (page === undefined) {
    page = buildPage(key);
    PAGES.set(key, page);
  }
  return page;
}
