/**
 * The page a rate-limited page load gets (429): in the pages' own style and the reader's language
 * (cookie or Accept-Language; no lookup), with no script, built once per language so it costs
 * nothing to send however often it is asked for.
 */
import { type Locale, SUPPORTED_LOCALES, translator } from "../shared/i18n/i18n.js";

function escapeText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const PAGES = new Map<Locale, string>(
  SUPPORTED_LOCALES.map((locale) => {
    const { t, dir } = translator(locale);
    const title = escapeText(t("tooMany.title"));
    return [
      locale,
      `<!doctype html><html lang="${locale}" dir="${dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><title>${title}</title><link rel="stylesheet" href="/static/recipient.css"></head><body><main id="main" class="fy-main"><section class="fy-card"><h1>${title}</h1><p>${escapeText(t("tooMany.body"))}</p></section></main></body></html>`,
    ];
  }),
);

/** The 429 page in `locale`. */
export function tooManyRequestsPage(locale: Locale): string {
  return PAGES.get(locale) ?? PAGES.get("en")!;
}
