import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Router } from "../../shared/feature.js";
import type { MessageKey } from "../../shared/i18n/i18n.js";
import { pageTranslator } from "../../web/i18n.js";
import { expiresIn } from "./recipient.presenter.js";
import {
  type RecipientContext,
  type RecipientService,
  SUBMIT_REFUSALS,
  type SubmitRefusal,
} from "./recipient.service.js";
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
  error?: MessageKey | undefined;
  receiverMessage?: string;
  /** Submit was refused for want of a file: the page asks for the confirmation. */
  emptyRefused?: boolean;
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
  const csrf = session.csrfToken(request, ctx);
  const chrome = recipient.chrome(ctx, pageTranslator(request, ctx.account.defaultLanguage));
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
          kind: ctx.request.type === "pull" ? "pull" : "push",
        }),
      );
    case "tfa": {
      const tfa = await twoFactor.status(tfaSubjectOfRequest(ctx.request)!);
      let notice = extra.notice;
      if (notice?.kind === "send_limit" && Number.isNaN(notice.retryAfterSeconds))
        notice =
          tfa.sendsLeft === 0 ? { kind: "send_limit", retryAfterSeconds: tfa.retryAfterSeconds } : undefined;
      return sendPage(
        reply,
        status,
        TfaPage({
          chrome,
          base: pagePath(ctx.request.identifier),
          noun: "request",
          csrf,
          status: tfa,
          notice,
          card: await recipient.card(ctx),
        }),
      );
    }
    case "completed":
      return sendPage(
        reply,
        status,
        CompletedPage({
          chrome,
          card: await recipient.requesterCard(ctx),
          received: await recipient.files(ctx),
          receiverMessage: ctx.request.receiver_message,
          completedAt: ctx.request.completed_at,
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
          expiresIn: ctx.request.expires_at
            ? expiresIn(ctx.request.expires_at, recipient.now(), chrome.i18n)
            : undefined,
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
          emptyRefused: extra.emptyRefused ?? false,
          receiverMessage: extra.receiverMessage,
        }),
      );
  }
}

/**
 * The two-factor notice a redirect after a form post names (`?notice=wrong&left=3`); undefined
 * for anything else. The send limit's wait is read from the code state when the page renders.
 */
export function tfaNoticeOf(notice: string | undefined, left: string | undefined): TfaNotice | undefined {
  switch (notice) {
    case "sent":
    case "locked":
    case "locked_out":
    case "expired":
    case "no_code":
    case "malformed":
      return { kind: notice };
    case "wrong": {
      const attemptsLeft = Number(left);
      return Number.isSafeInteger(attemptsLeft) && attemptsLeft >= 0 && attemptsLeft < 100
        ? { kind: "wrong", attemptsLeft }
        : undefined;
    }
    case "send_limit":
      return { kind: "send_limit", retryAfterSeconds: Number.NaN };
    default:
      return undefined;
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
        querystring: Type.Object({
          notice: Type.Optional(Type.String({ description: "What the last two-factor form did." })),
          left: Type.Optional(Type.String({ description: "Attempts left after a wrong code." })),
          error: Type.Optional(Type.String({ description: "Why the last Submit was refused (pull page)." })),
        }),
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
      const notice = tfaNoticeOf(request.query.notice, request.query.left);
      const refusal = request.query.error;
      const error =
        refusal && Object.hasOwn(SUBMIT_REFUSALS, refusal)
          ? SUBMIT_REFUSALS[refusal as SubmitRefusal]
          : undefined;
      return renderRequestPage(deps, request, reply, ctx, {
        notice,
        error,
        emptyRefused: refusal === "empty",
      });
    },
  );
}
