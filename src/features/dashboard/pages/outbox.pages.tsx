/**
 * Sandbox outbox pages: the emails and SMS the capture transports kept instead of delivering,
 * listed newest first, each readable as its recipient would see it. The email's HTML is served by
 * its own route under a policy without script, forms or remote loads and shown in a sandboxed
 * iframe, so a message can never act on the dashboard. Live deployments answer 404.
 */
import type { FastifyReply } from "fastify";
import type { VNode } from "preact";
import type { RouteModule } from "../../../shared/feature.js";
import type { CapturedOutbox } from "../../notifications/index.js";
import type { DashboardKit, PageContext } from "../dashboard-kit.js";
import { excerpt, Pager, pageNumber, parseId, queryOf, renderNotFound, Time } from "./page-parts.js";

/**
 * The policy of a captured email's HTML: inline styles and `data:` images only (remote images
 * stay unloaded, so reading a message here never counts as the recipient opening it), no script,
 * no forms, framed only by the dashboard.
 */
export const CAPTURED_HTML_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox";

const PAGE_SIZE = 25;

type CapturedRow = NonNullable<Awaited<ReturnType<CapturedOutbox["get"]>>>;

function linksOf(row: CapturedRow): string[] {
  try {
    const parsed: unknown = JSON.parse(row.links);
    return Array.isArray(parsed) ? parsed.filter((l): l is string => typeof l === "string") : [];
  } catch {
    return [];
  }
}

function OutboxList(props: {
  rows: CapturedRow[];
  count: number;
  page: number;
  filters: { channel: string; to: string };
}): VNode {
  const { rows, filters } = props;
  const totalPages = Math.max(1, Math.ceil(props.count / PAGE_SIZE));
  return (
    <>
      <p class="fd-hint">
        Messages the sandbox captured instead of sending, newest first. The API lists the same at{" "}
        <code>GET /v1/sandbox/messages/</code>.
      </p>
      <form method="get" action="/dashboard/outbox" class="fd-filters" aria-label="Filter messages">
        <label>
          Channel
          <select name="channel">
            <option value="" selected={filters.channel === ""}>
              Email and SMS
            </option>
            <option value="email" selected={filters.channel === "email"}>
              Email
            </option>
            <option value="sms" selected={filters.channel === "sms"}>
              SMS
            </option>
          </select>
        </label>
        <label>
          To (exact address or number)
          <input type="text" name="to" value={filters.to} autocomplete="off" />
        </label>
        <button type="submit" class="fd-button">
          Filter
        </button>
      </form>
      <p role="status">{props.count === 1 ? "1 message" : `${props.count} messages`}</p>
      {rows.length > 0 ? (
        <div class="fd-table-wrap">
          <table class="fd-table">
            <caption class="fd-visually-hidden">Captured messages</caption>
            <thead>
              <tr>
                <th scope="col">Captured</th>
                <th scope="col">Channel</th>
                <th scope="col">To</th>
                <th scope="col">Subject or text</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  <td>
                    <Time value={row.created} />
                  </td>
                  <td>{row.channel === "email" ? "Email" : "SMS"}</td>
                  <td class="fd-break">{row.to_address}</td>
                  <td>
                    <a href={`/dashboard/outbox/${row.id}`}>
                      {excerpt(row.channel === "email" ? row.subject || "(no subject)" : row.text_body)}
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p>No captured messages{filters.channel || filters.to ? " match these filters" : " yet"}.</p>
      )}
      <Pager
        path="/dashboard/outbox"
        filters={filters}
        page={props.page}
        totalPages={totalPages}
        label="Outbox pages"
      />
    </>
  );
}

function OutboxMessage(props: { row: CapturedRow }): VNode {
  const { row } = props;
  const links = linksOf(row);
  return (
    <>
      <p>
        <a href="/dashboard/outbox">Back to the outbox</a>
      </p>
      <dl class="fd-fields fd-card">
        <dt>Channel</dt>
        <dd>{row.channel === "email" ? "Email" : "SMS"}</dd>
        <dt>From</dt>
        <dd class="fd-break">{row.from_address}</dd>
        <dt>To</dt>
        <dd class="fd-break">{row.to_address}</dd>
        {row.channel === "email" ? (
          <>
            <dt>Subject</dt>
            <dd class="fd-break" id="message-subject">
              {row.subject}
            </dd>
          </>
        ) : null}
        <dt>Captured</dt>
        <dd>
          <Time value={row.created} />
        </dd>
        {row.notification_id !== null ? (
          <>
            <dt>Notification</dt>
            <dd>{row.notification_id}</dd>
          </>
        ) : null}
      </dl>
      {row.channel === "email" && row.html_body !== null ? (
        <section aria-labelledby="html-heading">
          <h2 id="html-heading">As the recipient sees it</h2>
          <p class="fd-hint">Remote images are not loaded here, so reading this never counts as an open.</p>
          <iframe
            class="fd-email-frame"
            title={`Email: ${row.subject}`}
            src={`/dashboard/outbox/${row.id}/html`}
            sandbox=""
            referrerpolicy="no-referrer"
            loading="lazy"
          />
        </section>
      ) : null}
      <section aria-labelledby="text-heading">
        <h2 id="text-heading">{row.channel === "email" ? "Text part" : "Text"}</h2>
        <pre class="fd-pre" id="message-text">
          {row.text_body}
        </pre>
      </section>
      <section aria-labelledby="links-heading">
        <h2 id="links-heading">Links</h2>
        {links.length > 0 ? (
          <ul class="fd-links">
            {links.map((link) => (
              <li key={link}>
                <a href={link} class="fd-break" rel="noreferrer noopener" target="_blank">
                  {link}
                </a>
              </li>
            ))}
          </ul>
        ) : (
          <p>This message has no links.</p>
        )}
      </section>
    </>
  );
}

/** The sandbox outbox pages: list, message, and the message's HTML for the sandboxed frame. */
export function outboxPages(deps: {
  kit: DashboardKit;
  outbox: CapturedOutbox;
  sandbox: boolean;
}): RouteModule {
  const { kit, outbox } = deps;
  const liveNotFound = (request: Parameters<typeof kit.render>[0], reply: FastifyReply, ctx: PageContext) =>
    kit.render(
      request,
      reply,
      ctx,
      { title: "Not found", section: "outbox", status: 404 },
      <p>The outbox exists on sandbox deployments only: a live deployment sends every message.</p>,
    );
  return async (app) => {
    kit.get(
      app,
      "/dashboard/outbox",
      { operationId: "dashboardOutbox", summary: "Sandbox outbox: captured emails and SMS" },
      async (request, reply, ctx) => {
        if (!deps.sandbox) return liveNotFound(request, reply, ctx);
        const query = queryOf(request);
        const channel = query.channel === "email" || query.channel === "sms" ? query.channel : "";
        const to = (query.to ?? "").trim().slice(0, 320);
        const page = pageNumber(query);
        const { rows, count } = await outbox.list(
          ctx.user.accountId,
          { channel: channel || undefined, to: to || undefined },
          { page, pageSize: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
        );
        return kit.render(
          request,
          reply,
          ctx,
          { title: "Outbox", section: "outbox" },
          <OutboxList rows={rows} count={count} page={page} filters={{ channel, to }} />,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/outbox/:id",
      { operationId: "dashboardOutboxMessage", summary: "Sandbox outbox: one captured message" },
      async (request, reply, ctx) => {
        if (!deps.sandbox) return liveNotFound(request, reply, ctx);
        const id = parseId((request.params as { id?: string }).id);
        const row = id === undefined ? undefined : await outbox.get(ctx.user.accountId, id);
        if (!row) return renderNotFound(kit, request, reply, ctx, "outbox", "message", "/dashboard/outbox");
        const title = row.channel === "email" ? "Captured email" : "Captured SMS";
        return kit.render(request, reply, ctx, { title, section: "outbox" }, <OutboxMessage row={row} />);
      },
    );

    kit.get(
      app,
      "/dashboard/outbox/:id/html",
      {
        operationId: "dashboardOutboxMessageHtml",
        summary: "Sandbox outbox: a captured email's HTML (framed)",
      },
      async (request, reply, ctx) => {
        const id = parseId((request.params as { id?: string }).id);
        const row = deps.sandbox && id !== undefined ? await outbox.get(ctx.user.accountId, id) : undefined;
        if (!row || row.html_body === null) {
          return reply
            .code(404)
            .type("text/plain; charset=utf-8")
            .header("cache-control", "no-store")
            .send("Not found");
        }
        return reply
          .code(200)
          .type("text/html; charset=utf-8")
          .headers({
            "content-security-policy": CAPTURED_HTML_CSP,
            "x-frame-options": "SAMEORIGIN",
            "cache-control": "no-store",
            "referrer-policy": "no-referrer",
            "x-content-type-options": "nosniff",
            "cross-origin-resource-policy": "same-origin",
            "x-robots-tag": "noindex, nofollow",
          })
          .send(row.html_body);
      },
    );
  };
}
