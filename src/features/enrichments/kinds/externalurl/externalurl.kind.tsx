/**
 * The `externalurl` kind: the recipient is sent to a page of the owner and comes back through a
 * signed return link (ADR 0065); the return, or the owner's `complete` call, completes the step.
 * No vendor: its only provider is `local` (Ferry itself).
 */
import type { VNode } from "preact";
import { Type } from "typebox";
import { ValidationError } from "../../../../shared/errors.js";
import type { EnrichmentKind, EnrichmentView } from "../../enrichment-kind.js";
import { externalUrlRoutes, externalUrlSandboxRoutes } from "./externalurl.routes.js";

/** What the owner gives. */
export interface ExternalUrlPayload extends Record<string, unknown> {
  url: string;
  label: string | null;
}

const MAX_URL = 2048;
const MAX_LABEL = 120;

/** Reads `url`: https, or http for localhost on a sandbox deployment; no credentials in it. */
function readUrl(raw: unknown, sandbox: boolean): string {
  if (typeof raw !== "string" || raw.trim() === "")
    throw ValidationError.field("url", "This field is required.");
  const text = raw.trim();
  if (text.length > MAX_URL)
    throw ValidationError.field("url", `Ensure this field has no more than ${MAX_URL} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw ValidationError.field("url", "Enter a valid URL.");
  }
  const local = url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && local && sandbox))
    throw ValidationError.field(
      "url",
      "Enter an https:// URL (http:// only for localhost on a sandbox deployment).",
    );
  if (url.username || url.password)
    throw ValidationError.field("url", "A URL with a user name or password is not accepted.");
  return url.toString();
}

function readLabel(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === "") return null;
  if (typeof raw !== "string") throw ValidationError.field("label", "Not a valid string.");
  if (raw.length > MAX_LABEL)
    throw ValidationError.field("label", `Ensure this field has no more than ${MAX_LABEL} characters.`);
  return raw.trim() || null;
}

function hostOf(url: string): string {
  return new URL(url).host;
}

/** The step page: where the button leads, then the button (a form post, so the return cookie is set). */
function StepBody(props: {
  view: EnrichmentView<ExternalUrlPayload>;
  csrf: string;
  action: string;
  t: (
    key: "externalurl.go" | "externalurl.leaving" | "externalurl.returned",
    values?: Record<string, string>,
  ) => string;
}): VNode {
  const { view, t } = props;
  const host = hostOf(view.payload.url);
  if (view.state !== "pending") return <p>{t("externalurl.returned")}</p>;
  return (
    <form method="post" action={props.action}>
      <input type="hidden" name="csrf_token" value={props.csrf} />
      <p>{t("externalurl.leaving", { host })}</p>
      <button type="submit" class="fy-button fy-button-primary">
        {view.payload.label ?? t("externalurl.go", { host })}
      </button>
    </form>
  );
}

/** The externalurl kind's descriptor. */
export const externalUrlKind: EnrichmentKind<ExternalUrlPayload> = {
  name: "externalurl",
  module: "externalurl",
  resource: "externalurl",
  schemaName: "ExternalUrl",
  summary: "Send the recipient to a page of yours and back",
  statuses: ["pending", "opened", "returned", "completed", "expired"],
  initialStatus: "pending",
  finalStatuses: ["returned", "completed"],
  expiredStatus: "expired",
  createFields: {
    url: Type.String({
      format: "uri",
      maxLength: MAX_URL,
      description:
        "Where the recipient is sent: https:// (http://localhost on a sandbox). Ferry appends `ferry_return`, the signed link back.",
    }),
    label: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_LABEL }), Type.Null()], {
        description: "The button's text on the recipient's step (default: “Continue to <host>”).",
      }),
    ),
  },
  updateFields: {
    url: Type.Optional(Type.String({ format: "uri", maxLength: MAX_URL })),
    label: Type.Optional(Type.Union([Type.String({ maxLength: MAX_LABEL }), Type.Null()])),
  },
  presentedFields: {
    url: Type.String(),
    label: Type.Union([Type.String(), Type.Null()]),
    opened_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When the recipient last left for the URL.",
    }),
    returned_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When the recipient came back (status `returned`).",
    }),
  },
  readPayload(body, ctx) {
    const current = (ctx.current ?? {}) as Partial<ExternalUrlPayload>;
    const url =
      body.url !== undefined || ctx.creating ? readUrl(body.url, ctx.config.isSandbox) : (current.url ?? "");
    const label = body.label !== undefined ? readLabel(body.label) : (current.label ?? null);
    return { url, label };
  },
  present(view) {
    const result = view.result ?? {};
    return {
      url: view.payload.url,
      label: view.payload.label,
      opened_at: typeof result.opened_at === "string" ? result.opened_at : null,
      returned_at: typeof result.returned_at === "string" ? result.returned_at : null,
    };
  },
  sensitiveResult: false,
  retentionDays: () => null,
  providers: {
    local: {
      id: "local",
      credentials: {},
      load: async () => (await import("./providers/local.js")).createLocalExternalUrl,
    },
  },
  session: {
    summary: (view, i18n) => i18n.t(`externalurl.status.${statusKey(view.status)}`),
    actionLabel: (view, i18n) =>
      view.payload.label ?? i18n.t("externalurl.go", { host: hostOf(view.payload.url) }),
    render: (ctx) => (
      <StepBody
        view={ctx.feature}
        csrf={ctx.csrf}
        action={`${ctx.stepBase}act`}
        t={(key, values) => ctx.i18n.t(key, values)}
      />
    ),
    formActionOrigins: (view) => [new URL(view.payload.url).origin],
    async act(ctx, _form, services) {
      const opened = { ...(ctx.feature.result ?? {}), opened_at: services.now() };
      await services.setStatus("opened", { result: opened, auditValue: "externalurl opened" });
      const target = new URL(ctx.feature.payload.url);
      target.searchParams.set("ferry_return", services.returnLink());
      return { redirect: target.toString() };
    },
    async returned(ctx, services) {
      if (ctx.feature.state !== "pending") return;
      const result = { ...(ctx.feature.result ?? {}), returned_at: services.now() };
      await services.setStatus("returned", { result, auditValue: "externalurl returned" });
    },
  },
  routes: externalUrlRoutes,
  sandboxRoutes: externalUrlSandboxRoutes,
};

function statusKey(status: string): "pending" | "opened" | "returned" | "completed" | "expired" {
  return (
    (["pending", "opened", "returned", "completed", "expired"] as const).find((s) => s === status) ??
    "pending"
  );
}
