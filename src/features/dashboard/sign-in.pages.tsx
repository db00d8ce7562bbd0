import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiter } from "../../http/rate-limit.js";
import { AppError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { type DashboardKit, formField } from "./dashboard-kit.js";
import type { SessionsService } from "./sessions.service.js";
import { SignInRefused, type UsersService } from "./users.service.js";
import {
  CodeForm,
  EnrolmentForm,
  RecoveryCodesPage,
  SetPasswordForm,
  SetupLinkInvalid,
  SignInForm,
} from "./views/sign-in.views.js";

/** Where to go after sign-in: a dashboard path only (never another site). */
function safeNext(value: string): string {
  return /^\/dashboard\/[A-Za-z0-9/_.-]*$/.test(value) && !value.includes("//") && !value.includes("..")
    ? value
    : "/dashboard/";
}

/**
 * Sign-in, first setup and sign-out pages: /dashboard/sign-in (email and password), /sign-in/code
 * (TOTP or recovery code), /setup/<token> (password from a setup link), /setup/two-factor
 * (mandatory TOTP enrolment, recovery codes shown once), /sign-out and /sign-out-everywhere.
 */
export function signInPages(deps: {
  kit: DashboardKit;
  users: UsersService;
  sessions: SessionsService;
  rateLimiter: RateLimiter;
}): RouteModule {
  const { kit, users, sessions, rateLimiter } = deps;
  const caller = (request: FastifyRequest) => ({
    ip: request.ip,
    method: request.method,
    path: request.url.split("?")[0] ?? "",
  });
  const from = (request: FastifyRequest) => ({
    ip: request.ip,
    userAgent: String(request.headers["user-agent"] ?? ""),
  });
  const publicRoute = (operationId: string, summary: string) => ({
    config: { public: true },
    schema: kit.schema({ operationId, summary }),
  });
  /** Counts a sign-in attempt against the per-IP limit; false after sending the 429 page. */
  const limited = async (request: FastifyRequest, reply: FastifyReply, title: string) => {
    try {
      await rateLimiter.consume("auth-ip", request.ip);
      return false;
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== "RATE_LIMIT_REACHED") throw err;
      for (const [k, v] of Object.entries(err.headers ?? {})) reply.header(k, v);
      kit.renderPublic(
        request,
        reply,
        title,
        <p role="alert">Too many attempts from your network. Wait a minute and try again.</p>,
        429,
      );
      return true;
    }
  };
  /**
   * Replaces the request's session, whatever its cookie holds (a planted one included), by a new
   * one at `stage`: a new token at every step, so no session survives sign-in (no fixation).
   */
  const restart = async (
    request: FastifyRequest,
    reply: FastifyReply,
    user: { id: number; accountId: number },
    stage: "password" | "enrol" | "full",
  ) => {
    await sessions.end(readToken(request));
    const { token, maxAgeSeconds } = await sessions.start(user, stage, from(request));
    kit.setSessionCookie(request, reply, token, maxAgeSeconds);
    kit.clearPreSession(request, reply);
  };
  const readToken = (request: FastifyRequest) => kit.sessionToken(request);

  return async (app) => {
    app.get(
      "/dashboard/sign-in",
      publicRoute("dashboardSignInPage", "The sign-in form"),
      async (request, reply) => {
        const live = await kit.session(request);
        const next = safeNext(String((request.query as Record<string, unknown>)?.next ?? ""));
        if (live?.session.stage === "full") return kit.redirect(reply, next);
        return kit.renderPublic(
          request,
          reply,
          "Sign in",
          <SignInForm csrfToken={kit.csrfToken(request, reply, "pre-session")} next={next} />,
        );
      },
    );

    app.post(
      "/dashboard/sign-in",
      publicRoute("dashboardSignIn", "Check email and password"),
      async (request, reply) => {
        if (!kit.checkCsrf(request, reply, "pre-session")) return reply;
        if (await limited(request, reply, "Sign in")) return reply;
        const email = formField(request, "email");
        const next = safeNext(formField(request, "next"));
        try {
          const user = await users.checkPassword(email, formField(request, "password"), caller(request));
          if (user.status === "pending") {
            await restart(request, reply, user, "enrol");
            return kit.redirect(reply, "/dashboard/setup/two-factor");
          }
          await restart(request, reply, user, "password");
          return kit.redirect(reply, `/dashboard/sign-in/code?next=${encodeURIComponent(next)}`);
        } catch (err) {
          if (!(err instanceof SignInRefused)) throw err;
          return kit.renderPublic(
            request,
            reply,
            "Sign in",
            <SignInForm
              csrfToken={kit.csrfToken(request, reply, "pre-session")}
              next={next}
              email={email}
              error={err.message}
            />,
            400,
          );
        }
      },
    );

    app.get(
      "/dashboard/sign-in/code",
      publicRoute("dashboardSignInCodePage", "The two-factor code form"),
      async (request, reply) => {
        const live = await kit.session(request);
        if (live?.session.stage !== "password") return kit.redirect(reply, "/dashboard/sign-in");
        const next = safeNext(String((request.query as Record<string, unknown>)?.next ?? ""));
        return kit.renderPublic(
          request,
          reply,
          "Two-factor code",
          <CodeForm csrfToken={kit.csrfToken(request, reply)} next={next} />,
        );
      },
    );

    app.post(
      "/dashboard/sign-in/code",
      publicRoute("dashboardSignInCode", "Check the two-factor code"),
      async (request, reply) => {
        if (!kit.checkCsrf(request, reply)) return reply;
        if (await limited(request, reply, "Two-factor code")) return reply;
        const live = await kit.session(request);
        if (live?.session.stage !== "password") return kit.redirect(reply, "/dashboard/sign-in");
        const next = safeNext(formField(request, "next"));
        try {
          await users.checkSecondFactor(live.userId, formField(request, "code"), caller(request));
        } catch (err) {
          if (!(err instanceof SignInRefused)) throw err;
          return kit.renderPublic(
            request,
            reply,
            "Two-factor code",
            <CodeForm csrfToken={kit.csrfToken(request, reply)} next={next} error={err.message} />,
            400,
          );
        }
        await restart(request, reply, { id: live.userId, accountId: live.accountId }, "full");
        return kit.redirect(reply, next);
      },
    );

    app.get(
      "/dashboard/setup/two-factor",
      publicRoute("dashboardEnrolmentPage", "Two-factor enrolment: QR code, secret and the confirming code"),
      async (request, reply) => {
        const live = await kit.session(request);
        if (live?.session.stage !== "enrol") return kit.redirect(reply, "/dashboard/sign-in");
        const enrolment = await users.enrolment(live.userId);
        return kit.renderPublic(
          request,
          reply,
          "Set up two-factor authentication",
          <EnrolmentForm csrfToken={kit.csrfToken(request, reply)} email={live.email} {...enrolment} />,
        );
      },
    );

    app.post(
      "/dashboard/setup/two-factor",
      publicRoute("dashboardConfirmEnrolment", "Confirm two-factor enrolment; shows the recovery codes once"),
      async (request, reply) => {
        if (!kit.checkCsrf(request, reply)) return reply;
        if (await limited(request, reply, "Set up two-factor authentication")) return reply;
        const live = await kit.session(request);
        if (live?.session.stage !== "enrol") return kit.redirect(reply, "/dashboard/sign-in");
        let codes: string[];
        try {
          codes = await users.confirmEnrolment(live.userId, formField(request, "code"), caller(request));
        } catch (err) {
          if (!(err instanceof SignInRefused)) throw err;
          const enrolment = await users.enrolment(live.userId);
          return kit.renderPublic(
            request,
            reply,
            "Set up two-factor authentication",
            <EnrolmentForm
              csrfToken={kit.csrfToken(request, reply)}
              email={live.email}
              error={err.message}
              {...enrolment}
            />,
            400,
          );
        }
        await restart(request, reply, { id: live.userId, accountId: live.accountId }, "full");
        return kit.renderPublic(
          request,
          reply,
          "Save your recovery codes",
          <RecoveryCodesPage codes={codes} />,
        );
      },
    );

    app.get(
      "/dashboard/setup/:token",
      publicRoute("dashboardSetupPage", "Set a password from a setup link"),
      async (request, reply) => {
        const token = (request.params as { token: string }).token;
        const user = await users.bySetupToken(token);
        if (!user) return kit.renderPublic(request, reply, "Setup link not valid", <SetupLinkInvalid />, 404);
        return kit.renderPublic(
          request,
          reply,
          "Welcome to Ferry",
          <SetPasswordForm
            csrfToken={kit.csrfToken(request, reply, "pre-session")}
            email={user.email}
            token={token}
          />,
        );
      },
    );

    app.post(
      "/dashboard/setup/:token",
      publicRoute("dashboardSetPassword", "Set the password of a setup link"),
      async (request, reply) => {
        if (!kit.checkCsrf(request, reply, "pre-session")) return reply;
        if (await limited(request, reply, "Welcome to Ferry")) return reply;
        const token = (request.params as { token: string }).token;
        const password = formField(request, "password");
        const user = await users.bySetupToken(token);
        if (!user) return kit.renderPublic(request, reply, "Setup link not valid", <SetupLinkInvalid />, 404);
        const error =
          password !== formField(request, "password_confirm") ? "The two passwords differ." : undefined;
        try {
          if (error) throw new SignInRefused(error);
          await users.setPasswordFromLink(token, password);
        } catch (err) {
          if (!(err instanceof SignInRefused)) throw err;
          return kit.renderPublic(
            request,
            reply,
            "Welcome to Ferry",
            <SetPasswordForm
              csrfToken={kit.csrfToken(request, reply, "pre-session")}
              email={user.email}
              token={token}
              error={err.message}
            />,
            400,
          );
        }
        await restart(request, reply, user, "enrol");
        return kit.redirect(reply, "/dashboard/setup/two-factor");
      },
    );

    app.post(
      "/dashboard/sign-out",
      publicRoute("dashboardSignOut", "Sign out of this browser"),
      async (request, reply) => {
        // Without a session there is nothing to end: back to sign-in.
        if (!readToken(request)) return kit.redirect(reply, "/dashboard/sign-in");
        if (!kit.checkCsrf(request, reply)) return reply;
        await sessions.end(readToken(request));
        kit.clearSessionCookie(request, reply);
        return kit.redirect(reply, "/dashboard/sign-in");
      },
    );

    kit.post(
      app,
      "/dashboard/sign-out-everywhere",
      { operationId: "dashboardSignOutEverywhere", summary: "End every session of the signed-in user" },
      async (request, reply, ctx) => {
        await users.signOutEverywhere({
          ...caller(request),
          accountId: ctx.user.accountId,
          userId: ctx.user.userId,
        });
        kit.clearSessionCookie(request, reply);
        return kit.redirect(reply, "/dashboard/sign-in");
      },
    );

    kit.get(
      app,
      "/dashboard",
      { operationId: "dashboardHome", summary: "The dashboard's first page" },
      async (_request, reply) => kit.redirect(reply, "/dashboard/applications"),
    );
  };
}
