import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { RateLimiter } from "../../http/rate-limit.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import type { RouteModule, Router } from "../../shared/feature.js";
import { pageLocale } from "../../web/i18n.js";
import {
  applyBrandedPageHeaders,
  applyRecipientHeaders,
  applySigningPageHeaders,
  pageAssets,
} from "../../web/security-headers.js";
import { tooManyRequestsPage } from "../../web/too-many-requests.js";
import type { EnrichmentSteps } from "../enrichments/index.js";
import type { MediaService } from "../media/index.js";
import { htmlResponse, isHttps, pageCaller, type TwoFactorService, tfaNoticeOf } from "../recipient/index.js";
import { actionSource, type SessionPage, type SessionPages, sessionBase } from "./session.context.js";
import {
  chatEntryView,
  NOTICES,
  type NoticeKey,
  REPLY_REFUSALS,
  renderSession,
  SUBMIT_REFUSALS,
} from "./session.render.js";
import { registerSessionFiles } from "./session-files.routes.js";
import { registerSessionSteps } from "./session-steps.routes.js";

const tags = ["session"];
const TokenParams = Type.Object({
  token: Type.String({ description: "The session token of the recipient item's link." }),
});
const FeatureParams = Type.Object({ token: Type.String(), featureId: Type.Integer({ minimum: 1 }) });

const ChatEntrySchema = Type.Object(
  {
    kind: Type.Union([Type.Literal("message"), Type.Literal("reply")]),
    id: Type.Integer(),
    author: Type.String(),
    title: Type.String(),
    body: Type.String(),
    created: Type.String({ format: "date-time" }),
  },
  { title: "SessionChatEntry" },
);
const ChatPage = Type.Object(
  {
    entries: Type.Array(ChatEntrySchema),
    open: Type.Boolean({ description: "Replies are taken." }),
    closed: Type.Union([Type.Literal("closed"), Type.Literal("expired"), Type.Null()], {
      description:
        "Why replies are no longer taken: `closed` (the sender closed the chat) or `expired` (the session expired); null while open.",
    }),
  },
  { title: "SessionChat" },
);

/** The page a form post is answered with on an error, or the redirect back on success (PRG). */
function backTo(reply: FastifyReply, page: SessionPage, notice?: NoticeKey, anchor = ""): FastifyReply {
  return reply.redirect(`${page.base}${notice ? `?notice=${notice}` : ""}${anchor}`, 303);
}

/** True for calls the page's script makes (JSON answers), false for plain form posts. */
function wantsJson(request: FastifyRequest): boolean {
  return String(request.headers.accept ?? "").includes("application/json");
}

/**
 * The recipient's session at `/s/<token>/`: the page, the code step, the chat, Submit, and (in
 * session-files.routes.ts) downloads, the zip of a feature's files, uploads and branding assets.
 * Every route of this module gets the recipient security headers, the per-IP and per-link rate
 * limits and its AAA-0011 entry (ABB-0020 when the session is shown) from this module's hooks.
 */
export function sessionRoutes(deps: {
  kit: SessionPages;
  twoFactor: TwoFactorService;
  rateLimiter: RateLimiter;
  media: MediaService;
  steps: EnrichmentSteps;
}): RouteModule {
  return async (app: Router) => {
    const { kit, twoFactor, rateLimiter } = deps;
    const { config, sessions } = kit.deps;
    app.decorateRequest("sessionPage", undefined);
    app.decorateRequest("sessionShown", false);
    app.decorateRequest("stepFormActions", undefined);
    app.decorateRequest("stepSigningPage", false);

    app.addHook("onRequest", async (request, reply) => {
      try {
        await rateLimiter.consume("recipient-ip", request.ip);
        const params = request.params as { token?: string; signed?: string };
        // A return link counts on its own key: one bucket per link, not one for every return.
        const key =
          params.token !== undefined ? `s:${params.token}` : `ret:${(params.signed ?? "").slice(-43)}`;
        await rateLimiter.consume("recipient-id", key);
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== "RATE_LIMIT_REACHED") throw err;
        applyRecipientHeaders(reply, isHttps(request, config.publicBaseUrl));
        reply.headers(err.headers);
        if (request.method === "GET" && !wantsJson(request) && !request.url.includes("/uploads"))
          return reply
            .code(429)
            .type("text/html; charset=utf-8")
            .send(tooManyRequestsPage(pageLocale(request)));
        throw err;
      }
    });

    app.addHook("onSend", async (request, reply, payload) => {
      const { token } = request.params as { token?: string };
      const base = token === undefined ? undefined : sessionBase(token);
      const assets = {
        ...pageAssets(request, base, config.publicBaseUrl),
        formActions: request.stepFormActions,
      };
      // A step page showing the signing view: its PDF viewer and signature pad need a little more.
      if (request.stepSigningPage)
        applySigningPageHeaders(reply, isHttps(request, config.publicBaseUrl), assets);
      else applyBrandedPageHeaders(reply, isHttps(request, config.publicBaseUrl), assets);
      const page = request.sessionPage;
      if (page) {
        try {
          await kit.recordCall(page, pageCaller(request), reply.statusCode, request.sessionShown);
        } catch (err) {
          request.log.error({ err }, "audit write failed for a session call");
        }
      }
      return payload;
    });

    // The one 404 page for any other path under /s/ (a link cut short, say).
    app.get("/s/*", { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
      kit.notFoundPage(reply),
    );

    app.get(
      "/s/:token/",
      {
        config: { public: true },
        schema: {
          operationId: "getSessionPage",
          tags,
          summary: "A recipient's session: the code step, the session, or the expired page (HTML)",
          params: TokenParams,
          querystring: Type.Object({
            notice: Type.Optional(Type.String({ description: "What the last form post did." })),
            left: Type.Optional(Type.String({ description: "Attempts left after a wrong code." })),
            refused: Type.Optional(
              Type.String({ description: "Why the last Submit was refused: uploading, empty or closed." }),
            ),
            feature: Type.Optional(Type.String({ description: "The feature whose Submit was refused." })),
          }),
          response: {
            200: htmlResponse("The page."),
            404: htmlResponse("Unknown, deleted, inactive or foreign link (one page for all)."),
            410: htmlResponse("Every feature of the session expired."),
          },
        },
      },
      async (request, reply) => {
        const page = await kit.load(request, reply, request.params.token);
        if (!page) return reply;
        const { notice: key, left, refused, feature } = request.query;
        const notice = key && Object.hasOwn(NOTICES, key) ? (key as NoticeKey) : undefined;
        const tfaNotice = notice ? undefined : tfaNoticeOf(key, left);
        const featureId = Number(feature);
        const submit =
          refused && Object.hasOwn(SUBMIT_REFUSALS, refused) && Number.isSafeInteger(featureId)
            ? {
                featureId,
                error: SUBMIT_REFUSALS[refused as keyof typeof SUBMIT_REFUSALS],
                confirmEmpty: refused === "empty",
              }
            : undefined;
        const chat =
          refused && Object.hasOwn(REPLY_REFUSALS, refused)
            ? { error: REPLY_REFUSALS[refused as keyof typeof REPLY_REFUSALS] }
            : undefined;
        return renderSession(kit, twoFactor, request, reply, page, { notice, tfaNotice, submit, chat });
      },
    );

    registerCodeStep(app, deps);
    registerChat(app, deps);

    app.post(
      "/s/:token/features/:featureId/submit",
      {
        config: { public: true },
        schema: {
          operationId: "submitSessionFeature",
          tags,
          summary: "Submit a pull feature with an optional message (completes it; 303 back to the session)",
          consumes: ["application/x-www-form-urlencoded"],
          params: FeatureParams,
          body: Type.Object({
            csrf_token: Type.String(),
            receiver_message: Type.Optional(Type.String({ maxLength: 10000 })),
            confirm_empty: Type.Optional(
              Type.String({ description: "`1` to submit a feature without any file (asked for first)." }),
            ),
          }),
          response: {
            303: Type.Null({
              description:
                "Back to the session: `?notice=submitted`, or `?refused=uploading|empty|closed&feature=<id>` when refused (a reload never posts again).",
            }),
            404: htmlResponse("Unknown link."),
          },
        },
      },
      async (request, reply) => {
        const page = await kit.load(request, reply, request.params.token);
        if (!page) return reply;
        kit.checkCsrf(request, page, request.body.csrf_token);
        if (!kit.unlocked(request, page)) return backTo(reply, page);
        const message = request.body.receiver_message ?? "";
        const { featureId } = request.params;
        const result = await sessions.submit(
          page.session,
          featureId,
          message,
          request.body.confirm_empty === "1",
          actionSource(pageCaller(request)),
        );
        if (result.ok) return backTo(reply, page, "submitted", `#feature-${featureId}`);
        if (result.reason === "absent") return kit.notFoundPage(reply);
        // Back to the page with the reason (PRG): a reload never posts again.
        return reply.redirect(
          `${page.base}?refused=${result.reason}&feature=${featureId}#feature-${featureId}`,
          303,
        );
      },
    );

    registerSessionSteps(app, deps);
    await registerSessionFiles(app, deps);
  };
}

/** The code step of a session whose container has an auth code: send a code, check it. */
function registerCodeStep(app: Router, deps: { kit: SessionPages; twoFactor: TwoFactorService }): void {
  const { kit, twoFactor } = deps;

  app.post(
    "/s/:token/tfa/send",
    {
      config: { public: true },
      schema: {
        operationId: "sendSessionCode",
        tags,
        summary: "Send a code to the session's masked destination (form post; 303 back to the session)",
        consumes: ["application/x-www-form-urlencoded"],
        params: TokenParams,
        body: Type.Object({ csrf_token: Type.String() }),
        response: {
          303: Type.Null({
            description:
              "Back to the session: `?notice=sent`, or `?notice=send_limit` (with Retry-After) or `?notice=locked_out` when refused.",
          }),
          404: htmlResponse("Unknown link."),
        },
      },
    },
    async (request, reply) => {
      const page = await kit.load(request, reply, request.params.token);
      if (!page) return reply;
      kit.checkCsrf(request, page, request.body.csrf_token);
      const subject = kit.tfaSubject(page);
      if (!subject || kit.unlocked(request, page)) return backTo(reply, page);
      const chrome = kit.chrome(page, request);
      const result = await twoFactor.sendCode(subject, chrome.brandName, chrome.i18n);
      if (result.ok) return backTo(reply, page, "sent");
      if (result.reason === "locked_out") return reply.redirect(`${page.base}?notice=locked_out`, 303);
      reply.header("retry-after", String(result.retryAfterSeconds));
      return reply.redirect(`${page.base}?notice=send_limit`, 303);
    },
  );

  app.post(
    "/s/:token/tfa/verify",
    {
      config: { public: true },
      schema: {
        operationId: "verifySessionCode",
        tags,
        summary: "Check a code; success sets the session cookie and redirects to the session",
        consumes: ["application/x-www-form-urlencoded"],
        params: TokenParams,
        body: Type.Object({ csrf_token: Type.String(), code: Type.String({ maxLength: 20 }) }),
        response: {
          303: Type.Null({
            description:
              "To the session with the cookie, or back to the code step with `?notice=wrong&left=<n>`, `locked`, `locked_out`, `expired`, `no_code` or `malformed`.",
          }),
          404: htmlResponse("Unknown link."),
        },
      },
    },
    async (request, reply) => {
      const page = await kit.load(request, reply, request.params.token);
      if (!page) return reply;
      kit.checkCsrf(request, page, request.body.csrf_token);
      const subject = kit.tfaSubject(page);
      if (!subject) return backTo(reply, page);
      const result = await twoFactor.verifyCode(subject, request.body.code);
      if (!result.ok) {
        const query = result.reason === "wrong" ? `wrong&left=${result.attemptsLeft}` : result.reason;
        return reply.redirect(`${page.base}?notice=${query}`, 303);
      }
      kit.startCodeSession(request, reply, page);
      return backTo(reply, page);
    },
  );
}

/**
 * The chat: new entries after the ones the page shows (polled by the page's script), and the
 * recipient's reply (a form post answered with a redirect, or the script's JSON call).
 */
function registerChat(app: Router, deps: { kit: SessionPages; rateLimiter: RateLimiter }): void {
  const { kit, rateLimiter } = deps;
  const { sessions } = kit.deps;

  /** The session of a chat call, unlocked and with a chat; 404 otherwise (JSON). */
  const chatSession = async (request: FastifyRequest, token: string): Promise<SessionPage> => {
    const page = await kit.resolve(request, token);
    if (page?.session.container.display_chat !== 1) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    if (!kit.unlocked(request, page)) throw new AppError("NOT_AUTHORIZED", "Enter the code first.");
    return page;
  };

  app.get(
    "/s/:token/chat",
    {
      config: { public: true },
      schema: {
        operationId: "listSessionChat",
        tags,
        summary: "Chat entries newer than the given ids: the owner's messages and this recipient's replies",
        params: TokenParams,
        querystring: Type.Object({
          after_message: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
          after_reply: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
        }),
        response: {
          200: ChatPage,
          403: htmlResponse("Enter the code first."),
          404: htmlResponse("Not found."),
        },
      },
    },
    async (request) => {
      const page = await chatSession(request, request.params.token);
      // A poll every few seconds is a reading, not an action: no AAA-0011 entry (replies have theirs).
      request.sessionPage = undefined;
      const card = await kit.card(page);
      const { t } = kit.chrome(page, request).i18n;
      const sender = card.name || page.account.name || t("card.sender");
      const entries = await sessions.chat(page.session, {
        message: request.query.after_message ?? 0,
        reply: request.query.after_reply ?? 0,
      });
      const closed = (await sessions.chatClosure(page.session)) ?? null;
      return {
        entries: entries.map((e) => chatEntryView(e, sender, t("chat.you"))),
        open: closed === null,
        closed,
      };
    },
  );

  app.post(
    "/s/:token/chat",
    {
      config: { public: true },
      schema: {
        operationId: "postSessionReply",
        tags,
        summary:
          "Reply in the chat (form post answered 303, or JSON with X-CSRF-Token answered 201); sends `message_reply`",
        consumes: ["application/x-www-form-urlencoded", "application/json"],
        params: TokenParams,
        body: Type.Object({
          csrf_token: Type.Optional(Type.String()),
          body: Type.String({ maxLength: 10000 }),
        }),
        response: {
          201: ChatEntrySchema,
          303: Type.Null({
            description:
              "Back to the session: `?notice=replied#chat`, or `?refused=reply_invalid|reply_closed|reply_limited#chat` when refused (a reload never posts again; `reply_limited` keeps its `Retry-After`).",
          }),
          400: htmlResponse("Empty or too long reply (JSON calls)."),
          404: htmlResponse("Not found."),
          422: htmlResponse("The chat is closed: its sender closed it, or the session expired (JSON calls)."),
          429: htmlResponse(
            "Too many replies from this link in a short time (SESSION_CHAT_REPLIES_PER_LINK per window): `Retry-After` says when to send again (JSON calls).",
          ),
        },
      },
    },
    async (request, reply) => {
      const json = wantsJson(request);
      const page = json
        ? await chatSession(request, request.params.token)
        : await kit.load(request, reply, request.params.token);
      if (!page) return reply;
      const header = request.headers["x-csrf-token"];
      kit.checkCsrf(
        request,
        page,
        json ? (typeof header === "string" ? header : undefined) : request.body.csrf_token,
      );
      if (!json && !kit.unlocked(request, page)) return backTo(reply, page);
      try {
        // Each reply is stored and called back: a link sends a few per minute, not hundreds.
        await rateLimiter.consume("session-reply", page.session.token);
      } catch (error) {
        if (json || !(error instanceof AppError) || error.code !== "RATE_LIMIT_REACHED") throw error;
        reply.header("retry-after", error.headers["retry-after"] ?? "60");
        return reply.redirect(`${page.base}?refused=reply_limited#chat`, 303);
      }
      try {
        const row = await sessions.reply(page.session, request.body.body, actionSource(pageCaller(request)));
        if (!json) return backTo(reply, page, "replied", "#chat");
        return reply.code(201).send({
          kind: "reply",
          id: row.id,
          author: kit.chrome(page, request).i18n.t("chat.you"),
          title: "",
          body: row.body,
          created: row.created,
        });
      } catch (error) {
        if (json || !(error instanceof AppError)) throw error;
        // Post/redirect/get (ADR 0026): the page says why; the page script puts the typed reply back.
        const reason = error instanceof ValidationError ? "reply_invalid" : "reply_closed";
        return reply.redirect(`${page.base}?refused=${reason}#chat`, 303);
      }
    },
  );
}
