import type { ComponentChildren, VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import { LOCALE_NAMES, SUPPORTED_LOCALES, type Translator, translator } from "../shared/i18n/i18n.js";
import { clientMessagesJson } from "./i18n.js";

/** What every recipient page shows around its content. */
interface LayoutProps {
  /** The page's <title> (the account name is appended). */
  title: string;
  /** Deployment is a sandbox: a visible SANDBOX banner. */
  sandbox: boolean;
  /** Name shown in the header and title; the account's name. */
  brandName: string;
  /** URL of the account's white-label stylesheet, applied after the default one. */
  brandCssHref?: string | undefined;
  /** URL of the account's logo. */
  logoHref?: string | undefined;
  /** Load the client script (pull pages). */
  withScript?: boolean;
  /** Extra data for the client script, as data-* attributes on <main>. */
  mainData?: Record<string, string> | undefined;
  children: ComponentChildren;
  /** The footer's text (default: the private-link note of recipient pages). */
  footer?: string;
  /** The reader's language (default English, with no language switcher: the API reference). */
  i18n?: Translator | undefined;
}

/** Versioned URLs of the first-party assets (set once the bundle is built). */
export const assetUrls = {
  css: "/static/recipient.css",
  js: "/static/recipient.js",
  icon: "/static/favicon.svg",
};

/** The HTML document of every recipient page: semantic landmarks, skip link, no inline script. */
export function Layout(props: LayoutProps): VNode {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(props.mainData ?? {})) data[`data-${k}`] = v;
  const i18n = props.i18n ?? translator("en");
  const { t } = i18n;
  return (
    <html lang={i18n.locale} dir={i18n.dir}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · ${props.brandName}`}</title>
        <link rel="icon" href={assetUrls.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={assetUrls.css} />
        {props.brandCssHref ? <link rel="stylesheet" href={props.brandCssHref} /> : null}
        {props.withScript ? (
          <script
            type="application/json"
            id="fy-i18n"
            dangerouslySetInnerHTML={{ __html: clientMessagesJson(i18n.locale) }}
          />
        ) : null}
        {props.withScript ? <script type="module" src={assetUrls.js} /> : null}
      </head>
      <body data-drop-label={props.withScript ? t("client.dropAnywhere") : undefined}>
        <a class="fy-skip" href="#main">
          {t("layout.skip")}
        </a>
        {props.sandbox ? (
          <aside class="fy-sandbox" aria-label={t("layout.sandboxLabel")}>
            {t("layout.sandbox")}
          </aside>
        ) : null}
        <header class="fy-header">
          {props.logoHref ? (
            <img class="fy-logo" src={props.logoHref} alt={props.brandName} />
          ) : (
            <p class="fy-requester-name">{props.brandName}</p>
          )}
        </header>
        <main id="main" class="fy-main" tabIndex={-1} {...data}>
          {props.children}
        </main>
        <footer class="fy-footer">
          <p>{props.footer ?? t("layout.footer")}</p>
          {props.i18n ? <LanguageSwitch current={i18n} /> : null}
        </footer>
      </body>
    </html>
  );
}

/**
 * Links to the page in each language, each named in its own language; `?lang=` sets the language
 * cookie and comes back to the page (src/web/i18n.ts), so it works without script.
 */
function LanguageSwitch(props: { current: Translator }): VNode {
  return (
    <nav class="fy-languages" aria-label={props.current.t("layout.language")}>
      <ul>
        {SUPPORTED_LOCALES.map((locale) => (
          <li>
            <a
              href={`?lang=${locale}`}
              lang={locale}
              hreflang={locale}
              aria-current={locale === props.current.locale ? "true" : undefined}
            >
              {LOCALE_NAMES[locale]}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Renders a page to an HTML document string (preact escapes every text and attribute value). */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}
