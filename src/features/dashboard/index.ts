/**
 * The owner's dashboard at /dashboard/: users with password and TOTP two-factor sign-in, sessions,
 * and the pages owners use every day.
 *
 * How to add a page (see docs/internals/dashboard.md):
 * - Write `<name>.pages.tsx` exporting `(deps) => RouteModule`; add it to `pageModules` below.
 * - Register with `kit.get(app, path, { operationId }, handler)` and `kit.post(...)`: both run the
 *   session guard (no signed-in session: 303 to /dashboard/sign-in) and `kit.post` checks the CSRF
 *   token, bound to the session, first (403 page). Cross-origin posts are refused before routing
 *   (src/http/page-guards.ts). The handler gets `(request, reply, ctx: PageContext)`.
 * - The account: `ctx.user` is `{ userId, accountId, email }`; only show objects of
 *   `ctx.user.accountId` (another account's id in a URL is a 404).
 * - Forms: put `<CsrfField token={ctx.csrfToken} />` in every form; read fields with
 *   `formField(request, name)` / `formFields`.
 * - Render: `kit.render(request, reply, ctx, { title, section }, <YourView />)` wraps the view in
 *   the layout (navigation, environment badge, sign-out); `kit.redirect(reply, path)` after posts.
 * - Tests: test/helpers/dashboard.ts signs a user in (HTTP client or Chromium page).
 */
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import type { Clock } from "../../shared/clock.js";
import { bindCommands, type Feature, type RouteModule } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import { AccountApplications, type AuthService } from "../auth/index.js";
import type { Notifications } from "../notifications/index.js";
import { AccountSettings } from "./account-settings.service.js";
import { applicationsPages } from "./applications.pages.js";
import { dashboardCommands } from "./dashboard.commands.js";
import { DashboardKit } from "./dashboard-kit.js";
import { DEFAULT_LIFETIMES, type SessionLifetimes, SessionsService } from "./sessions.service.js";
import { settingsPages } from "./settings.pages.js";
import { signInPages } from "./sign-in.pages.js";
import { UsersService } from "./users.service.js";

export { dashboardCommands } from "./dashboard.commands.js";
export {
  type CsrfBinding,
  type DashboardCookies,
  DashboardKit,
  dashboardActor,
  dashboardCookies,
  formField,
  formFields,
  type PageContext,
  type PageOptions,
  type RenderOptions,
  type SignedInUser,
} from "./dashboard-kit.js";
export { dashboardOwnerPages, type OwnerPagesDeps } from "./owner-pages.js";
export type { SessionLifetimes } from "./sessions.service.js";
export { totpCodeAt } from "./totp.js";
export type { UserView } from "./users.service.js";
export { CsrfField, DashboardLayout, type DashboardSection, NAV, Notice } from "./views/layout.js";

/** What the dashboard feature offers the rest of the process. */
export interface Dashboard {
  readonly users: UsersService;
  readonly sessions: SessionsService;
  readonly kit: DashboardKit;
  /**
   * A one-time setup link for the first user of the account with `email` when it has no user yet
   * (first start of a sandbox deployment); undefined otherwise.
   */
  firstUserSetupLink(email: string): Promise<string | undefined>;
}

/** Builds the dashboard feature. */
export function createDashboardFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  rateLimiter: RateLimiter;
  auth: AuthService;
  /** Custom SMTP settings of accounts (settings page). */
  smtpSettings: Notifications["smtpSettings"];
  lifetimes?: SessionLifetimes;
}): Feature<Dashboard> {
  const { database, config, clock, keyRing, audit, auth } = deps;
  const users = new UsersService({
    database,
    clock,
    keyRing,
    audit,
    publicBaseUrl: config.dashboardBaseUrl ?? config.publicBaseUrl,
    issuer: config.isSandbox ? "Ferry sandbox" : "Ferry",
  });
  const sessions = new SessionsService({ database, clock, lifetimes: deps.lifetimes ?? DEFAULT_LIFETIMES });
  const kit = new DashboardKit({
    sessions,
    keyRing,
    accounts: auth.accounts,
    database,
    environment: config.FERRY_ENVIRONMENT,
    publicBaseUrl: config.publicBaseUrl,
    dashboardBaseUrl: config.dashboardBaseUrl,
  });
  // Every dashboard page module, in registration order: add new pages here.
  const applications = new AccountApplications(database, auth, audit);
  const pageModules: RouteModule[] = [
    signInPages({ kit, users, sessions, rateLimiter: deps.rateLimiter }),
    applicationsPages({ kit, applications }),
    settingsPages({
      kit,
      users,
      sessions,
      settings: new AccountSettings({
        database,
        clock,
        audit,
        accounts: auth.accounts,
        smtp: deps.smtpSettings,
      }),
    }),
  ];
  return {
    service: {
      users,
      sessions,
      kit,
      async firstUserSetupLink(email) {
        const accountId = await auth.accounts.idByEmail(database.db, email);
        if (accountId === undefined || !(await users.hasNoUsers(accountId))) return undefined;
        return (await users.invite(accountId, email, null)).setupUrl;
      },
    },
    routes: pageModules,
    commands: bindCommands(dashboardCommands, { auth, users, database }),
  };
}
