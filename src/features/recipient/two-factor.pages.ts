import { Type } from "typebox";
import type { Router } from "../../shared/feature.js";
import { pageTranslator } from "../../web/i18n.js";
import { htmlResponse, IdentifierParams, pagePath } from "./recipient-http.js";
import type { PageDeps } from "./request.pages.js";
import { tfaSubjectOfRequest } from "./two-factor.service.js";

/**
 * The two-factor forms of a link: send a code to the request's masked destination, and check a
 * code (success starts the two-factor session). Both answer with a redirect to the page (PRG): a
 * refusal names itself in `?notice=`, so a reload of the page never posts the form again.
 */
export async function registerTwoFactorPages(app: Router, deps: PageDeps): Promise<void> {
  const { recipient, twoFactor, session } = deps;

  app.post(
    "/r/:identifier/tfa/send",
    {
      config: { public: true },
      schema: {
        operationId: "sendRecipientCode",
        tags: ["recipient"],
        summary: "Send a two-factor code to the request's masked destination (form post; 303 to the page)",
        consumes: ["application/x-www-form-urlencoded"],
        params: IdentifierParams,
        body: Type.Object({
          csrf_token: Type.String({ description: "The CSRF token of the page's form." }),
        }),
        response: {
          303: Type.Null({
            description:
              "To the page: `?notice=sent`, or `?notice=send_limit` (with Retry-After) or `?notice=locked_out` when refused.",
          }),
          404: htmlResponse("Unknown link."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await session.load(request, reply);
      if (!ctx) return reply;
      session.checkFormCsrf(request, ctx, request.body.csrf_token);
      if (recipient.pageKind(ctx, false) !== "tfa")
        return reply.redirect(pagePath(ctx.request.identifier), 303);
      const chrome = recipient.chrome(ctx, pageTranslator(request, ctx.account.defaultLanguage));
      const result = await twoFactor.sendCode(
        tfaSubjectOfRequest(ctx.request)!,
        chrome.brandName,
        chrome.i18n,
      );
      const path = pagePath(ctx.request.identifier);
      if (!result.ok && result.reason === "locked_out")
        return reply.redirect(`${path}?notice=locked_out`, 303);
      if (!result.ok) {
        reply.header("retry-after", String(result.retryAfterSeconds));
        return reply.redirect(`${path}?notice=send_limit`, 303);
      }
      return reply.redirect(`${path}?notice=sent`, 303);
    },
  );

  app.post(
    "/r/:identifier/tfa/verify",
    {
      config: { public: true },
      schema: {
        operationId: "verifyRecipientCode",
        tags: ["recipient"],
        summary: "Check a two-factor code; success sets the session cookie and redirects to the page",
        consumes: ["application/x-www-form-urlencoded"],
        params: IdentifierParams,
        body: Type.Object({ csrf_token: Type.String(), code: Type.String({ maxLength: 20 }) }),
        response: {
          303: Type.Null({
            description:
              "To the page with the session cookie, or back to the code step with `?notice=wrong&left=<n>`, `locked`, `locked_out`, `expired`, `no_code` or `malformed`.",
          }),
          404: htmlResponse("Unknown link."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await session.load(request, reply);
      if (!ctx) return reply;
      session.checkFormCsrf(request, ctx, request.body.csrf_token);
      const result = await twoFactor.verifyCode(tfaSubjectOfRequest(ctx.request)!, request.body.code);
      if (!result.ok) {
        const query = result.reason === "wrong" ? `wrong&left=${result.attemptsLeft}` : result.reason;
        return reply.redirect(`${pagePath(ctx.request.identifier)}?notice=${query}`, 303);
      }
      session.startSession(request, reply, ctx);
      return reply.redirect(pagePath(ctx.request.identifier), 303);
    },
  );
}
