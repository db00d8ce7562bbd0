/**
 * Email template pages: the list, and an editor with a live preview beside it. The preview is the
 * email as the templates feature renders it (sample data, or a real request's), served under a
 * policy without script and shown in a sandboxed frame; the "Preview" button posts the editor into
 * that frame, and the dashboard script does so as the owner types. Liquid syntax errors are shown
 * with their line, in the preview while typing and above the editor when saving.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import { AppError, ValidationError } from "../../../shared/errors.js";
import type { RouteModule } from "../../../shared/feature.js";
import type { Notifications } from "../../notifications/index.js";
import type { EmailTemplatesService } from "../../templates/index.js";
import { type DashboardKit, dashboardActor, formField, type PageContext } from "../dashboard-kit.js";
import { CsrfField, Notice } from "../views/layout.js";
import { CAPTURED_HTML_CSP } from "./outbox.pages.js";
import { Pager, pageNumber, queryOf, renderNotFound, Time } from "./page-parts.js";

const PAGE_SIZE = 50;
const SLUG = /^[A-Za-z0-9_-]{1,100}$/;

type TemplateView = Awaited<ReturnType<EmailTemplatesService["get"]>>;

/** One problem of a template source, with its line when the message names one. */
interface SourceError {
  field: string;
  message: string;
  line?: number;
}

function errorsOf(err: ValidationError): SourceError[] {
  return Object.entries(err.fields).flatMap(([field, messages]) =>
    messages.map((message) => {
      const line = /\bline (\d+)\b/.exec(message)?.[1];
      return line ? { field, message, line: Number(line) } : { field, message };
    }),
  );
}

const FIELD_LABEL: Record<string, string> = {
  slug: "Slug",
  subject: "Subject",
  html: "HTML",
  non_field_errors: "Template",
};

/** The lines around `line` of `source`, numbered, the faulty one marked. */
function SourceExcerpt(props: { source: string; line: number }): VNode {
  const lines = props.source.split("\n");
  const first = Math.max(1, props.line - 2);
  const last = Math.min(lines.length, props.line + 2);
  const shown = lines.slice(first - 1, last);
  return (
    <ol class="fd-source" start={first}>
      {shown.map((text, i) => {
        const n = first + i;
        return (
          <li key={n} class={n === props.line ? "fd-source-bad" : undefined}>
            {n === props.line ? (
              <mark>
                <span class="fd-visually-hidden">Error on this line: </span>
                {text || " "}
              </mark>
            ) : (
              text || " "
            )}
          </li>
        );
      })}
    </ol>
  );
}

function ErrorList(props: { errors: SourceError[]; sources: Record<string, string> }): VNode {
  return (
    <Notice kind="error">
      <p>The template was not saved:</p>
      <ul>
        {props.errors.map((e) => (
          <li key={`${e.field}-${e.message}`}>
            <strong>{FIELD_LABEL[e.field] ?? e.field}</strong>: {e.message}
            {e.line !== undefined && props.sources[e.field] !== undefined ? (
              <SourceExcerpt source={props.sources[e.field]!} line={e.line} />
            ) : null}
          </li>
        ))}
      </ul>
    </Notice>
  );
}

function TemplatesList(props: { rows: TemplateView[]; count: number; page: number; notice: string }): VNode {
  return (
    <>
      {props.notice === "deleted" ? <Notice kind="success">The template was deleted.</Notice> : null}
      <p>
        Email templates are Liquid HTML; a request names one with <code>email_template_slug</code>.{" "}
        <a href="/dashboard/templates/new" class="fd-button">
          New template
        </a>
      </p>
      {props.rows.length === 0 ? (
        <p>No templates yet.</p>
      ) : (
        <div class="fd-table-wrap">
          <table class="fd-table">
            <caption class="fd-visually-hidden">Email templates by slug</caption>
            <thead>
              <tr>
                <th scope="col">Slug</th>
                <th scope="col">Subject</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((t) => (
                <tr key={t.id}>
                  <td>
                    <a href={`/dashboard/templates/edit/${t.slug}`}>{t.slug}</a>
                  </td>
                  <td class="fd-break">{t.subject}</td>
                  <td>
                    <Time value={t.updated} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        path="/dashboard/templates"
        filters={{}}
        page={props.page}
        totalPages={Math.max(1, Math.ceil(props.count / PAGE_SIZE))}
        label="Template pages"
      />
    </>
  );
}

const STARTER = `<!doctype html>
<html>
  <body style="font-family: sans-serif">
    <p>Hello {{ contact.first_name }},</p>
    <p>{{ request.message }}</p>
    <p><a href="{{ recipient_url }}">Open your secure link</a></p>
  </body>
</html>
`;

function Editor(props: {
  existing: TemplateView | undefined;
  values: { slug: string; subject: string; html: string; request: string };
  errors: SourceError[];
  csrfToken: string;
  notice: string;
}): VNode {
  const { existing, values } = props;
  const action = existing ? `/dashboard/templates/edit/${existing.slug}` : "/dashboard/templates";
  return (
    <>
      <p>
        <a href="/dashboard/templates">Back to the templates</a>
      </p>
      {props.notice === "saved" ? <Notice kind="success">The template was saved.</Notice> : null}
      {props.errors.length ? (
        <ErrorList errors={props.errors} sources={{ subject: values.subject, html: values.html }} />
      ) : null}
      <div class="fd-split">
        <form
          method="post"
          action={action}
          class="fd-editor"
          id="template-form"
          data-live-preview="template-preview"
        >
          <CsrfField token={props.csrfToken} />
          {existing ? (
            <p>
              Slug: <code>{existing.slug}</code>
            </p>
          ) : (
            <>
              <label for="template-slug">Slug</label>
              <input
                id="template-slug"
                name="slug"
                value={values.slug}
                required
                pattern="[A-Za-z0-9_\-]{1,100}"
                aria-describedby="slug-hint"
                autocomplete="off"
              />
              <span class="fd-hint" id="slug-hint">
                Letters, digits, hyphens and underscores; requests name the template by it.
              </span>
            </>
          )}
          <label for="template-subject">Subject</label>
          <input id="template-subject" name="subject" value={values.subject} autocomplete="off" />
          <label for="template-html">HTML (Liquid)</label>
          <textarea id="template-html" name="html" required spellcheck={false} aria-describedby="html-hint">
            {values.html}
          </textarea>
          <span class="fd-hint" id="html-hint">
            Variables: <code>contact</code>, <code>request</code>, <code>requester</code>,{" "}
            <code>account</code>, <code>recipient_url</code>.
          </span>
          <label for="template-request">Preview with request (id; empty: sample data)</label>
          <input
            id="template-request"
            name="request"
            value={values.request}
            inputMode="numeric"
            autocomplete="off"
          />
          <div class="fd-row">
            <button type="submit" class="fd-button">
              Save
            </button>
            <button
              type="submit"
              class="fd-button fd-button-secondary"
              formAction="/dashboard/templates/preview"
              formTarget="template-preview"
              data-preview-button=""
            >
              Preview
            </button>
            <span id="preview-status" role="status" class="fd-muted" />
          </div>
        </form>
        <section aria-labelledby="preview-heading">
          <h2 id="preview-heading">Preview</h2>
          <p class="fd-hint">Updates as you type. Remote images are not loaded in the preview.</p>
          <iframe
            class="fd-preview-frame"
            name="template-preview"
            title="Preview of the email"
            src={
              existing
                ? `/dashboard/templates/edit/${existing.slug}/preview`
                : "/dashboard/templates/preview/blank"
            }
            sandbox=""
          />
        </section>
      </div>
      {existing ? (
        <form method="post" action={`/dashboard/templates/edit/${existing.slug}/delete`} class="fd-row">
          <CsrfField token={props.csrfToken} />
          <button type="submit" class="fd-button fd-button-danger">
            Delete the template
          </button>
        </form>
      ) : null}
    </>
  );
}

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** The framed preview response: the email's HTML (or the errors) under the captured-email policy. */
function sendFramed(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .type("text/html; charset=utf-8")
    .headers({
      "content-security-policy": CAPTURED_HTML_CSP,
      "x-frame-options": "SAMEORIGIN",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "x-robots-tag": "noindex, nofollow",
    })
    .send(html);
}

const FRAME_STYLE =
  "font:14px/1.5 system-ui,sans-serif;margin:0;padding:8px 12px;background:#f6f7f9;color:#1b1f24;border-bottom:1px solid #d0d5dc";

/** The rendered email with its subject above it. */
function previewDocument(subject: string, html: string): string {
  const banner = `<div style="${FRAME_STYLE}"><strong>Subject:</strong> ${escapeHtml(subject)}</div>`;
  const body = /<body[^>]*>/i.exec(html);
  if (!body) return `${banner}${html}`;
  const at = body.index + body[0].length;
  return `${html.slice(0, at)}${banner}${html.slice(at)}`;
}

/** The preview's error page: each problem with its line. */
function errorDocument(errors: SourceError[], sources: Record<string, string>): string {
  const items = errors
    .map((e) => {
      const source = sources[e.field];
      let excerpt = "";
      if (e.line !== undefined && source !== undefined) {
        const lines = source.split("\n");
        const first = Math.max(1, e.line - 2);
        excerpt = `<pre style="background:#fff;border:1px solid #d0d5dc;padding:6px;overflow:auto">${lines
          .slice(first - 1, Math.min(lines.length, e.line + 2))
          .map((text, i) => {
            const n = first + i;
            const row = `${String(n).padStart(4, " ")}  ${escapeHtml(text)}`;
            return n === e.line ? `<mark>${row}</mark>` : row;
          })
          .join("\n")}</pre>`;
      }
      return `<li><strong>${escapeHtml(FIELD_LABEL[e.field] ?? e.field)}</strong>: ${escapeHtml(e.message)}${excerpt}</li>`;
    })
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Template error</title></head><body style="${FRAME_STYLE};border:none;min-height:100vh"><p style="color:#a4161a;font-weight:700">The template cannot be rendered:</p><ul>${items}</ul></body></html>`;
}

/** The template pages: list, new, edit, delete and the framed preview. */
export function templatePages(deps: {
  kit: DashboardKit;
  templates: EmailTemplatesService;
  preview: Notifications["preview"];
}): RouteModule {
  const { kit, templates } = deps;
  const caller = (request: FastifyRequest, ctx: PageContext) => ({
    accountId: ctx.user.accountId,
    applicationId: null,
    actor: dashboardActor(request, ctx),
  });

  async function find(ctx: PageContext, slug: string | undefined): Promise<TemplateView | undefined> {
    if (!slug || !SLUG.test(slug)) return undefined;
    try {
      return await templates.get(ctx.user.accountId, slug);
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return undefined;
      throw err;
    }
  }

  const renderEditor = (
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: PageContext,
    existing: TemplateView | undefined,
    values: { slug: string; subject: string; html: string; request: string },
    errors: SourceError[] = [],
  ) =>
    kit.render(
      request,
      reply,
      ctx,
      {
        title: existing ? `Template ${existing.slug}` : "New template",
        section: "templates",
        status: errors.length ? 400 : 200,
        withScript: true,
      },
      <Editor
        existing={existing}
        values={values}
        errors={errors}
        csrfToken={ctx.csrfToken}
        notice={queryOf(request).notice ?? ""}
      />,
    );

  async function renderPreview(reply: FastifyReply, accountId: number, body: Record<string, string>) {
    const sources = { subject: body.subject ?? "", html: body.html ?? "" };
    try {
      const composed = await deps.preview.render(accountId, {
        ...(body.slug ? { slug: body.slug } : { subject: sources.subject, html: sources.html }),
        ...(body.request ? { request: body.request } : {}),
      });
      return sendFramed(reply, 200, previewDocument(composed.subject, composed.html));
    } catch (err) {
      if (err instanceof ValidationError)
        return sendFramed(reply, 200, errorDocument(errorsOf(err), sources));
      if (err instanceof AppError && err.status < 500) {
        const line = /\bline (\d+)\b/.exec(err.detail)?.[1];
        const problem: SourceError = line
          ? { field: "html", message: err.detail, line: Number(line) }
          : { field: "non_field_errors", message: err.detail };
        return sendFramed(reply, 200, errorDocument([problem], sources));
      }
      throw err;
    }
  }

  return async (app) => {
    kit.get(
      app,
      "/dashboard/templates",
      { operationId: "dashboardTemplates", summary: "Email templates" },
      async (request, reply, ctx) => {
        const page = pageNumber(queryOf(request));
        const { results, count } = await templates.list(ctx.user.accountId, {
          page,
          pageSize: PAGE_SIZE,
          offset: (page - 1) * PAGE_SIZE,
        });
        return kit.render(
          request,
          reply,
          ctx,
          { title: "Email templates", section: "templates" },
          <TemplatesList rows={results} count={count} page={page} notice={queryOf(request).notice ?? ""} />,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/templates/new",
      { operationId: "dashboardNewTemplate", summary: "New email template" },
      async (request, reply, ctx) =>
        renderEditor(request, reply, ctx, undefined, {
          slug: "",
          subject: "Files from {{ account.name }}",
          html: STARTER,
          request: "",
        }),
    );

    kit.post(
      app,
      "/dashboard/templates",
      { operationId: "dashboardCreateTemplate", summary: "Create an email template" },
      async (request, reply, ctx) => {
        const values = {
          slug: formField(request, "slug").trim(),
          subject: formField(request, "subject"),
          html: formField(request, "html"),
          request: formField(request, "request").trim(),
        };
        try {
          const created = await templates.create(caller(request, ctx), {
            slug: values.slug,
            subject: values.subject,
            html: values.html,
          });
          return kit.redirect(reply, `/dashboard/templates/edit/${created.slug}?notice=saved`);
        } catch (err) {
          if (err instanceof ValidationError)
            return renderEditor(request, reply, ctx, undefined, values, errorsOf(err));
          throw err;
        }
      },
    );

    kit.get(
      app,
      "/dashboard/templates/edit/:slug",
      { operationId: "dashboardEditTemplate", summary: "Edit an email template" },
      async (request, reply, ctx) => {
        const existing = await find(ctx, (request.params as { slug?: string }).slug);
        if (!existing)
          return renderNotFound(kit, request, reply, ctx, "templates", "template", "/dashboard/templates");
        return renderEditor(request, reply, ctx, existing, {
          slug: existing.slug,
          subject: existing.subject,
          html: existing.html,
          request: "",
        });
      },
    );

    kit.post(
      app,
      "/dashboard/templates/edit/:slug",
      { operationId: "dashboardUpdateTemplate", summary: "Save an email template" },
      async (request, reply, ctx) => {
        const existing = await find(ctx, (request.params as { slug?: string }).slug);
        if (!existing)
          return renderNotFound(kit, request, reply, ctx, "templates", "template", "/dashboard/templates");
        const values = {
          slug: existing.slug,
          subject: formField(request, "subject"),
          html: formField(request, "html"),
          request: formField(request, "request").trim(),
        };
        try {
          await templates.update(caller(request, ctx), existing.slug, {
            subject: values.subject,
            html: values.html,
          });
          return kit.redirect(reply, `/dashboard/templates/edit/${existing.slug}?notice=saved`);
        } catch (err) {
          if (err instanceof ValidationError)
            return renderEditor(request, reply, ctx, existing, values, errorsOf(err));
          throw err;
        }
      },
    );

    kit.post(
      app,
      "/dashboard/templates/edit/:slug/delete",
      { operationId: "dashboardDeleteTemplate", summary: "Delete an email template" },
      async (request, reply, ctx) => {
        const existing = await find(ctx, (request.params as { slug?: string }).slug);
        if (!existing)
          return renderNotFound(kit, request, reply, ctx, "templates", "template", "/dashboard/templates");
        try {
          await templates.remove(caller(request, ctx), existing.slug);
        } catch (err) {
          if (err instanceof AppError && err.status === 422) {
            return renderEditor(
              request,
              reply,
              ctx,
              existing,
              { slug: existing.slug, subject: existing.subject, html: existing.html, request: "" },
              [{ field: "non_field_errors", message: err.detail }],
            );
          }
          throw err;
        }
        return kit.redirect(reply, "/dashboard/templates?notice=deleted");
      },
    );

    kit.get(
      app,
      "/dashboard/templates/edit/:slug/preview",
      { operationId: "dashboardTemplatePreviewSaved", summary: "Preview of a saved template (framed)" },
      async (request, reply, ctx) => {
        const existing = await find(ctx, (request.params as { slug?: string }).slug);
        if (!existing) return sendFramed(reply, 404, "Not found");
        return renderPreview(reply, ctx.user.accountId, { slug: existing.slug });
      },
    );

    kit.get(
      app,
      "/dashboard/templates/preview/blank",
      { operationId: "dashboardTemplatePreviewBlank", summary: "Empty preview (framed)" },
      async (_request, reply) =>
        sendFramed(
          reply,
          200,
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Preview</title></head><body style="${FRAME_STYLE};border:none">Press Preview to see the email.</body></html>`,
        ),
    );

    kit.post(
      app,
      "/dashboard/templates/preview",
      { operationId: "dashboardTemplatePreview", summary: "Preview of the editor's template (framed)" },
      async (request, reply, ctx) => {
        const requestId = formField(request, "request").trim();
        return renderPreview(reply, ctx.user.accountId, {
          subject: formField(request, "subject"),
          html: formField(request, "html"),
          ...(requestId ? { request: requestId } : {}),
        });
      },
    );
  };
}
