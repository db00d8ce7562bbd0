/**
 * Enrichment steps in the recipient's session (ADR 0063, 0065): the step page
 * `/s/<token>/steps/<featureId>/` shown by the step's kind, its form posts (`act`, CSRF-checked,
 * 409 while the step waits for its `after` features), and the return link `/steps/return/<signed>`
 * that brings the recipient back from an owner's or a vendor's page: it holds no session token, and
 * counts only in the browser that left (a cookie set by the act).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import { Type } from "typebox";
import { AppError } from "../../shared/errors.js";
import type { Router } from "../../shared/feature.js";
import { Layout } from "../../web/layout.js";
import type { EnrichmentSteps, StepInput } from "../enrichments/index.js";
import { Alert, htmlResponse, isHttps, readCookies, sendPage, setCookie } from "../recipient/index.js";
import type { SessionPage, SessionPages } from "./session.context.js";

const tags = ["session"];
const StepParams = Type.Object({ token: Type.String(), featureId: Type.Integer({ minimum: 1 }) });
const AssetParams = Type.Object({
  token: Type.String(),
  featureId: Type.Integer({ minimum: 1 }),
  name: Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$" }),
});

declare module "fastify" {
  interface FastifyRequest {
    /** Origins the page's forms may lead to (a step whose act redirects away), for its CSP. */
    stepFormActions: string[] | undefined;
    /** The step page shows the signing view: it is sent with the signing page's CSP. */
    stepSigningPage: boolean;
  }
}

/** How the recipient of a session was authenticated, as the consent ledger records it. */
function authMethodOf(kit: SessionPages, page: SessionPage): string {
  const code = kit.tfaSubject(page);
  return code ? `link+${code.channel}_code` : "link";
}

/** `scheme://host` of the session as the recipient uses it (the account's custom host or PUBLIC_BASE_URL). */
async function originOf(kit: SessionPages, request: FastifyRequest, page: SessionPage): Promise<string> {
  const { config, branding } = kit.deps;
  const base = new URL(config.publicBaseUrl);
  const host = request.hostname.toLowerCase().replace(/:\d+$/, "");
  if (host !== base.hostname && (await branding.accountForHost(host)) === page.account.id)
    return `${base.protocol}//${request.host.toLowerCase()}`;
  return config.publicBaseUrl;
}

/** The step page: the step's title, its kind's body or why it is locked, and the way back. */
function StepPage(props: {
  chrome: ReturnType<SessionPages["chrome"]>;
  base: string;
  title: string;
  description: string;
  locked: string | undefined;
  error: string | undefined;
  body: VNode | undefined;
}): VNode {
  const { t } = props.chrome.i18n;
  return (
    <Layout title={props.title} {...props.chrome}>
      <p>
        <a href={props.base}>{t("step.back")}</a>
      </p>
      <section class="fy-card fy-feature fy-step" id="step">
        <h1>{props.title}</h1>
        {props.description ? <p class="fy-message">{props.description}</p> : null}
        {props.error ? <Alert kind="error" text={props.error} id="step-error" /> : null}
        {props.locked ? (
          <p class="fy-locked" id="step-locked">
            <span class="fy-badge fy-badge-locked">{t("step.lockedTitle")}</span> {props.locked}
          </p>
        ) : (
          props.body
        )}
      </section>
    </Layout>
  );
}

/** Registers the step page, its acts and the return link on the session's routes. */
export function registerSessionSteps(app: Router, deps: { kit: SessionPages; steps: EnrichmentSteps }): void {
  const { kit, steps } = deps;
  const { sessions } = kit.deps;

  /** The step of a session page: visible to this recipient and of an enrichment kind, or undefined. */
  const stepOf = async (page: SessionPage, featureId: number) => {
    const feature = await sessions.feature(page.session, featureId);
    return feature && steps.isStep(feature.row) ? feature : undefined;
  };

  const inputOf = async (
    request: FastifyRequest,
    page: SessionPage,
    row: StepInput["row"],
  ): Promise<StepInput> => {
    const { recipient, item } = page.session;
    const chrome = kit.chrome(page, request);
    return {
      row,
      session: {
        base: page.base,
        containerId: page.session.container.id,
        recipientId: recipient.id,
        recipientItemId: item.id,
        recipientName: [recipient.first_name, recipient.last_name].filter(Boolean).join(" "),
        authMethod: authMethodOf(kit, page),
        ip: request.ip,
        userAgent: String(request.headers["user-agent"] ?? ""),
      },
      csrf: kit.csrfToken(request, page),
      stepBase: `${page.base}steps/${row.id}/`,
      i18n: chrome.i18n,
      origin: await originOf(kit, request, page),
    };
  };

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    page: SessionPage,
    featureId: number,
    status: number,
    error?: string,
  ) => {
    const feature = await stepOf(page, featureId);
    if (!feature) return kit.notFoundPage(reply);
    const chrome = kit.chrome(page, request);
    const input = await inputOf(request, page, feature.row);
    const locked = feature.waitsFor.length
      ? chrome.i18n.t("step.locked", {
          titles: feature.waitsFor.map((w) => w.title || `#${w.id}`).join(", "),
        })
      : undefined;
    const body = locked || feature.state === "expired" ? undefined : await steps.render(input);
    if (!locked) {
      request.stepFormActions = await steps.formActionOrigins(feature.row);
      request.stepSigningPage = feature.state === "pending" && (await steps.signingPage(input));
    }
    request.sessionShown = true;
    return sendPage(
      reply,
      status,
      StepPage({
        chrome,
        base: page.base,
        title: feature.row.title || chrome.i18n.t("step.untitled", { number: String(featureId) }),
        description: feature.row.description,
        locked,
        error,
        body: feature.state === "expired" ? <p>{chrome.i18n.t("session.state.expired")}</p> : body,
      }),
    );
  };

  app.get(
    "/s/:token/steps/:featureId/",
    {
      config: { public: true },
      schema: {
        operationId: "getSessionStep",
        tags,
        summary: "An enrichment step of the session, shown by its kind (locked steps say what they wait for)",
        params: StepParams,
        response: { 200: htmlResponse("The step page."), 404: htmlResponse("Unknown link or step.") },
      },
    },
    async (request, reply) => {
      const page = await kit.load(request, reply, request.params.token);
      if (!page) return reply;
      if (!kit.unlocked(request, page)) return reply.redirect(page.base, 303);
      return show(request, reply, page, request.params.featureId, 200);
    },
  );

  app.get(
    "/s/:token/steps/:featureId/files/:name",
    {
      config: { public: true },
      schema: {
        operationId: "getSessionStepFile",
        tags,
        summary:
          "A file of a step page (the document to sign, a signer's copy of the sealed PDF), read-only: never cached, nothing counted or consumed",
        params: AssetParams,
        response: {
          200: {
            description:
              "The file, as its kind serves it: inline, or as a download when it has a name (the esign document and sealed copy are PDFs).",
            content: { "application/pdf": { schema: Type.String({ format: "binary" }) } },
          },
          404: htmlResponse("Unknown link, step or file, a step that waits, or not for this recipient."),
        },
      },
    },
    async (request, reply) => {
      const page = await kit.load(request, reply, request.params.token);
      if (!page) return reply;
      // Before the code step, and while the step waits for others, there is nothing to see.
      if (!kit.unlocked(request, page)) return kit.notFoundPage(reply);
      const feature = await stepOf(page, request.params.featureId);
      if (!feature || feature.waitsFor.length) return kit.notFoundPage(reply);
      const asset = await steps.asset(await inputOf(request, page, feature.row), request.params.name);
      if (!asset) return kit.notFoundPage(reply);
      return reply
        .code(200)
        .type(asset.type)
        .header("content-length", String(asset.body.length))
        .header(
          "content-disposition",
          asset.filename ? `attachment; filename="${asset.filename.replace(/[^\w.-]/g, "_")}"` : "inline",
        )
        .send(asset.body as unknown as string); // bytes: the schema's "binary" string
    },
  );

  app.post(
    "/s/:token/steps/:featureId/act",
    {
      config: { public: true },
      schema: {
        operationId: "actOnSessionStep",
        tags,
        summary: "A form post of a step (by its kind): 303 onwards, or the step page with why it was refused",
        consumes: ["application/x-www-form-urlencoded"],
        params: StepParams,
        // A signing form's `values` carries its signature images (the kind caps each of them).
        body: Type.Record(Type.String(), Type.String({ maxLength: 1_000_000 })),
        response: {
          303: Type.Null({
            description:
              "Onwards: the kind's next page (an owner's or vendor's page) or back to the session.",
          }),
          404: htmlResponse("Unknown link or step."),
          409: htmlResponse("The step waits for other steps to be done first."),
          422: htmlResponse("The step is no longer open."),
        },
      },
    },
    async (request, reply) => {
      const page = await kit.load(request, reply, request.params.token);
      if (!page) return reply;
      const form = request.body as Record<string, string>;
      kit.checkCsrf(request, page, form.csrf_token);
      if (!kit.unlocked(request, page)) return reply.redirect(page.base, 303);
      const { featureId } = request.params;
      const feature = await stepOf(page, featureId);
      if (!feature) return kit.notFoundPage(reply);
      const { t } = kit.chrome(page, request).i18n;
      if (feature.waitsFor.length) return show(request, reply, page, featureId, 409);
      if (feature.state !== "pending") return show(request, reply, page, featureId, 422, t("submit.closed"));
      try {
        const { result, cookie } = await steps.act(await inputOf(request, page, feature.row), form);
        if (cookie)
          setCookie(reply, cookie.name, cookie.value, {
            path: cookie.path,
            maxAgeSeconds: cookie.maxAgeSeconds,
            secure: isHttps(request, kit.deps.config.publicBaseUrl),
            sameSite: "Lax",
          });
        if ("redirect" in result) return reply.redirect(result.redirect, 303);
        if ("back" in result) return reply.redirect(`${page.base}#feature-${featureId}`, 303);
        return show(request, reply, page, featureId, result.status ?? 422, result.error);
      } catch (error) {
        if (error instanceof AppError && (error.status === 409 || error.status === 422))
          return show(request, reply, page, featureId, error.status, error.detail);
        throw error;
      }
    },
  );

  app.get(
    "/steps/return/:signed",
    {
      config: { public: true },
      schema: {
        operationId: "returnToSessionStep",
        tags,
        summary:
          "Where an owner's or vendor's page sends the recipient back (signed; only in the browser that left)",
        params: Type.Object({ signed: Type.String({ maxLength: 600 }) }),
        response: {
          303: Type.Null({ description: "To the session, the step recorded by its kind." }),
          404: htmlResponse("Unknown, altered or expired link, or another browser (one page for all)."),
        },
      },
    },
    async (request, reply) => {
      const link = steps.verifyReturn(request.params.signed, readCookies(request));
      const token = link && (await sessions.sessionTokenOf(link.featureId, link.itemId));
      const page = token ? await kit.resolve(request, token) : undefined;
      const feature = page && link ? await stepOf(page, link.featureId) : undefined;
      if (!page || !link || !feature) return kit.notFoundPage(reply);
      try {
        await steps.returned(await inputOf(request, page, feature.row));
      } catch (error) {
        // Completed meanwhile (the owner's call, another return): the recipient just goes back.
        if (!(error instanceof AppError && (error.status === 409 || error.status === 422))) throw error;
      }
      setCookie(reply, `fy_step_${link.featureId}`, "", {
        path: "/steps/return/",
        maxAgeSeconds: 0,
        secure: isHttps(request, kit.deps.config.publicBaseUrl),
        sameSite: "Lax",
      });
      return reply.redirect(`${page.base}?notice=returned#feature-${link.featureId}`, 303);
    },
  );
}
