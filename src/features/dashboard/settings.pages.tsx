import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, ValidationError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import type { AccountSettings, SettingsActor } from "./account-settings.service.js";
import { type DashboardKit, formField, type PageContext } from "./dashboard-kit.js";
import type { SessionsService } from "./sessions.service.js";
import type { UsersService } from "./users.service.js";
import { AccountSettingsPage, TeamPage } from "./views/settings.views.js";

const NOTICES: Record<string, string> = {
  profile: "Profile saved.",
  requests: "Request settings saved.",
  smtp: "SMTP settings saved.",
  "smtp-removed": "SMTP settings removed: the deployment's mail server is used again.",
  removed: "User removed: their sessions have ended.",
};

/**
 * /dashboard/settings (name shown on recipient pages, push expiry days, custom SMTP) and
 * /dashboard/settings/team (users: invite with a setup link, remove; sign out everywhere).
 */
export function settingsPages(deps: {
  kit: DashboardKit;
  settings: AccountSettings;
  users: UsersService;
  sessions: SessionsService;
}): RouteModule {
  const { kit, settings, users, sessions } = deps;
  const actor = (request: FastifyRequest, ctx: PageContext): SettingsActor => ({
    accountId: ctx.user.accountId,
    userId: ctx.user.userId,
    ip: request.ip,
    method: request.method,
    path: request.url.split("?")[0] ?? "",
  });
  const saved = (request: FastifyRequest) =>
    NOTICES[String((request.query as Record<string, unknown> | undefined)?.saved ?? "")];

  const accountPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: PageContext,
    extra: {
      status?: number;
      errors?: { section: "profile" | "requests" | "smtp"; messages: string[] };
    } = {},
  ) => {
    const current = await settings.read(ctx.user.accountId);
    return kit.render(
      request,
      reply,
      ctx,
      { title: "Settings", section: "settings", status: extra.status },
      <AccountSettingsPage
        csrfToken={ctx.csrfToken}
        name={current.name}
        email={current.email}
        pushExpiryDays={current.pushExpiryDays}
        smtp={
          current.smtp && {
            host: current.smtp.host,
            port: String(current.smtp.port),
            tls: current.smtp.tls,
            username: current.smtp.username ?? "",
            from_email: current.smtp.from_email,
            has_password: current.smtp.has_password,
          }
        }
        notice={saved(request)}
        errors={extra.errors}
      />,
    );
  };
  /** Runs a change; a ValidationError re-renders the page with the section's messages (400). */
  const attempt = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: PageContext,
    section: "profile" | "requests" | "smtp",
    change: () => Promise<void>,
    savedAs: string,
  ) => {
    try {
      await change();
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return accountPage(request, reply, ctx, {
        status: 400,
        errors: { section, messages: Object.values(err.fields).flat() },
      });
    }
    return kit.redirect(reply, `/dashboard/settings?saved=${savedAs}`);
  };

  const teamPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: PageContext,
    extra: {
      status?: number;
      invited?: { email: string; setupUrl: string };
      error?: string;
      inviteEmail?: string;
    } = {},
  ) =>
    kit.render(
      request,
      reply,
      ctx,
      { title: "Team and security", section: "settings", status: extra.status, withScript: true },
      <TeamPage
        csrfToken={ctx.csrfToken}
        users={await users.list(ctx.user.accountId)}
        me={ctx.user.userId}
        signedInSessions={await sessions.countSignedIn(ctx.user.userId)}
        notice={saved(request)}
        {...extra}
      />,
    );

  return async (app) => {
    kit.get(
      app,
      "/dashboard/settings",
      { operationId: "dashboardSettings", summary: "Account settings" },
      (r, p, c) => accountPage(r, p, c),
    );
    kit.post(
      app,
      "/dashboard/settings/profile",
      { operationId: "dashboardSaveProfile", summary: "Set the account's name" },
      (request, reply, ctx) =>
        attempt(
          request,
          reply,
          ctx,
          "profile",
          () => settings.rename(actor(request, ctx), formField(request, "name")),
          "profile",
        ),
    );
    kit.post(
      app,
      "/dashboard/settings/requests",
      { operationId: "dashboardSaveRequestSettings", summary: "Set push_expiry_days" },
      (request, reply, ctx) =>
        attempt(
          request,
          reply,
          ctx,
          "requests",
          () => settings.setPushExpiryDays(actor(request, ctx), formField(request, "push_expiry_days")),
          "requests",
        ),
    );
    kit.post(
      app,
      "/dashboard/settings/smtp",
      { operationId: "dashboardSaveSmtp", summary: "Set custom SMTP settings" },
      (request, reply, ctx) => {
        const password = formField(request, "password");
        const body: Record<string, unknown> = {
          host: formField(request, "host"),
          port: formField(request, "port"),
          tls: formField(request, "tls"),
          username: formField(request, "username"),
          from_email: formField(request, "from_email"),
        };
        // An empty password field keeps the stored one; the checkbox removes it.
        if (formField(request, "clear_password") === "1") body.password = "";
        else if (password !== "") body.password = password;
        return attempt(
          request,
          reply,
          ctx,
          "smtp",
          () => settings.setSmtp(actor(request, ctx), body),
          "smtp",
        );
      },
    );
    kit.post(
      app,
      "/dashboard/settings/smtp/remove",
      { operationId: "dashboardRemoveSmtp", summary: "Remove custom SMTP settings" },
      async (request, reply, ctx) => {
        await settings.removeSmtp(actor(request, ctx));
        return kit.redirect(reply, "/dashboard/settings?saved=smtp-removed");
      },
    );

    kit.get(
      app,
      "/dashboard/settings/team",
      { operationId: "dashboardTeam", summary: "Users and sessions" },
      (r, p, c) => {
        // The setup link of an invitation just made, handed over once by the invite form's redirect.
        const flash =
          (r.query as Record<string, unknown>)?.invited !== undefined ? kit.takeFlash(r, p) : undefined;
        const invited =
          typeof flash?.invited === "string" && typeof flash.setupUrl === "string"
            ? { email: flash.invited, setupUrl: flash.setupUrl }
            : undefined;
        return teamPage(r, p, c, invited ? { invited } : {});
      },
    );
    kit.post(
      app,
      "/dashboard/settings/team",
      { operationId: "dashboardInviteUser", summary: "Invite a colleague: shows their setup link" },
      async (request, reply, ctx) => {
        const email = formField(request, "email");
        try {
          const { user, setupUrl } = await users.invite(
            ctx.user.accountId,
            email,
            ctx.user.userId,
            actor(request, ctx),
          );
          // Post/redirect/get: the setup link is shown once, and a reload invites nobody again.
          kit.setFlash(request, reply, { invited: user.email, setupUrl });
          return kit.redirect(reply, "/dashboard/settings/team?invited=1");
        } catch (err) {
          if (
            !(err instanceof Error) ||
            !("code" in err) ||
            (err.code !== "INVALID_REQUEST" && err.code !== "CONFLICT")
          )
            throw err;
          return teamPage(request, reply, ctx, { status: 400, error: err.message, inviteEmail: email });
        }
      },
    );
    kit.post(
      app,
      "/dashboard/settings/team/:id/remove",
      { operationId: "dashboardRemoveUser", summary: "Remove a user of the account" },
      async (request, reply, ctx) => {
        const id = Number((request.params as { id: string }).id);
        // Only the confirmation form (opened by "Remove…") removes: a stray post removes nobody.
        if (formField(request, "confirm") !== "remove")
          throw new AppError("INVALID_REQUEST", "Confirm the removal from the team page.");
        await users.remove(actor(request, ctx), Number.isSafeInteger(id) ? id : -1);
        return kit.redirect(reply, "/dashboard/settings/team?saved=removed");
      },
    );
  };
}
