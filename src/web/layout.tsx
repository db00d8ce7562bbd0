import type { ComponentChildren, VNode } from "preact";
import { renderToString } from "preact-render-to-string";

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
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · ${props.brandName}`}</title>
        <link rel="icon" href={assetUrls.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={assetUrls.css} />
        {props.brandCssHref ? <link rel="stylesheet" href={props.brandCssHref} /> : null}
        {props.withScript ? <script type="module" src={assetUrls.js} /> : null}
      </head>
      <body>
        <a class="fy-skip" href="#main">
          Skip to content
        </a>
        {props.sandbox ? (
          <aside class="fy-sandbox" aria-label="Environment">
            SANDBOX: test environment, files and messages are not real
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
          <p>
            {props.footer ??
              "Files are encrypted in transit and at rest. This page is private: do not share its link."}
          </p>
        </footer>
      </body>
    </html>
  );
}

/** Renders a page to an HTML document string (preact escapes every text and attribute value). */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}
