import { Type } from "typebox";
import type { Router } from "../../shared/feature.js";
import { htmlResponse, IdentifierParams, pagePath } from "./recipient-http.js";
import { type PageDeps, renderRequestPage } from "./request.pages.js";
import { tfaSubjectOfRequest } from "./two-factor.service.js";
import type { TfaNotice } from "./views/pages.js";

/**
 * The two-factor forms of a link: send a code to the request's masked destination, and check a
 * code (success starts the two-factor session). Both answer with a redirect to the page, or with
 * the page itself showing what went wrong.
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
          303: Type.Null(),
          404: htmlResponse("Unknown link."),
          403: htmlResponse("Locked after too many wrong codes."),
          429: htmlResponse("Send limit reached."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await session.load(request, reply);
      if (!ctx) return reply;
      session.checkFormCsrf(request, ctx, request.body.csrf_token);
      if (recipient.pageKind(ctx, false) !== "tfa")
        return reply.redirect(pagePath(ctx.request.identifier), 303);
      const result = await twoFactor.sendCode(
        tfaSubjectOfRequest(ctx.request)!,
        recipient.chrome(ctx).brandName,
      );
      if (!result.ok && result.reason === "locked_out")
        return renderRequestPage(deps, request, reply, ctx, { status: 403, notice: { kind: "locked_out" } });
      if (!result.ok) {
        reply.header("retry-after", String(result.retryAfterSeconds));
        return renderRequestPage(deps, request, reply, ctx, {
          status: 429,
          notice: { kind: "send_limit", retryAfterSeconds: result.retryAfterSeconds },
        });
      }
      return reply.redirect(`${pagePath(ctx.request.identifier)}?notice=sent`, 303);
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
          303: Type.Null(),
          400: htmlResponse("Wrong, expired or locked code."),
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
        const notice: TfaNotice =
          result.reason === "wrong"
            ? { kind: "wrong", attemptsLeft: result.attemptsLeft }
            : { kind: result.reason };
        return renderRequestPage(deps, request, reply, ctx, { status: 400, notice });
      }
      session.startSession(request, reply, ctx);
      return reply.redirect(pagePath(ctx.request.identifier), 303);
    },
  );
}
