import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Router } from "../../shared/feature.js";
import type { RecipientContext, RecipientService } from "./recipient.service.js";
import { htmlResponse, IdentifierParams, pagePath, sendPage } from "./recipient-http.js";
import type { LinkRequest, RecipientSession } from "./recipient-session.js";
import { type TwoFactorService, tfaSubjectOfRequest } from "./two-factor.service.js";
import { CompletedPage, ExpiredPage, PullPage, PushPage, type TfaNotice, TfaPage } from "./views/pages.js";

/** What the recipient page groups work with. */
export interface PageDeps {
  recipient: RecipientService;
  twoFactor: TwoFactorService;
  session: RecipientSession;
}

/** What a form post shows on the request page when it is answered with the page itself. */
interface PageExtras {
  notice?: TfaNotice | undefined;
  status?: number;
  error?: string | undefined;
  receiverMessage?: string;
}

/**
 * Sends the page a link shows now: expired (410), two-factor, completed, push files or pull
 * uploader. The push and pull pages count as the files page loaded (ABB-0020).
 */
export async function renderRequestPage(
  deps: PageDeps,
  request: LinkRequest,
  reply: FastifyReply,
  ctx: RecipientContext,
  extra: PageExtras = {},
): Promise<FastifyReply> {
  const { recipient, twoFactor, session } = deps;
  const csrf = session.csrfToken(request, reply, ctx);
  const chrome = recipient.chrome(ctx);
  const kind = recipient.pageKind(ctx, session.hasSession(request, ctx));
  const status = extra.status ?? 200;
  switch (kind) {
    case "expired":
      return sendPage(
        reply,
        410,
        ExpiredPage({
          chrome,
          card: await recipient.card(ctx),
          expiredAt: ctx.request.expires_at ?? ctx.request.completed_at,
        }),
      );
    case "tfa":
      return sendPage(
        reply,
        status,
        TfaPage({
          chrome,
          base: pagePath(ctx.request.identifier),
          noun: "request",
          csrf,
          status: await twoFactor.status(tfaSubjectOfRequest(ctx.request)!),
          notice: extra.notice,
          card: await recipient.card(ctx),
        }),
      );
    case "completed":
      return sendPage(
        reply,
        status,
        CompletedPage({
          chrome,
          card: await recipient.requesterCard(ctx),
          received: await recipient.files(ctx),
          receiverMessage: ctx.request.receiver_message,
        }),
      );
    case "push":
      request.recipientPageLoaded = true;
      return sendPage(
        reply,
        status,
        PushPage({
          chrome,
          identifier: ctx.request.identifier,
          message: ctx.request.message,
          card: await recipient.card(ctx),
          files: await recipient.files(ctx),
          expiresAt: ctx.request.expires_at,
        }),
      );
    case "pull":
      request.recipientPageLoaded = true;
      return sendPage(
        reply,
        status,
        PullPage({
          chrome,
          identifier: ctx.request.identifier,
          csrf,
          message: ctx.request.message,
          card: await recipient.card(ctx),
          received: await recipient.files(ctx),
          rules: recipient.uploadRules(ctx),
          error: extra.error,
          receiverMessage: extra.receiverMessage,
        }),
      );
  }
}

/**
 * GET /r/<identifier>/: the recipient page of a link (spec: recipient page, completed page), the
 * same URL for every state of the request.
 */
export async function registerRequestPage(app: Router, deps: PageDeps): Promise<void> {
  app.get(
    "/r/:identifier/",
    {
      config: { public: true },
      schema: {
        operationId: "getRecipientPage",
        tags: ["recipient"],
        summary:
          "Recipient page: push files, pull uploader, two-factor step, completed or expired page (HTML)",
        params: IdentifierParams,
        querystring: Type.Object({ notice: Type.Optional(Type.String()) }),
        response: {
          200: htmlResponse("The page."),
          404: htmlResponse("Unknown, deleted or foreign link (one page for all)."),
          410: htmlResponse("The request expired."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await deps.session.load(request, reply);
      if (!ctx) return reply;
      const notice: TfaNotice | undefined = request.query.notice === "sent" ? { kind: "sent" } : undefined;
      return renderRequestPage(deps, request, reply, ctx, { notice });
    },
  );
}
