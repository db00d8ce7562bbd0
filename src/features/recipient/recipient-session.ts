import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config/config.js";
import { suspendIdleTimeout } from "../../http/idle-timeout.js";
import type { Clock } from "../../shared/clock.js";
import { AppError } from "../../shared/errors.js";
import { pageTranslator } from "../../web/i18n.js";
import type { PageCaller, RecipientContext, RecipientService } from "./recipient.service.js";
import { isHttps, pagePath, readCookies, sendPage, setCookie } from "./recipient-http.js";
import { type RecipientTokens, SESSION_COOKIE } from "./recipient-tokens.js";
import { NotFoundPage } from "./views/pages.js";

/** A request to a route under `/r/:identifier/` (its params typed by IdentifierParams). */
export type LinkRequest = FastifyRequest & { params: { identifier: string } };

/** The caller as audit entries record it (the path is masked by the audit writer). */
export function pageCaller(request: FastifyRequest): PageCaller {
  return {
    ip: request.ip,
    method: request.method,
    path: request.url.split("?")[0] ?? "",
    contentType: request.headers["content-type"]?.split(";")[0],
    holdConnection: () => suspendIdleTimeout(request),
  };
}

/**
 * Session handling of recipient links: resolves the link a request names (and records it for the
 * page-call audit entry), the CSRF tokens its forms carry, and the two-factor session cookie.
 */
export class RecipientSession {
  constructor(
    private readonly deps: {
      recipient: RecipientService;
      tokens: RecipientTokens;
      config: Config;
      clock: Clock;
    },
  ) {}

  /** Sends the one 404 page of links that resolve to nothing. */
  notFoundPage(reply: FastifyReply): FastifyReply {
    const i18n = pageTranslator(reply.request);
    return sendPage(reply, 404, NotFoundPage({ chrome: this.deps.recipient.chrome(undefined, i18n) }));
  }

  /** The link of the request, or undefined when it resolves to nothing; recorded for AAA-0011. */
  async resolve(request: LinkRequest): Promise<RecipientContext | undefined> {
    const ctx = await this.deps.recipient.resolve(request.params.identifier, request.hostname);
    if (ctx) request.recipientCtx = ctx;
    return ctx;
  }

  /** The link of a page request; sends the 404 page and returns undefined when it resolves to nothing. */
  async load(request: LinkRequest, reply: FastifyReply): Promise<RecipientContext | undefined> {
    const ctx = await this.resolve(request);
    if (!ctx) this.notFoundPage(reply);
    return ctx;
  }

  /** True when the browser holds an unexpired two-factor session of this request. */
  hasSession(request: FastifyRequest, ctx: RecipientContext): boolean {
    return this.deps.tokens.verifySession(
      ctx.request.id,
      ctx.request.identifier,
      readCookies(request)[SESSION_COOKIE],
      this.nowSeconds(),
    );
  }

  /** Sets the two-factor session cookie (Lax, path-scoped, TFA_SESSION_SECONDS long). */
  startSession(request: FastifyRequest, reply: FastifyReply, ctx: RecipientContext): void {
    const { config, tokens } = this.deps;
    const expiresAt = this.nowSeconds() + config.TFA_SESSION_SECONDS;
    setCookie(reply, SESSION_COOKIE, tokens.sessionValue(ctx.request.id, ctx.request.identifier, expiresAt), {
      path: pagePath(ctx.request.identifier),
      maxAgeSeconds: config.TFA_SESSION_SECONDS,
      secure: isHttps(request, config.publicBaseUrl),
      sameSite: "Lax",
    });
  }

  /** The browser's two-factor session cookie of this request when it is valid, else undefined. */
  private tfaBinding(request: FastifyRequest, ctx: RecipientContext): string | undefined {
    return this.hasSession(request, ctx) ? readCookies(request)[SESSION_COOKIE] : undefined;
  }

  /**
   * The CSRF token of the page's forms and script (`X-CSRF-Token` of the upload calls), bound to
   * the link and, once the browser passed two-factor, to that session (ADR 0068).
   */
  csrfToken(request: FastifyRequest, ctx: RecipientContext): string {
    return this.deps.tokens.csrfToken(ctx.request.identifier, this.tfaBinding(request, ctx));
  }

  /** True when `token` is a CSRF token of this link and the browser's two-factor session. */
  validCsrf(request: FastifyRequest, ctx: RecipientContext, token: string | undefined): boolean {
    return this.deps.tokens.verifyCsrf(ctx.request.identifier, this.tfaBinding(request, ctx), token);
  }

  /** Refuses a form post whose CSRF token is missing or invalid (403). */
  checkFormCsrf(request: FastifyRequest, ctx: RecipientContext, token: string): void {
    if (!this.validCsrf(request, ctx, token))
      throw new AppError(
        "NOT_AUTHORIZED",
        "The form expired or did not come from this page. Reload the page and try again.",
      );
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.now().getTime() / 1000);
  }
}
