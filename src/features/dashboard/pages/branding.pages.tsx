/**
 * Branding: the account's white-label stylesheet, logo and custom recipient host, with a preview
 * of a recipient page as it will look. The preview is a sample request page rendered with the
 * recipient layout and the account's stylesheet, logo and fonts, served under the recipient
 * policy (framed only by the dashboard) in a frame without script.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import { AppError, ValidationError } from "../../../shared/errors.js";
import type { RouteModule } from "../../../shared/feature.js";
import { translator } from "../../../shared/i18n/i18n.js";
import { Layout, renderDocument } from "../../../web/layout.js";
import { assetSources, pageAssets } from "../../../web/security-headers.js";
import type { BrandingService } from "../../branding/index.js";
import { MessageCard, presentOwnerCard, RequesterCard } from "../../recipient/index.js";
import { type DashboardKit, dashboardActor, type PageContext } from "../dashboard-kit.js";
import { CsrfField, Notice } from "../views/layout.js";
import { queryOf } from "./page-parts.js";

/** The recipient policy, framed only by the dashboard (same origin). */
const PREVIEW_BASE = "/dashboard/branding/preview/";

/**
 * The preview's CSP: framed by the branding page only, no script, no forms; styles, images and
 * fonts from Ferry's static files and the preview's own assets only, so the account's CSS cannot
 * make the browser fetch any other dashboard URL (ADR 0055).
 */
function previewCsp(request: FastifyRequest, publicBaseUrl: string): string {
  const sources = assetSources(pageAssets(request, PREVIEW_BASE, publicBaseUrl));
  return `default-src 'none'; script-src 'none'; ${sources}; frame-ancestors 'self'; form-action 'none'; base-uri 'none'`;
}

type BrandingRow = NonNullable<Awaited<ReturnType<BrandingService["find"]>>>;

function BrandingForm(props: {
  row: BrandingRow | undefined;
  values: { css: string; recipient_host: string };
  errors: Record<string, string[]>;
  csrfToken: string;
  notice: string;
  publicBaseUrl: string;
}): VNode {
  const { row, values, errors } = props;
  const fieldError = (name: string) =>
    errors[name] ? (
      <span class="fd-field-error" id={`${name}-error`}>
        {errors[name]!.join(" ")}
      </span>
    ) : null;
  return (
    <>
      {props.notice === "saved" ? (
        <Notice kind="success">Branding saved: recipient pages use it now.</Notice>
      ) : null}
      {Object.keys(errors).length ? (
        <Notice kind="error">
          Branding was not saved:{" "}
          {Object.entries(errors)
            .map(([field, messages]) => `${field}: ${messages.join(" ")}`)
            .join(" ")}
        </Notice>
      ) : null}
      <div class="fd-split">
        <form method="post" action="/dashboard/branding" enctype="multipart/form-data" class="fd-editor">
          <CsrfField token={props.csrfToken} />
          <label for="branding-css">Stylesheet (CSS, applied after the default look)</label>
          <textarea
            id="branding-css"
            name="css"
            spellcheck={false}
            aria-describedby={errors.css ? "css-error" : "css-hint"}
          >
            {values.css}
          </textarea>
          <span class="fd-hint" id="css-hint">
            At most 100 KB. Fonts uploaded through <code>/v1/branding/fonts/</code> are at{" "}
            <code>fonts/NAME</code>.
          </span>
          {fieldError("css")}
          <label for="branding-logo">Logo (PNG, JPEG, GIF or WebP, at most 512 KB)</label>
          <input
            id="branding-logo"
            type="file"
            name="logo"
            accept="image/png,image/jpeg,image/gif,image/webp"
          />
          {fieldError("logo")}
          {row?.logo_content_type ? (
            <label class="fd-check">
              <input type="checkbox" name="remove_logo" value="on" />
              Remove the current logo ({row.logo_content_type})
            </label>
          ) : (
            <span class="fd-hint">No logo: pages show the account's name.</span>
          )}
          <label for="branding-host">Recipient host name</label>
          <input
            id="branding-host"
            name="recipient_host"
            value={values.recipient_host}
            autocomplete="off"
            aria-describedby={errors.recipient_host ? "recipient_host-error" : "host-hint"}
          />
          <span class="fd-hint" id="host-hint">
            Recipient links use <code>https://HOST/r/…</code> instead of{" "}
            <code>{props.publicBaseUrl}/r/…</code>; point the host's DNS at this deployment first.
          </span>
          {fieldError("recipient_host")}
          <div class="fd-row">
            <button type="submit" class="fd-button">
              Save
            </button>
          </div>
        </form>
        <section aria-labelledby="preview-heading">
          <h2 id="preview-heading">Preview</h2>
          <p class="fd-hint">A sample request page with the saved branding.</p>
          <iframe
            class="fd-preview-frame"
            title="Preview of a recipient page"
            src={`${PREVIEW_BASE}page?v=${row ? `${row.css_hash.slice(0, 12)}-${(row.logo_hash ?? "").slice(0, 12)}` : "none"}`}
            sandbox="allow-same-origin"
          />
        </section>
      </div>
    </>
  );
}

function previewHeaders(request: FastifyRequest, reply: FastifyReply, publicBaseUrl: string): FastifyReply {
  return reply.headers({
    "content-security-policy": previewCsp(request, publicBaseUrl),
    "x-frame-options": "SAMEORIGIN",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-robots-tag": "noindex, nofollow",
  });
}

/** The branding page, and the preview page with its stylesheet, logo and fonts. */
export function brandingPages(deps: {
  kit: DashboardKit;
  branding: BrandingService;
  publicBaseUrl: string;
  sandbox: boolean;
}): RouteModule {
  const { kit, branding } = deps;

  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: PageContext,
    values?: { css: string; recipient_host: string },
    errors: Record<string, string[]> = {},
  ) => {
    const row = await branding.find(ctx.user.accountId);
    return kit.render(
      request,
      reply,
      ctx,
      { title: "Branding", section: "branding", status: Object.keys(errors).length ? 400 : 200 },
      <BrandingForm
        row={row}
        values={values ?? { css: row?.css ?? "", recipient_host: row?.recipient_host ?? "" }}
        errors={errors}
        csrfToken={ctx.csrfToken}
        notice={queryOf(request).notice ?? ""}
        publicBaseUrl={deps.publicBaseUrl}
      />,
    );
  };

  return async (app) => {
    kit.get(
      app,
      "/dashboard/branding",
      { operationId: "dashboardBranding", summary: "Branding of recipient pages" },
      (request, reply, ctx) => render(request, reply, ctx),
    );

    // A multipart form: the session is checked first, the CSRF token once the fields are read.
    app.post(
      "/dashboard/branding",
      {
        config: { public: true },
        bodyLimit: 2 * 1024 * 1024,
        schema: kit.schema({ operationId: "dashboardSaveBranding", summary: "Save the branding" }),
      },
      async (request, reply) => {
        const ctx = await kit.guard(request, reply);
        if (!ctx) return reply;
        let fields: Record<string, unknown> = {};
        let logo: Buffer | undefined;
        if (request.isMultipart()) {
          try {
            for await (const part of request.parts({
              limits: { fileSize: 512 * 1024 + 1, fieldSize: 100 * 1024 + 1 },
            })) {
              if (part.type === "file") {
                const bytes = await part.toBuffer();
                if (part.fieldname === "logo" && bytes.length > 0) logo = bytes;
              } else fields[part.fieldname] = String(part.value);
            }
          } catch (err) {
            const code = (err as { code?: string }).code ?? "";
            const message = /LIMIT|TOO_LARGE/.test(code)
              ? "The stylesheet or logo is too large."
              : "The form could not be read.";
            request.body = fields;
            if (!kit.checkCsrf(request, reply)) return reply;
            return render(request, reply, ctx, { css: "", recipient_host: "" }, { form: [message] });
          }
        } else {
          fields = await readFormBody(request);
        }
        request.body = fields;
        if (!kit.checkCsrf(request, reply)) return reply;
        const values = {
          css: typeof fields.css === "string" ? fields.css : "",
          recipient_host: typeof fields.recipient_host === "string" ? fields.recipient_host.trim() : "",
        };
        const existing = await branding.find(ctx.user.accountId);
        const keepLogo =
          !logo && fields.remove_logo !== "on" && existing?.logo_base64
            ? Buffer.from(existing.logo_base64, "base64")
            : undefined;
        try {
          await branding.put(
            ctx.user.accountId,
            {
              css: values.css,
              logo: logo ?? keepLogo ?? null,
              recipient_host: values.recipient_host || null,
            },
            { applicationId: null, actor: dashboardActor(request, ctx) },
          );
        } catch (err) {
          if (err instanceof ValidationError) return render(request, reply, ctx, values, err.fields);
          if (err instanceof AppError && err.status === 409)
            return render(request, reply, ctx, values, { recipient_host: [err.detail] });
          throw err;
        }
        return kit.redirect(reply, "/dashboard/branding?notice=saved");
      },
    );

    kit.get(
      app,
      `${PREVIEW_BASE}page`,
      {
        operationId: "dashboardBrandingPreview",
        summary: "Sample recipient page with the branding (framed)",
      },
      async (request, reply, ctx) => {
        const row = await branding.find(ctx.user.accountId);
        const brandName = ctx.accountName || "Ferry";
        const page = (
          <Layout
            title="Files requested"
            sandbox={deps.sandbox}
            brandName={brandName}
            brandCssHref={row?.css ? `${PREVIEW_BASE}brand.css?v=${row.css_hash.slice(0, 12)}` : undefined}
            logoHref={row?.logo_hash ? `${PREVIEW_BASE}logo?v=${row.logo_hash.slice(0, 12)}` : undefined}
          >
            <h1>Files requested</h1>
            <RequesterCard
              card={presentOwnerCard({ name: brandName, email: ctx.user.email })}
              heading="From"
              i18n={translator("en")}
            />
            <MessageCard heading="Message" message="Please upload a copy of your signed contract." />
            <section class="fy-card" aria-labelledby="upload-heading">
              <h2 id="upload-heading">Upload your files</h2>
              <p class="fy-muted">Any file type, up to the size your request allows.</p>
              <p>
                <button type="button" class="fy-button" disabled>
                  Choose files
                </button>
              </p>
            </section>
          </Layout>
        );
        return previewHeaders(request, reply, deps.publicBaseUrl)
          .code(200)
          .type("text/html; charset=utf-8")
          .send(renderDocument(page));
      },
    );

    kit.get(
      app,
      `${PREVIEW_BASE}brand.css`,
      { operationId: "dashboardBrandingPreviewCss", summary: "The branding stylesheet (preview)" },
      async (request, reply, ctx) => {
        const row = await branding.find(ctx.user.accountId);
        return previewHeaders(request, reply, deps.publicBaseUrl)
          .code(row?.css ? 200 : 404)
          .type("text/css; charset=utf-8")
          .send(row?.css || "/* no branding */");
      },
    );

    kit.get(
      app,
      `${PREVIEW_BASE}logo`,
      { operationId: "dashboardBrandingPreviewLogo", summary: "The branding logo (preview)" },
      async (request, reply, ctx) => {
        const row = await branding.find(ctx.user.accountId);
        if (!row?.logo_base64 || !row.logo_content_type)
          return previewHeaders(request, reply, deps.publicBaseUrl)
            .code(404)
            .type("text/plain; charset=utf-8")
            .send("Not found");
        return previewHeaders(request, reply, deps.publicBaseUrl)
          .code(200)
          .type(row.logo_content_type)
          .send(Buffer.from(row.logo_base64, "base64"));
      },
    );

    kit.get(
      app,
      `${PREVIEW_BASE}fonts/:name`,
      { operationId: "dashboardBrandingPreviewFont", summary: "A branding font (preview)" },
      async (request, reply, ctx) => {
        const font = await branding.font(
          ctx.user.accountId,
          String((request.params as { name?: string }).name ?? ""),
        );
        if (!font)
          return previewHeaders(request, reply, deps.publicBaseUrl)
            .code(404)
            .type("text/plain; charset=utf-8")
            .send("Not found");
        return previewHeaders(request, reply, deps.publicBaseUrl)
          .code(200)
          .type(font.content_type)
          .send(Buffer.from(font.data_base64, "base64"));
      },
    );
  };
}

/** A url-encoded form body as fields (the form without a logo may be sent so by other clients). */
async function readFormBody(request: FastifyRequest): Promise<Record<string, unknown>> {
  const body = request.body;
  if (body && typeof body === "object") return { ...(body as Record<string, unknown>) };
  return {};
}
