import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError } from "../../shared/errors.js";
import { pageTranslator } from "../../web/i18n.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingRow, BrandingService } from "../branding/index.js";
import type { ActionSource, ContainerSessions, SessionContext } from "../containers/index.js";
import type { EnrichmentSteps } from "../enrichments/index.js";
import {
  isHttps,
  NotFoundPage,
  type PageCaller,
  type PageChrome,
  presentOwnerCard,
  presentRequesterCard,
  type RecipientTokens,
  type RequesterCardView,
  readCookies,
  SESSION_COOKIE,
  sendPage,
  setCookie,
  type TfaSubject,
} from "../recipient/index.js";
import type { RequestersService } from "../requesters/index.js";

/** A session link as the pages use it: the session, the owner's profile and branding. */
export interface SessionPage {
  session: SessionContext;
  account: { id: number; name: string; email: string; defaultLanguage: string };
  branding: BrandingRow | undefined;
  /** `/s/<token>/`: the path of the session's pages and the scope of its cookies. */
  base: string;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The resolved session of a /s/ route (set when the link is loaded; drives AAA-0011). */
    sessionPage: SessionPage | undefined;
    /** The session's content was shown (ABB-0020 with the AAA-0011 entry). */
    sessionShown: boolean;
  }
}

/** What the session pages are built from. */
export interface SessionPageDeps {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  accounts: AccountsService;
  branding: BrandingService;
  requesters: Pick<RequestersService, "findForAccount">;
  sessions: ContainerSessions;
  tokens: RecipientTokens;
  /** The enrichment steps: their cards on the session page. */
  steps: EnrichmentSteps;
}

/** The path of a session's pages. */
export function sessionBase(token: string): string {
  return `/s/${encodeURIComponent(token)}/`;
}

/** The caller as audit entries record it (the path is masked by the audit writer). */
export function actionSource(caller: PageCaller): ActionSource {
  return { from: caller.ip, method: caller.method, path: caller.path };
}

/**
 * Resolving session links, their two-factor session cookie and CSRF tokens (bound to the session
 * token and that cookie, ADR 0068), chrome and cards, and the audit entries of every call. The
 * cookie is that of the request pages, scoped to the session's path and bound to its token.
 */
export class SessionPages {
  constructor(readonly deps: SessionPageDeps) {}

  /** Sends the one 404 page of links that resolve to nothing (the request pages' own). */
  notFoundPage(reply: FastifyReply): FastifyReply {
    return sendPage(reply, 404, NotFoundPage({ chrome: this.chrome(undefined, reply.request) }));
  }

  /**
   * The session behind a token, or undefined for unknown, deleted, inactive and foreign links
   * alike; on an account's custom recipient host only that account's sessions resolve. Recorded on
   * the request for the page-call audit entry.
   */
  async resolve(request: FastifyRequest, token: string): Promise<SessionPage | undefined> {
    const { deps } = this;
    const session = await deps.sessions.resolve(token);
    if (!session) return undefined;
    const accountId = session.container.account_id;
    const host = request.hostname.toLowerCase().replace(/:\d+$/, "");
    if (host !== new URL(deps.config.publicBaseUrl).hostname) {
      const hostAccount = await deps.branding.accountForHost(host);
      if (hostAccount !== undefined && hostAccount !== accountId) return undefined;
    }
    const account = await deps.accounts.profile(deps.database.db, accountId);
    if (!account) return undefined;
    const page = {
      session,
      account,
      branding: await deps.branding.find(accountId),
      base: sessionBase(token),
    };
    request.sessionPage = page;
    return page;
  }

  /** The session of a page request; sends the 404 page and returns undefined when there is none. */
  async load(request: FastifyRequest, reply: FastifyReply, token: string): Promise<SessionPage | undefined> {
    const page = await this.resolve(request, token);
    if (!page) this.notFoundPage(reply);
    return page;
  }

  /** The two-factor subject of a session whose container asks for an auth code. */
  tfaSubject(page: SessionPage): TfaSubject | undefined {
    const code = this.deps.sessions.authCode(page.session);
    if (!code) return undefined;
    return {
      id: page.session.container.id,
      accountId: page.session.container.account_id,
      model: "container",
      channel: code.channel,
      destination: code.destination,
      failures: code.failures,
    };
  }

  /** True when the session needs no code, or the browser holds an unexpired code session of it. */
  unlocked(request: FastifyRequest, page: SessionPage): boolean {
    if (!this.tfaSubject(page)) return true;
    return this.deps.tokens.verifySession(
      page.session.container.id,
      page.session.token,
      readCookies(request)[SESSION_COOKIE],
      this.nowSeconds(),
    );
  }

  /** Sets the code session cookie (Lax, scoped to the session's path, TFA_SESSION_SECONDS long). */
  startCodeSession(request: FastifyRequest, reply: FastifyReply, page: SessionPage): void {
    const { config, tokens } = this.deps;
    const expiresAt = this.nowSeconds() + config.TFA_SESSION_SECONDS;
    setCookie(
      reply,
      SESSION_COOKIE,
      tokens.sessionValue(page.session.container.id, page.session.token, expiresAt),
      {
        path: page.base,
        maxAgeSeconds: config.TFA_SESSION_SECONDS,
        secure: isHttps(request, config.publicBaseUrl),
        sameSite: "Lax",
      },
    );
  }

  /** The browser's code session cookie when the session asks for a code and it is valid. */
  private tfaBinding(request: FastifyRequest, page: SessionPage): string | undefined {
    if (!this.tfaSubject(page)) return undefined;
    const value = readCookies(request)[SESSION_COOKIE];
    return this.deps.tokens.verifySession(
      page.session.container.id,
      page.session.token,
      value,
      this.nowSeconds(),
    )
      ? value
      : undefined;
  }

  /**
   * The CSRF token of the page's forms and script, bound to the session's token and, once the
   * browser passed the code, to that code session (ADR 0068).
   */
  csrfToken(request: FastifyRequest, page: SessionPage): string {
    return this.deps.tokens.csrfToken(page.session.token, this.tfaBinding(request, page));
  }

  /** Refuses (403) a call whose CSRF token (form field or X-CSRF-Token header) is missing or wrong. */
  checkCsrf(request: FastifyRequest, page: SessionPage, token: string | undefined): void {
    if (!this.deps.tokens.verifyCsrf(page.session.token, this.tfaBinding(request, page), token))
      throw new AppError(
        "NOT_AUTHORIZED",
        "The form expired or did not come from this page. Reload the page and try again.",
      );
  }

  /**
   * Branding, sandbox marker and language of a page (the default look without a session): the
   * reader's language from their choice or browser, else the account's default (ADR 0033).
   */
  chrome(page: SessionPage | undefined, request: FastifyRequest): PageChrome {
    const branding = page?.branding;
    return {
      sandbox: this.deps.config.isSandbox,
      brandName: page?.account.name.trim() || "Ferry",
      brandCssHref:
        page && branding?.css ? `${page.base}brand.css?v=${branding.css_hash.slice(0, 12)}` : undefined,
      logoHref:
        page && branding?.logo_hash ? `${page.base}logo?v=${branding.logo_hash.slice(0, 12)}` : undefined,
      i18n: pageTranslator(request, page?.account.defaultLanguage),
    };
  }

  /** The card of the session: the container's requester, or the owner's profile. */
  async card(page: SessionPage): Promise<RequesterCardView> {
    const { shared } = page.session;
    if (shared.requester_id) {
      const row = await this.deps.requesters.findForAccount(
        this.deps.database.db,
        shared.account_id,
        shared.requester_id,
      );
      if (row) return presentRequesterCard(row, row.avatar ? `${page.base}avatar` : null);
    }
    return presentOwnerCard(page.account);
  }

  /** The requester's picture as bytes and type, or undefined. */
  async avatar(page: SessionPage): Promise<{ type: string; bytes: Buffer } | undefined> {
    const { shared } = page.session;
    if (!shared.requester_id) return undefined;
    const row = await this.deps.requesters.findForAccount(
      this.deps.database.db,
      shared.account_id,
      shared.requester_id,
    );
    const match = /^data:(image\/(?:png|jpeg|webp));base64,(.+)$/s.exec(row?.avatar ?? "");
    if (!match) return undefined;
    return { type: match[1]!, bytes: Buffer.from(match[2]!, "base64") };
  }

  /**
   * AAA-0011 for one session call and, when the session's content was shown, ABB-0020, in one
   * transaction.
   */
  async recordCall(page: SessionPage, caller: PageCaller, status: number, shown: boolean): Promise<void> {
    const base = {
      accountId: page.account.id,
      relatedModel: "container",
      relationKey: page.session.container.id,
      from: caller.ip,
      method: caller.method,
      path: caller.path,
    };
    await this.deps.database.db.transaction().execute(async (trx) => {
      await this.deps.audit.write(trx, {
        ...base,
        code: AuditCode.PAGE_CALL,
        contentType: caller.contentType ?? "",
        value: String(status),
      });
      if (shown)
        await this.deps.audit.write(trx, {
          ...base,
          code: AuditCode.FILES_PAGE_LOADED,
          value: `session of recipient ${page.session.recipient.id}`,
        });
    });
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.now().getTime() / 1000);
  }
}
