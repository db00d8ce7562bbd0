import type { Config } from "../../config/config.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import type { Clock } from "../../shared/clock.js";
import { AppError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { pageLocale } from "../../web/i18n.js";
import { applyBrandedPageHeaders, applyRecipientHeaders, pageAssets } from "../../web/security-headers.js";
import { tooManyRequestsPage } from "../../web/too-many-requests.js";
import { registerPullSubmit, registerPullUploads } from "./pull.pages.js";
import { registerPushDownloads } from "./push.pages.js";
import type { RecipientService } from "./recipient.service.js";
import { registerRecipientAssets } from "./recipient-assets.pages.js";
import { isHttps, pagePath } from "./recipient-http.js";
import { pageCaller, RecipientSession } from "./recipient-session.js";
import type { RecipientTokens } from "./recipient-tokens.js";
import { registerRequestPage } from "./request.pages.js";
import { registerTwoFactorPages } from "./two-factor.pages.js";
import type { TwoFactorService } from "./two-factor.service.js";

/**
 * Recipient routes, public and outside /v1/: security headers on every response, per-IP and
 * per-identifier rate limits, AAA-0011 per call, the HTML pages and the JSON upload endpoints the
 * pull page's script uses.
 */
export function recipientRoutes(deps: {
  recipient: RecipientService;
  twoFactor: TwoFactorService;
  tokens: RecipientTokens;
  rateLimiter: RateLimiter;
  config: Config;
  clock: Clock;
}): RouteModule {
  return async (app) => {
    const { recipient, twoFactor, rateLimiter, config } = deps;
    const session = new RecipientSession(deps);
    app.decorateRequest("recipientCtx", undefined);
    app.decorateRequest("recipientPageLoaded", false);

    // The hooks are this module's own (its scope holds only /r/ routes) and the URL is canonical
    // before routing, so every spelling of a recipient path passes through them.
    app.addHook("onRequest", async (request, reply) => {
      try {
        await rateLimiter.consume("recipient-ip", request.ip);
        const identifier = request.url.slice(3).split(/[/?#]/, 1)[0] ?? "";
        await rateLimiter.consume("recipient-id", identifier);
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== "RATE_LIMIT_REACHED") throw err;
        applyRecipientHeaders(reply, isHttps(request, config.publicBaseUrl));
        reply.headers(err.headers);
        if (request.method === "GET" && !request.url.includes("/uploads"))
          return reply
            .code(429)
            .type("text/html; charset=utf-8")
            .send(tooManyRequestsPage(pageLocale(request)));
        throw err;
      }
    });

    app.addHook("onSend", async (request, reply, payload) => {
      const { identifier } = request.params as { identifier?: string };
      const base = identifier === undefined ? undefined : pagePath(identifier);
      const assets = pageAssets(request, base, config.publicBaseUrl);
      applyBrandedPageHeaders(reply, isHttps(request, config.publicBaseUrl), assets);
      const ctx = request.recipientCtx;
      if (ctx) {
        try {
          await recipient.recordCall(ctx, pageCaller(request), reply.statusCode, request.recipientPageLoaded);
        } catch (err) {
          request.log.error({ err }, "audit write failed for recipient page call");
        }
      }
      return payload;
    });

    // 404 page for any other path under /r/ (e.g. a link cut short).
    app.get("/r/*", { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
      session.notFoundPage(reply),
    );

    // In the order the OpenAPI document lists them.
    const pages = { recipient, twoFactor, session };
    await registerRequestPage(app, pages);
    await registerTwoFactorPages(app, pages);
    await registerPullSubmit(app, pages);
    await registerPushDownloads(app, pages);
    await registerRecipientAssets(app, recipient);
    await registerPullUploads(app, pages);
  };
}
