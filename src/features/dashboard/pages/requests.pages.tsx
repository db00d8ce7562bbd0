/**
 * Requests and containers: lists with filters (type, state, creation date, contact) and search,
 * paged; a detail page for each with its fields, contacts or recipients, files (owner download),
 * notifications with their delivery status and callback deliveries with every attempt and a
 * Redeliver button; the account's callback secret (reveal, rotate) and payload shape.
 */
import type { FastifyRequest } from "fastify";
import type { VNode } from "preact";
import { requestContext } from "../../../http/fetch-metadata.js";
import type { AuthContext } from "../../../shared/caller.js";
import { AppError } from "../../../shared/errors.js";
import type { RouteModule } from "../../../shared/feature.js";
import type { CallbackService } from "../../callbacks/index.js";
import type { Containers } from "../../containers/index.js";
import type { Enrichments } from "../../enrichments/index.js";
import { callMeta, type MediaService, type MediaView, sendDownload } from "../../media/index.js";
import type { Notifications } from "../../notifications/index.js";
import type { RequestsService, RequestView } from "../../requests/index.js";
import { type DashboardKit, dashboardActor, formField, type PageContext } from "../dashboard-kit.js";
import { CsrfField, Notice } from "../views/layout.js";
import { type ConsentRecord, ConsentsSection, consentsCsv, StepsSection } from "./container-steps.js";
import {
  DeliveriesSection,
  type DeliveryDetail,
  DownloadConfirmation,
  FilesSection,
  type NotificationRecord,
  NotificationsSection,
} from "./deliveries.views.js";
import {
  excerpt,
  hrefWith,
  Pager,
  pageNumber,
  parseId,
  queryOf,
  renderNotFound,
  Time,
} from "./page-parts.js";

const PAGE_SIZE = 25;
/** At most this many deliveries (newest) are shown on a detail page, each with its attempts. */
const MAX_DELIVERIES = 20;

type ContainerView = Awaited<ReturnType<Containers["containers"]["get"]>>;

/** The caller of the services' owner reads from the dashboard (no API key: application 0). */
function ownerAuth(ctx: PageContext): AuthContext {
  return { accountId: ctx.user.accountId, applicationId: 0, scopes: "*" };
}

/** `YYYY-MM-DD` → the stored timestamp of that day's start (plus `days`), or undefined. */
function dayStart(value: string, days = 0): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return undefined;
  date.setUTCDate(date.getUTCDate() + days);
  return `${date.toISOString().slice(0, 23)}000Z`;
}

interface ListFilters {
  type: string;
  state: string;
  since: string;
  until: string;
  contact: string;
  q: string;
}

/** True when the list is filtered by anything, so an empty page means "no match", not "none yet". */
function filtered(filters: ListFilters): boolean {
  return Object.values(filters).some((v) => v !== "");
}

function readListFilters(request: FastifyRequest, types: readonly string[], states: readonly string[]) {
  const query = queryOf(request);
  const pick = (v: string | undefined, allowed: readonly string[]) => (v && allowed.includes(v) ? v : "");
  const filters: ListFilters = {
    type: pick(query.type, types),
    state: pick(query.state, states),
    since: (query.since ?? "").trim(),
    until: (query.until ?? "").trim(),
    contact: (query.contact ?? "").trim().slice(0, 200),
    q: (query.q ?? "").trim().slice(0, 200),
  };
  const errors: string[] = [];
  const since = filters.since ? dayStart(filters.since) : undefined;
  const until = filters.until ? dayStart(filters.until, 1) : undefined;
  if (filters.since && !since) errors.push("Created from: enter a date as YYYY-MM-DD.");
  if (filters.until && !until) errors.push("Created to: enter a date as YYYY-MM-DD.");
  return { filters, since, until, errors, page: pageNumber(query), notice: query.notice ?? "" };
}

function FilterForm(props: {
  action: string;
  filters: ListFilters;
  types: readonly [string, string][];
  states: readonly string[];
  contactLabel: string;
  searchLabel: string;
}): VNode {
  const { filters } = props;
  return (
    <form method="get" action={props.action} class="fd-filters" aria-label="Filter the list">
      <div class="fd-field">
        <label for="filter-q">{props.searchLabel}</label>
        <input type="search" id="filter-q" name="q" value={filters.q} autocomplete="off" />
      </div>
      <div class="fd-field">
        <label for="filter-type">Type</label>
        <select id="filter-type" name="type">
          <option value="">Any</option>
          {props.types.map(([value, label]) => (
            <option key={value} value={value} selected={filters.type === value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div class="fd-field">
        <label for="filter-state">State</label>
        <select id="filter-state" name="state">
          <option value="">Any</option>
          {props.states.map((s) => (
            <option key={s} value={s} selected={filters.state === s}>
              {s[0]!.toUpperCase() + s.slice(1)}
            </option>
          ))}
        </select>
      </div>
      <div class="fd-field">
        <label for="filter-since">Created from</label>
        <input type="date" id="filter-since" name="since" value={filters.since} />
      </div>
      <div class="fd-field">
        <label for="filter-until">Created to</label>
        <input type="date" id="filter-until" name="until" value={filters.until} />
      </div>
      <div class="fd-field">
        <label for="filter-contact">{props.contactLabel}</label>
        <input type="text" id="filter-contact" name="contact" value={filters.contact} autocomplete="off" />
      </div>
      <button type="submit" class="fd-button">
        Filter
      </button>
    </form>
  );
}

function requestState(r: RequestView): string {
  if (r.is_draft) return "Draft";
  if (r.complete) return "Complete";
  if (r.is_expired) return "Expired";
  return "Sent";
}

function contactNames(r: RequestView): string {
  return r.contact.map((c) => `${c.first_name} ${c.last_name}`.trim()).join(", ");
}

function RequestsList(props: {
  rows: RequestView[];
  hasNext: boolean;
  page: number;
  filters: ListFilters;
  errors: string[];
}): VNode {
  const { rows, filters } = props;
  const keep: Record<string, string> = { ...filters };
  return (
    <>
      <p>
        Push and pull requests of this account, newest first.{" "}
        <a href="/dashboard/callbacks">Callback settings</a>
      </p>
      <FilterForm
        action="/dashboard/requests"
        filters={filters}
        types={[
          ["pull", "Pull (recipient uploads)"],
          ["push", "Push (recipient downloads)"],
        ]}
        states={["draft", "sent", "complete", "expired"]}
        contactLabel="Contact (name, email or phone)"
        searchLabel="Search (identifier, message, subject)"
      />
      {props.errors.length ? <Notice kind="error">{props.errors.join(" ")}</Notice> : null}
      {rows.length === 0 ? (
        <p role="status">
          {filtered(filters) ? (
            "No requests match these filters."
          ) : (
            <>
              No requests yet. Your integration creates them with <code>POST /v1/request/</code>; see the{" "}
              <a href="/docs">API reference</a>.
            </>
          )}
        </p>
      ) : (
        <div class="fd-table-wrap">
          <table class="fd-table">
            <caption class="fd-visually-hidden">Requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">Type</th>
                <th scope="col">State</th>
                <th scope="col">Contacts</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id}>
                  <td>
                    <a href={`/dashboard/requests/${r.id}`}>
                      {r.id} ·{" "}
                      {excerpt(r.long_message_subject || r.message || r.identifier, 60) || r.identifier}
                    </a>
                  </td>
                  <td>{r.type === "pull" ? "Pull" : "Push"}</td>
                  <td>{requestState(r)}</td>
                  <td class="fd-break">{contactNames(r)}</td>
                  <td>
                    <Time value={r.created} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        path="/dashboard/requests"
        filters={keep}
        page={props.page}
        totalPages={props.hasNext ? props.page + 1 : props.page}
        label="Request pages"
      />
    </>
  );
}

function Field(props: {
  label: string;
  children: VNode | string | null | undefined | (VNode | string)[];
}): VNode {
  return (
    <>
      <dt>{props.label}</dt>
      <dd class="fd-break">
        {props.children === null || props.children === undefined || props.children === "" ? (
          <span class="fd-muted">—</span>
        ) : (
          props.children
        )}
      </dd>
    </>
  );
}

function RedeliveredNotice(props: { notice: string }): VNode | null {
  const m = /^redelivered-(\d+)$/.exec(props.notice);
  return m ? (
    <Notice kind="success">Delivery {m[1]} is sent again: its new attempt appears below.</Notice>
  ) : null;
}

function RequestDetail(props: {
  r: RequestView;
  notifications: NotificationRecord[];
  deliveries: DeliveryDetail[];
  csrfToken: string;
  notice: string;
}): VNode {
  const { r } = props;
  return (
    <>
      <p>
        <a href="/dashboard/requests">Back to the requests</a>
      </p>
      <RedeliveredNotice notice={props.notice} />
      <dl class="fd-fields fd-card">
        <Field label="Identifier">
          <code>{r.identifier}</code>
        </Field>
        <Field label="Type">
          {r.type === "pull" ? "Pull: the recipient uploads" : "Push: the recipient downloads"}
        </Field>
        <Field label="State">{requestState(r)}</Field>
        <Field label="Message">{r.message}</Field>
        <Field label="Email subject">{r.long_message_subject}</Field>
        <Field label="SMS text">{r.short_message}</Field>
        <Field label="Private notes">{r.requester_privatenotes}</Field>
        <Field label="Email template">{r.email_template_slug}</Field>
        <Field label="Two-factor code to">
          {r.tfa_send_to
            ? `${r.tfa_send_to} ${r.tfa_send_to_value ?? ""} (sent ${r.tfa_times_sent} times)`
            : null}
        </Field>
        <Field label="Allowed extensions">{r.allowed_extensions?.join(", ")}</Field>
        <Field label="Expires">
          <Time value={r.expires_at} />
        </Field>
        <Field label="Created">
          <Time value={r.created} />
        </Field>
        <Field label="Updated">
          <Time value={r.updated} />
        </Field>
      </dl>
      <section aria-labelledby="contacts-heading">
        <h2 id="contacts-heading">Contacts</h2>
        {r.contact.length === 0 ? (
          <p>No contacts.</p>
        ) : (
          <ul>
            {r.contact.map((c) => (
              <li key={c.id}>
                <span class="fd-contact-name">{`${c.first_name} ${c.last_name}`.trim()}</span>
                {c.contactmethod.length ? (
                  <span class="fd-muted">
                    {" "}
                    · {c.contactmethod.map((m) => `${m.interface_class} ${m.value}`).join(" · ")}
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <FilesSection files={r.media} oneDownload={r.type === "pull"} csrfToken={props.csrfToken} />
      <NotificationsSection notifications={props.notifications} />
      <DeliveriesSection
        deliveries={props.deliveries}
        csrfToken={props.csrfToken}
        back="requests"
        callbackUrl={r.callback_url}
      />
    </>
  );
}

function ContainersList(props: {
  rows: ContainerView[];
  hasNext: boolean;
  page: number;
  filters: ListFilters;
  errors: string[];
}): VNode {
  const { rows, filters } = props;
  return (
    <>
      <p>
        Containers of this account, newest first. <a href="/dashboard/callbacks">Callback settings</a>
      </p>
      <FilterForm
        action="/dashboard/containers"
        filters={filters}
        types={[
          ["pushpull", "Push and pull"],
          ["p2", "P2"],
        ]}
        states={["draft", "sent", "complete", "expired"]}
        contactLabel="Recipient (name, email or phone)"
        searchLabel="Search (id or email subject)"
      />
      {props.errors.length ? <Notice kind="error">{props.errors.join(" ")}</Notice> : null}
      {rows.length === 0 ? (
        <p role="status">
          {filtered(filters) ? (
            "No containers match these filters."
          ) : (
            <>
              No containers yet. Your integration creates them with{" "}
              <code>POST /v1/module_container/container/</code>; see the <a href="/docs">API reference</a>.
            </>
          )}
        </p>
      ) : (
        <div class="fd-table-wrap">
          <table class="fd-table">
            <caption class="fd-visually-hidden">Containers, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Container</th>
                <th scope="col">Type</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.id}>
                  <td>
                    <a href={`/dashboard/containers/${c.id}`}>
                      {c.id} · {c.identifier}
                    </a>
                  </td>
                  <td>{c.page_type === "p2" ? "P2" : "Push and pull"}</td>
                  <td>{c.state[0]!.toUpperCase() + c.state.slice(1)}</td>
                  <td>
                    <Time value={c.created} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        path="/dashboard/containers"
        filters={{ ...filters }}
        page={props.page}
        totalPages={props.hasNext ? props.page + 1 : props.page}
        label="Container pages"
      />
    </>
  );
}

interface RecipientWithItems {
  id: number;
  first_name: string;
  last_name: string;
  active: boolean;
  items: { id: number; interface_class: string; value: string; link: string | null }[];
}

function ContainerDetail(props: {
  c: ContainerView;
  email: { subject: string; body: string } | undefined;
  recipients: RecipientWithItems[];
  features: { kind: string; id: number; title: string }[];
  steps: Record<string, unknown>[];
  consents: ConsentRecord[];
  files: MediaView[];
  notifications: NotificationRecord[];
  deliveries: DeliveryDetail[];
  csrfToken: string;
  notice: string;
}): VNode {
  const { c } = props;
  return (
    <>
      <p>
        <a href="/dashboard/containers">Back to the containers</a>
      </p>
      <RedeliveredNotice notice={props.notice} />
      <dl class="fd-fields fd-card">
        <Field label="Identifier">
          <code>{c.identifier}</code>
        </Field>
        <Field label="Type">{c.page_type === "p2" ? "P2" : "Push and pull"}</Field>
        <Field label="State">{c.state}</Field>
        <Field label="Chat shown">{c.display_chat ? "Yes" : "No"}</Field>
        <Field label="Access code">{c.auth_code ? `${c.auth_code.send_as} ${c.auth_code.to}` : null}</Field>
        <Field label="Email subject">{props.email?.subject}</Field>
        <Field label="Sent">
          <Time value={c.sent_at} />
        </Field>
        <Field label="Completed">
          <Time value={c.completed_at} />
        </Field>
        <Field label="Created">
          <Time value={c.created} />
        </Field>
      </dl>
      <section aria-labelledby="recipients-heading">
        <h2 id="recipients-heading">Recipients</h2>
        {props.recipients.length === 0 ? (
          <p>No recipients.</p>
        ) : (
          <ul>
            {props.recipients.map((r) => (
              <li key={r.id}>
                <span class="fd-contact-name">{`${r.first_name} ${r.last_name}`.trim()}</span>
                {r.active ? "" : " (inactive)"}
                {r.items.length ? (
                  <ul>
                    {r.items.map((i) => (
                      <li key={i.id} class="fd-break">
                        {i.interface_class} {i.value}
                        {i.link ? (
                          <>
                            {" "}
                            · <a href={i.link}>session link</a>
                          </>
                        ) : null}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="features-heading">
        <h2 id="features-heading">Features</h2>
        {props.features.length === 0 ? (
          <p>No features.</p>
        ) : (
          <ul>
            {props.features.map((f) => (
              <li key={`${f.kind}-${f.id}`}>
                {f.kind} {f.id}: {f.title}
              </li>
            ))}
          </ul>
        )}
      </section>
      <StepsSection steps={props.steps} csrfToken={props.csrfToken} />
      <ConsentsSection containerId={c.id} consents={props.consents} />
      <FilesSection
        files={props.files}
        oneDownload={props.files.some((f) => f.recipient !== null)}
        csrfToken={props.csrfToken}
      />
      <NotificationsSection notifications={props.notifications} />
      <DeliveriesSection
        deliveries={props.deliveries}
        csrfToken={props.csrfToken}
        back="containers"
        callbackUrl={c.callback_url}
      />
    </>
  );
}

function CallbackSettingsView(props: {
  secret: Awaited<ReturnType<CallbackService["secrets"]["getSecret"]>>;
  settings: Awaited<ReturnType<CallbackService["getSettings"]>>;
  reveal: boolean;
  csrfToken: string;
  notice: string;
}): VNode {
  const { secret, settings } = props;
  return (
    <>
      {props.notice === "rotated" ? (
        <Notice kind="success">
          A new secret signs from now on; the previous one keeps signing until it expires.
        </Notice>
      ) : null}
      {props.notice === "saved" ? <Notice kind="success">Callback settings saved.</Notice> : null}
      <section class="fd-card" aria-labelledby="secret-heading">
        <h2 id="secret-heading">Signing secret</h2>
        <p>
          Every callback is signed with this secret (Standard Webhooks: <code>webhook-signature</code>).
        </p>
        {props.reveal ? (
          <>
            <code class="fd-secret" id="callback-secret">
              {secret.secret}
            </code>
            <div class="fd-row">
              <button
                type="button"
                class="fd-button fd-button-secondary"
                data-copy="callback-secret"
                data-copy-status="copy-status"
                hidden
              >
                Copy the secret
              </button>
              <span id="copy-status" role="status" />
            </div>
          </>
        ) : (
          <form method="post" action="/dashboard/callbacks/secret/reveal" class="fd-row">
            <CsrfField token={props.csrfToken} />
            <code class="fd-secret">whsec_••••••••••••••••</code>
            <button type="submit" class="fd-button fd-button-secondary">
              Reveal the secret
            </button>
          </form>
        )}
        <p class="fd-hint">
          Created <Time value={secret.created} />.
          {secret.previous.map((p) => (
            <span key={p.created}>
              {" "}
              A previous secret still signs until <Time value={p.expires_at} />.
            </span>
          ))}
        </p>
        <form method="post" action="/dashboard/callbacks/secret/rotate">
          <CsrfField token={props.csrfToken} />
          <button type="submit" class="fd-button fd-button-danger">
            Rotate the secret
          </button>
        </form>
      </section>
      <section class="fd-card" aria-labelledby="shape-heading">
        <h2 id="shape-heading">Payload</h2>
        <form method="post" action="/dashboard/callbacks/settings" class="fd-form">
          <CsrfField token={props.csrfToken} />
          <fieldset>
            <legend>Payload shape</legend>
            <label class="fd-check">
              <input
                type="radio"
                name="callback_shape"
                value="nested"
                checked={settings.callback_shape === "nested"}
              />
              Nested: the event's object under its name
            </label>
            <label class="fd-check">
              <input
                type="radio"
                name="callback_shape"
                value="flat"
                checked={settings.callback_shape === "flat"}
              />
              Flat: the object's fields at the top level
            </label>
          </fieldset>
          <label class="fd-check">
            <input type="checkbox" name="secure_callbacks" value="on" checked={settings.secure_callbacks} />
            Only deliver to https URLs
          </label>
          <button type="submit" class="fd-button">
            Save
          </button>
        </form>
      </section>
    </>
  );
}

/** What the request and container pages use. */
export interface RequestPagesDeps {
  kit: DashboardKit;
  requests: RequestsService;
  containers: Containers;
  callbacks: CallbackService;
  notificationLog: Notifications["log"];
  media: MediaService;
  enrichments: Enrichments;
}

/** The request, container, delivery and callback settings pages. */
export function requestPages(deps: RequestPagesDeps): RouteModule {
  const { kit, requests, callbacks } = deps;

  async function deliveriesOf(accountId: number, requestId: number): Promise<DeliveryDetail[]> {
    const page = await callbacks.listDeliveries(accountId, {
      request: String(requestId),
      page_size: String(MAX_DELIVERIES),
    });
    return Promise.all(page.results.map((d) => callbacks.getDelivery(accountId, d.id)));
  }

  async function notificationsOf(accountId: number, filter: { request?: string; container?: string }) {
    return (await deps.notificationLog.list(accountId, filter, { page: 1, pageSize: 100, offset: 0 }))
      .results;
  }

  return async (app) => {
    kit.get(
      app,
      "/dashboard/requests",
      { operationId: "dashboardRequests", summary: "Requests with filters" },
      async (request, reply, ctx) => {
        const { filters, since, until, errors, page } = readListFilters(
          request,
          ["push", "pull"],
          ["draft", "sent", "complete", "expired"],
        );
        const { results, hasNext } = await requests.ownerSearch(
          ctx.user.accountId,
          {
            type: (filters.type || undefined) as "push" | "pull" | undefined,
            state: (filters.state || undefined) as "draft" | "sent" | "complete" | "expired" | undefined,
            since,
            until,
            contact: filters.contact || undefined,
            search: filters.q || undefined,
          },
          { page, pageSize: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
        );
        return kit.render(
          request,
          reply,
          ctx,
          { title: "Requests", section: "requests", status: errors.length ? 400 : 200 },
          <RequestsList rows={results} hasNext={hasNext} page={page} filters={filters} errors={errors} />,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/requests/:id",
      { operationId: "dashboardRequest", summary: "A request with its deliveries" },
      async (request, reply, ctx) => {
        const id = parseId((request.params as { id?: string }).id);
        const accountId = ctx.user.accountId;
        let view: RequestView | undefined;
        if (id !== undefined) {
          try {
            view = await requests.getRequestView(undefined, accountId, id);
          } catch (err) {
            if (!(err instanceof AppError && err.status === 404)) throw err;
          }
        }
        if (!view || id === undefined)
          return renderNotFound(kit, request, reply, ctx, "requests", "request", "/dashboard/requests");
        const [notifications, deliveries] = await Promise.all([
          notificationsOf(accountId, { request: String(id) }),
          deliveriesOf(accountId, id),
        ]);
        return kit.render(
          request,
          reply,
          ctx,
          { title: `Request ${id}`, section: "requests" },
          <RequestDetail
            r={view}
            notifications={notifications}
            deliveries={deliveries}
            csrfToken={ctx.csrfToken}
            notice={queryOf(request).notice ?? ""}
          />,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/containers",
      { operationId: "dashboardContainers", summary: "Containers with filters" },
      async (request, reply, ctx) => {
        const { filters, since, until, errors, page } = readListFilters(
          request,
          ["pushpull", "p2"],
          ["draft", "sent", "complete", "expired"],
        );
        const { results, hasNext } = await deps.containers.containers.ownerSearch(
          ctx.user.accountId,
          {
            pageType: (filters.type || undefined) as "pushpull" | "p2" | undefined,
            state: (filters.state || undefined) as ContainerView["state"] | undefined,
            since,
            until,
            contact: filters.contact || undefined,
            search: filters.q || undefined,
          },
          { pageSize: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
        );
        return kit.render(
          request,
          reply,
          ctx,
          { title: "Containers", section: "containers", status: errors.length ? 400 : 200 },
          <ContainersList rows={results} hasNext={hasNext} page={page} filters={filters} errors={errors} />,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/containers/:id",
      { operationId: "dashboardContainer", summary: "A container with its deliveries" },
      async (request, reply, ctx) => {
        const id = parseId((request.params as { id?: string }).id);
        const auth = ownerAuth(ctx);
        const { containers, recipients, features } = deps.containers;
        let view: ContainerView | undefined;
        if (id !== undefined) {
          try {
            view = await containers.get(auth, String(id));
          } catch (err) {
            if (!(err instanceof AppError && err.status === 404)) throw err;
          }
        }
        if (!view || id === undefined)
          return renderNotFound(kit, request, reply, ctx, "containers", "container", "/dashboard/containers");
        const query = { container: String(id), page_size: "100" };
        const [email, recipientPage, itemPage, files, notifications, deliveries, ...featurePages] =
          await Promise.all([
            containers.getEmail(auth, String(id)).catch((err: unknown) => {
              if (err instanceof AppError && err.status === 404) return undefined;
              throw err;
            }),
            recipients.list(auth, query),
            recipients.listItems(auth, { recipient__container: String(id), page_size: "100" }),
            deps.media.listOfRequest(id),
            notificationsOf(ctx.user.accountId, { container: String(id) }),
            deliveriesOf(ctx.user.accountId, id),
            ...(["pushpull", "pull", "push"] as const).map(async (kind) => ({
              kind,
              page: await features.list(auth, kind, query),
            })),
          ]);
        const recipientList: RecipientWithItems[] = recipientPage.results.map((r) => ({
          id: r.id,
          first_name: r.first_name,
          last_name: r.last_name,
          active: r.active,
          items: itemPage.results.filter((i) => i.recipient === r.id),
        }));
        const [steps, consents] = await Promise.all([
          deps.enrichments.engine.ofContainer(auth, id),
          deps.enrichments.engine.consentsOf(auth, String(id)),
        ]);
        const featureList = featurePages.flatMap(({ kind, page }) =>
          (page.results as { id: number; title?: string }[]).map((f) => ({
            kind,
            id: f.id,
            title: f.title ?? "",
          })),
        );
        return kit.render(
          request,
          reply,
          ctx,
          { title: `Container ${id}`, section: "containers" },
          <ContainerDetail
            c={view}
            email={email}
            recipients={recipientList}
            features={featureList}
            steps={steps}
            consents={consents}
            files={files}
            notifications={notifications}
            deliveries={deliveries}
            csrfToken={ctx.csrfToken}
            notice={queryOf(request).notice ?? ""}
          />,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/containers/:id/consents.csv",
      { operationId: "dashboardContainerConsentsCsv", summary: "A container's consent ledger as CSV" },
      async (request, reply, ctx) => {
        const id = parseId((request.params as { id?: string }).id);
        if (id === undefined)
          return renderNotFound(kit, request, reply, ctx, "containers", "container", "/dashboard/containers");
        const consents = await deps.enrichments.engine.consentsOf(ownerAuth(ctx), String(id));
        return reply
          .header("content-disposition", `attachment; filename="container-${id}-consents.csv"`)
          .type("text/csv; charset=utf-8")
          .send(consentsCsv(consents));
      },
    );

    kit.post(
      app,
      "/dashboard/deliveries/:id/redeliver",
      { operationId: "dashboardRedeliver", summary: "Send a callback delivery again" },
      async (request, reply, ctx) => {
        const id = parseId((request.params as { id?: string }).id);
        const back = formField(request, "back") === "containers" ? "containers" : "requests";
        let delivery: DeliveryDetail | undefined;
        if (id !== undefined) {
          try {
            delivery = await callbacks.redeliver(ctx.user.accountId, id, null, dashboardActor(request, ctx));
          } catch (err) {
            if (!(err instanceof AppError && err.status === 404)) throw err;
          }
        }
        if (!delivery)
          return renderNotFound(kit, request, reply, ctx, back, "callback delivery", `/dashboard/${back}`);
        const target =
          delivery.request === null ? `/dashboard/${back}` : `/dashboard/${back}/${delivery.request}`;
        return kit.redirect(
          reply,
          `${hrefWith(target, { notice: `redelivered-${delivery.id}` })}#delivery-${delivery.id}`,
        );
      },
    );

    /**
     * The owner's download of a file (it may use up a one-time file: ADR 0055). A form post of a
     * dashboard page downloads; so does a link followed from a dashboard page (Fetch Metadata says
     * same-origin). Anything else, a bookmark, another site's link or a browser that sends no Fetch
     * Metadata, shows the file with its Download button; an image, style sheet, font or frame is 403.
     */
    const ownerDownload: Parameters<typeof kit.get>[3] = async (request, reply, ctx) => {
      const id = parseId((request.params as { id?: string }).id);
      try {
        if (id === undefined) throw new AppError("RESOURCE_NOT_FOUND", "Media not found.");
        const context = request.method === "GET" ? requestContext(request) : "same-origin";
        if (context === "embedded")
          throw new AppError("NOT_AUTHORIZED", "Files are downloaded from the dashboard's pages.");
        if (context !== "same-origin") {
          const file = await deps.media.get(ownerAuth(ctx), String(id));
          return kit.render(
            request,
            reply,
            ctx,
            { title: "Download a file", section: "requests" },
            <DownloadConfirmation file={file} csrfToken={ctx.csrfToken} />,
          );
        }
        const download = await deps.media.download(
          ownerAuth(ctx),
          String(id),
          { range: request.headers.range, ifRange: request.headers["if-range"] as string | undefined },
          callMeta(request),
        );
        reply.header("x-content-type-options", "nosniff").header("cache-control", "no-store");
        return sendDownload(reply, download);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return kit.render(
          request,
          reply,
          ctx,
          {
            title: err.status === 404 ? "Not found" : "File not available",
            section: "requests",
            status: err.status,
          },
          <p>
            {err.detail} <a href="/dashboard/requests">Back to the requests</a>
          </p>,
        );
      }
    };
    kit.get(
      app,
      "/dashboard/media/:id/download",
      {
        operationId: "dashboardDownloadMedia",
        summary: "Download a file as the owner (from a dashboard link), or show its Download button",
      },
      ownerDownload,
    );
    kit.post(
      app,
      "/dashboard/media/:id/download",
      {
        operationId: "dashboardDownloadMediaPost",
        summary: "Download a file as the owner (the files' form)",
      },
      ownerDownload,
    );

    const settingsPage = async (
      request: FastifyRequest,
      reply: Parameters<typeof kit.render>[1],
      ctx: PageContext,
      reveal: boolean,
    ) => {
      const accountId = ctx.user.accountId;
      const [secret, settings] = await Promise.all([
        callbacks.secrets.getSecret(accountId),
        callbacks.getSettings(accountId),
      ]);
      return kit.render(
        request,
        reply,
        ctx,
        { title: "Callbacks", section: "requests", withScript: reveal },
        <CallbackSettingsView
          secret={secret}
          settings={settings}
          reveal={reveal}
          csrfToken={ctx.csrfToken}
          notice={queryOf(request).notice ?? ""}
        />,
      );
    };

    kit.get(
      app,
      "/dashboard/callbacks",
      { operationId: "dashboardCallbackSettings", summary: "Callback secret and payload shape" },
      (request, reply, ctx) => settingsPage(request, reply, ctx, false),
    );
    kit.post(
      app,
      "/dashboard/callbacks/secret/reveal",
      { operationId: "dashboardRevealCallbackSecret", summary: "Show the callback signing secret" },
      (request, reply, ctx) => settingsPage(request, reply, ctx, true),
    );
    kit.post(
      app,
      "/dashboard/callbacks/secret/rotate",
      { operationId: "dashboardRotateCallbackSecret", summary: "Rotate the callback signing secret" },
      async (request, reply, ctx) => {
        await callbacks.secrets.rotate(ctx.user.accountId, null, dashboardActor(request, ctx));
        return kit.redirect(reply, "/dashboard/callbacks?notice=rotated");
      },
    );
    kit.post(
      app,
      "/dashboard/callbacks/settings",
      { operationId: "dashboardUpdateCallbackSettings", summary: "Save the callback payload shape" },
      async (request, reply, ctx) => {
        const shape = formField(request, "callback_shape");
        await callbacks.updateSettings(
          ctx.user.accountId,
          {
            ...(shape === "flat" || shape === "nested" ? { callback_shape: shape } : {}),
            secure_callbacks: formField(request, "secure_callbacks") === "on",
          },
          null,
          dashboardActor(request, ctx),
        );
        return kit.redirect(reply, "/dashboard/callbacks?notice=saved");
      },
    );
  };
}
