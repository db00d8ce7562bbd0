import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Container } from "../../app/container.js";
import { suspendIdleTimeout } from "../../http/idle-timeout.js";
import { AppError } from "../../shared/errors.js";
import type { PageCaller, RecipientContext } from "./recipient.service.js";
import { isHttps, pagePath, readCookies, sendPage, setCookie } from "./recipient-http.js";
import { CSRF_COOKIE, SESSION_COOKIE } from "./recipient-tokens.js";
import {
  CompletedPage,
  ExpiredPage,
  NotFoundPage,
  PullPage,
  PushPage,
  type TfaNotice,
  TfaPage,
} from "./views/pages.js";

/** `:identifier` path parameter of recipient routes. */
export const IdentifierParams = Type.Object({
  identifier: Type.String({ description: "The request's public identifier from the recipient link." }),
});

const htmlResponse = (description: string) => ({
  description,
  content: { "text/html": { schema: Type.String() } },
});

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
 * HTML routes of recipient links (spec: recipient page, completed page; DESIGN §4): the page,
 * the two-factor forms, Submit and push downloads.
 */
export async function registerRecipientPages(app: FastifyInstance, container: Container): Promise<void> {
  const { recipient, twoFactor, recipientTokens: tokens, config, clock } = container;

  const notFoundPage = (reply: FastifyReply) =>
    sendPage(reply, 404, NotFoundPage({ chrome: recipient.chrome(undefined) }));

  /** The browser's CSRF secret for this link, set as a cookie when missing. */
  const csrfFor = (request: FastifyRequest, reply: FastifyReply, ctx: RecipientContext): string => {
    const cookies = readCookies(request);
    let secret = cookies[CSRF_COOKIE];
    if (!secret || !/^[A-Za-z0-9_-]{16,64}$/.test(secret)) {
      secret = tokens.newCsrfSecret();
      setCookie(reply, CSRF_COOKIE, secret, {
        path: pagePath(ctx.request.identifier),
        maxAgeSeconds: 7 * 86_400,
        secure: isHttps(request, config.publicBaseUrl),
        sameSite: "Strict",
      });
    }
    return tokens.csrfToken(ctx.request.identifier, secret);
  };

  const hasSession = (request: FastifyRequest, ctx: RecipientContext): boolean =>
    tokens.verifySession(
      ctx.request.id,
      ctx.request.identifier,
      readCookies(request)[SESSION_COOKIE],
      Math.floor(clock.now().getTime() / 1000),
    );

  /** Resolves the link (404 page when unknown) and records it on the request for AAA-0011. */
  const load = async (
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<RecipientContext | undefined> => {
    const { identifier } = request.params as { identifier: string };
    const ctx = await recipient.resolve(identifier, request.hostname);
    if (!ctx) {
      notFoundPage(reply);
      return undefined;
    }
    request.recipientCtx = ctx;
    return ctx;
  };

  /** Refuses a form post without a valid CSRF token (403 page). */
  const checkCsrf = (request: FastifyRequest, ctx: RecipientContext): void => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const token =
      typeof body.csrf_token === "string"
        ? body.csrf_token
        : (request.headers["x-csrf-token"] as string | undefined);
    if (!tokens.verifyCsrf(ctx.request.identifier, readCookies(request)[CSRF_COOKIE], token))
      throw new AppError(
        "NOT_AUTHORIZED",
        "The form expired or did not come from this page. Reload the page and try again.",
      );
  };

  const renderPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: RecipientContext,
    extra: {
      notice?: TfaNotice | undefined;
      status?: number;
      error?: string | undefined;
      receiverMessage?: string;
    } = {},
  ) => {
    const csrf = csrfFor(request, reply, ctx);
    const chrome = recipient.chrome(ctx);
    const kind = recipient.pageKind(ctx, hasSession(request, ctx));
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
            identifier: ctx.request.identifier,
            csrf,
            status: await twoFactor.status(ctx.request),
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
  };

  app.get(
    "/r/:identifier/",
    {
      config: { public: true },
      schema: {
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
      const ctx = await load(request, reply);
      if (!ctx) return reply;
      const { notice } = request.query as { notice?: string };
      return renderPage(request, reply, ctx, { notice: notice === "sent" ? { kind: "sent" } : undefined });
    },
  );

  const FormBody = Type.Object({
    csrf_token: Type.String({ description: "The CSRF token of the page's form." }),
  });

  app.post(
    "/r/:identifier/tfa/send",
    {
      config: { public: true },
      schema: {
        tags: ["recipient"],
        summary: "Send a two-factor code to the request's masked destination (form post; 303 to the page)",
        consumes: ["application/x-www-form-urlencoded"],
        params: IdentifierParams,
        body: FormBody,
        response: {
          303: Type.Null(),
          404: htmlResponse("Unknown link."),
          429: htmlResponse("Send limit reached."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await load(request, reply);
      if (!ctx) return reply;
      checkCsrf(request, ctx);
      if (recipient.pageKind(ctx, false) !== "tfa")
        return reply.code(303).header("location", pagePath(ctx.request.identifier)).send();
      const result = await twoFactor.sendCode(ctx.request, recipient.chrome(ctx).brandName);
      if (!result.ok) {
        reply.header("retry-after", String(result.retryAfterSeconds));
        return renderPage(request, reply, ctx, {
          status: 429,
          notice: { kind: "send_limit", retryAfterSeconds: result.retryAfterSeconds },
        });
      }
      return reply
        .code(303)
        .header("location", `${pagePath(ctx.request.identifier)}?notice=sent`)
        .send();
    },
  );

  app.post(
    "/r/:identifier/tfa/verify",
    {
      config: { public: true },
      schema: {
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
      const ctx = await load(request, reply);
      if (!ctx) return reply;
      checkCsrf(request, ctx);
      const { code } = request.body as { code: string };
      const result = await twoFactor.verifyCode(ctx.request, code);
      if (!result.ok) {
        const notice: TfaNotice =
          result.reason === "wrong"
            ? { kind: "wrong", attemptsLeft: result.attemptsLeft }
            : { kind: result.reason };
        return renderPage(request, reply, ctx, { status: 400, notice });
      }
      const expiresAt = Math.floor(clock.now().getTime() / 1000) + config.TFA_SESSION_SECONDS;
      setCookie(
        reply,
        SESSION_COOKIE,
        tokens.sessionValue(ctx.request.id, ctx.request.identifier, expiresAt),
        {
          path: pagePath(ctx.request.identifier),
          maxAgeSeconds: config.TFA_SESSION_SECONDS,
          secure: isHttps(request, config.publicBaseUrl),
          sameSite: "Lax",
        },
      );
      return reply.code(303).header("location", pagePath(ctx.request.identifier)).send();
    },
  );

  app.post(
    "/r/:identifier/submit",
    {
      config: { public: true },
      schema: {
        tags: ["recipient"],
        summary:
          "Submit a pull request with an optional reply message (completes it; 303 to the completed page)",
        consumes: ["application/x-www-form-urlencoded"],
        params: IdentifierParams,
        body: Type.Object({
          csrf_token: Type.String(),
          receiver_message: Type.Optional(Type.String({ maxLength: 10000 })),
        }),
        response: {
          303: Type.Null(),
          404: htmlResponse("Unknown link."),
          422: htmlResponse("Cannot submit now."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await load(request, reply);
      if (!ctx) return reply;
      checkCsrf(request, ctx);
      if (recipient.pageKind(ctx, hasSession(request, ctx)) !== "pull")
        return reply.code(303).header("location", pagePath(ctx.request.identifier)).send();
      const message = (request.body as { receiver_message?: string }).receiver_message ?? "";
      const result = await recipient.submit(ctx, message);
      if (!result.ok)
        return renderPage(request, reply, ctx, {
          status: 422,
          error: result.error,
          receiverMessage: message,
        });
      return reply.code(303).header("location", pagePath(ctx.request.identifier)).send();
    },
  );

  app.get(
    "/r/:identifier/files/:mediaId/download",
    {
      config: { public: true },
      schema: {
        tags: ["recipient"],
        summary:
          "Download one file of a push request (needs the two-factor session when the request has two-factor)",
        params: Type.Object({ identifier: Type.String(), mediaId: Type.Integer({ minimum: 1 }) }),
        response: {
          200: {
            description: "The file's bytes.",
            content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
          },
          206: {
            description: "A byte range of the file.",
            content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
          },
          303: Type.Null({ description: "Two-factor needed first: back to the page." }),
          404: htmlResponse("Unknown link or file."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await load(request, reply);
      if (!ctx) return reply;
      const kind = recipient.pageKind(ctx, hasSession(request, ctx));
      if (kind === "tfa") return reply.code(303).header("location", pagePath(ctx.request.identifier)).send();
      if (kind !== "push") return notFoundPage(reply);
      const { mediaId } = request.params as { mediaId: number };
      const download = await recipient
        .media()
        .openDownload(ctx.request.id, mediaId, request.headers.range, pageCaller(request));
      let settled = false;
      const settle = (complete: boolean) => {
        if (settled) return;
        settled = true;
        void download.settle(complete);
      };
      reply.raw.once("finish", () => settle(true));
      reply.raw.once("close", () => settle(reply.raw.writableFinished));
      reply.code(download.status as 200).headers(download.headers);
      return reply.send(download.body);
    },
  );
}
