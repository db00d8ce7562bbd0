import type { FastifyRequest } from "fastify";
import { SCOPE_AREAS } from "../../http/scopes.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import type { AccountApplications, ApplicationsActor } from "../auth/index.js";
import { type DashboardKit, formField, type PageContext } from "./dashboard-kit.js";
import { ApplicationsPage } from "./views/applications.views.js";

/** The scopes chosen in the create form: "*" for everything, else each area's level. */
function chosenScopes(request: FastifyRequest): string[] {
  if (formField(request, "access") !== "areas") return ["*"];
  const scopes: string[] = [];
  for (const area of SCOPE_AREAS) {
    const level = formField(request, `scope_${area}`);
    if (level === "read") scopes.push(`${area}:read`);
    else if (level === "write") scopes.push(area);
  }
  return scopes;
}

/**
 * /dashboard/applications: the account's applications and API keys; create (the key shown once,
 * with a copy button), scopes, revoke (through the auth service's revoke path).
 */
export function applicationsPages(deps: {
  kit: DashboardKit;
  applications: AccountApplications;
}): RouteModule {
  const { kit, applications } = deps;
  const actor = (request: FastifyRequest, ctx: PageContext): ApplicationsActor => ({
    accountId: ctx.user.accountId,
    who: `user:${ctx.user.userId}`,
    ip: request.ip,
    method: request.method,
    path: request.url.split("?")[0] ?? "",
  });
  const options = { title: "Applications", section: "applications" as const, withScript: true };
  return async (app) => {
    kit.get(
      app,
      "/dashboard/applications",
      { operationId: "dashboardListApplications", summary: "The account's applications" },
      async (request, reply, ctx) => {
        const query = (request.query as Record<string, unknown>) ?? {};
        const revoked = Number(query.revoked);
        const list = await applications.list(ctx.user.accountId);
        const gone = list.find((a) => a.id === revoked && !a.active);
        // The key of an application just created, handed over once by the create form's redirect.
        const flash = query.created !== undefined ? kit.takeFlash(request, reply) : undefined;
        const made = list.find((a) => a.id === Number(flash?.application) && a.active);
        const apiKey = typeof flash?.apiKey === "string" ? flash.apiKey : undefined;
        const notice = gone
          ? `Revoked "${gone.name}": its key and tokens no longer work.`
          : query.created !== undefined && !made
            ? "The new key was shown once and is not shown again. If you did not copy it, revoke that application and create another."
            : undefined;
        return kit.render(
          request,
          reply,
          ctx,
          options,
          <ApplicationsPage
            csrfToken={ctx.csrfToken}
            applications={list}
            areas={SCOPE_AREAS}
            created={made && apiKey ? { application: made, apiKey } : undefined}
            notice={notice}
          />,
        );
      },
    );

    kit.post(
      app,
      "/dashboard/applications",
      { operationId: "dashboardCreateApplication", summary: "Create an application; shows its key once" },
      async (request, reply, ctx) => {
        const name = formField(request, "name");
        const scopes = chosenScopes(request);
        try {
          if (scopes.length === 0)
            throw new ValidationError({
              scopes: ["Choose at least one area, or give access to everything."],
            });
          const created = await applications.create(actor(request, ctx), { name, scopes });
          // Post/redirect/get: a reload of the page that shows the key creates nothing more.
          kit.setFlash(request, reply, { application: created.application.id, apiKey: created.api_key });
          return kit.redirect(reply, `/dashboard/applications?created=${created.application.id}`);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          return kit.render(
            request,
            reply,
            ctx,
            { ...options, status: 400 },
            <ApplicationsPage
              csrfToken={ctx.csrfToken}
              applications={await applications.list(ctx.user.accountId)}
              areas={SCOPE_AREAS}
              error={Object.values(err.fields).flat().join(" ")}
              name={name}
            />,
          );
        }
      },
    );

    kit.post(
      app,
      "/dashboard/applications/:id/revoke",
      { operationId: "dashboardRevokeApplication", summary: "Revoke an application" },
      async (request, reply, ctx) => {
        const id = Number((request.params as { id: string }).id);
        if (!Number.isSafeInteger(id)) throw new AppError("RESOURCE_NOT_FOUND", "No such application.");
        const list = await applications.list(ctx.user.accountId);
        const target = list.find((a) => a.id === id);
        if (!target) throw new AppError("RESOURCE_NOT_FOUND", "No such application.");
        if (!target.active) return kit.redirect(reply, `/dashboard/applications?revoked=${id}`);
        // Revoking cuts off whatever uses the key: the name typed back confirms the right one.
        if (formField(request, "confirm_name").trim() !== target.name.trim()) {
          return kit.render(
            request,
            reply,
            ctx,
            { ...options, status: 400 },
            <ApplicationsPage
              csrfToken={ctx.csrfToken}
              applications={list}
              areas={SCOPE_AREAS}
              confirmError={{
                id,
                message: `Type the application's name, ${target.name}, exactly to revoke it. Nothing was revoked.`,
              }}
            />,
          );
        }
        await applications.revoke(actor(request, ctx), id);
        return kit.redirect(reply, `/dashboard/applications?revoked=${id}`);
      },
    );
  };
}
