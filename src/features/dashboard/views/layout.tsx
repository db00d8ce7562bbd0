import type { ComponentChildren, VNode } from "preact";

/** Versioned URLs of the dashboard's first-party assets (see src/web/assets.ts). */
export const dashboardAssets = {
  css: "/static/dashboard.css",
  js: "/static/dashboard.js",
  icon: "/static/favicon.svg",
};

/** A section of the dashboard's navigation. */
export type DashboardSection =
  | "applications"
  | "templates"
  | "branding"
  | "requests"
  | "containers"
  | "audit"
  | "outbox"
  | "settings";

/** The navigation, in order; `sandboxOnly` entries are hidden on a live deployment. */
export const NAV: readonly {
  section: DashboardSection;
  label: string;
  href: string;
  sandboxOnly?: boolean;
}[] = [
  { section: "applications", label: "Applications", href: "/dashboard/applications" },
  { section: "templates", label: "Templates", href: "/dashboard/templates" },
  { section: "branding", label: "Branding", href: "/dashboard/branding" },
  { section: "requests", label: "Requests", href: "/dashboard/requests" },
  { section: "containers", label: "Containers", href: "/dashboard/containers" },
  { section: "audit", label: "Audit", href: "/dashboard/audit" },
  { section: "outbox", label: "Outbox", href: "/dashboard/outbox", sandboxOnly: true },
  { section: "settings", label: "Settings", href: "/dashboard/settings" },
];

/** What every dashboard page shows around its content. */
export interface DashboardLayoutProps {
  /** The page's <title> and <h1>. */
  title: string;
  environment: "sandbox" | "live";
  /** The signed-in user; absent on sign-in and setup pages (no navigation then). */
  signedIn?: { email: string; accountName: string; csrfToken: string } | undefined;
  /** The navigation entry to mark current. */
  section?: DashboardSection | undefined;
  /** Load the dashboard client script (copy buttons). */
  withScript?: boolean;
  children: ComponentChildren;
}

/** The environment badge: prominent on every page so sandbox and live are never confused. */
export function EnvironmentBadge(props: { environment: "sandbox" | "live" }): VNode {
  return (
    <p class={`fd-env fd-env-${props.environment}`}>
      {props.environment === "sandbox" ? "Sandbox: test data, messages are captured" : "Live"}
    </p>
  );
}

/** The HTML document of every dashboard page: landmarks, skip link, navigation, no inline script. */
export function DashboardLayout(props: DashboardLayoutProps): VNode {
  const { signedIn, environment } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · Ferry dashboard${environment === "sandbox" ? " (sandbox)" : ""}`}</title>
        <link rel="icon" href={dashboardAssets.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={dashboardAssets.css} />
        {props.withScript ? <script type="module" src={dashboardAssets.js} /> : null}
      </head>
      <body class={`fd-body fd-${environment}${signedIn ? "" : " fd-public"}`}>
        <a class="fd-skip" href="#main">
          Skip to content
        </a>
        <header class="fd-header">
          <div class="fd-brand">
            <a href="/dashboard/" class="fd-logo">
              Ferry
            </a>
            <EnvironmentBadge environment={environment} />
          </div>
          {signedIn ? (
            <div class="fd-user">
              <span class="fd-account">{signedIn.accountName}</span>
              <span class="fd-email">{signedIn.email}</span>
              <form method="post" action="/dashboard/sign-out" class="fd-inline">
                <input type="hidden" name="csrf_token" value={signedIn.csrfToken} />
                <button type="submit" class="fd-link-button">
                  Sign out
                </button>
              </form>
            </div>
          ) : null}
        </header>
        {signedIn ? (
          <nav class="fd-nav" aria-label="Dashboard">
            <ul>
              {NAV.filter((n) => !n.sandboxOnly || environment === "sandbox").map((n) => (
                <li key={n.section}>
                  <a href={n.href} aria-current={n.section === props.section ? "page" : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <main id="main" class="fd-main" tabIndex={-1}>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The hidden CSRF field every dashboard form carries. */
export function CsrfField(props: { token: string }): VNode {
  return <input type="hidden" name="csrf_token" value={props.token} />;
}

/** A message above a form or list: "error" is announced to screen readers at once. */
export function Notice(props: { kind: "error" | "success" | "info"; children: ComponentChildren }): VNode {
  return (
    <div class={`fd-notice fd-notice-${props.kind}`} role={props.kind === "error" ? "alert" : "status"}>
      {props.children}
    </div>
  );
}
