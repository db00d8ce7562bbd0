/**
 * Audit log pages: the log endpoint's search (same filters, same errors, marker paging: newest
 * first, each page ends with a link to the next marker) and the account's hash-chain verification.
 */
import type { VNode } from "preact";
import { AppError, ValidationError } from "../../../shared/errors.js";
import type { RouteModule } from "../../../shared/feature.js";
import { AuditCode, type AuditLog } from "../../audit/index.js";
import type { DashboardKit } from "../dashboard-kit.js";
import { Notice } from "../views/layout.js";
import { hrefWith, queryOf, Time } from "./page-parts.js";

/** The filters of the search form: query parameter, label, hint. */
const FILTERS: readonly { name: string; label: string; hint?: string; type?: string }[] = [
  { name: "code", label: "Code", hint: "e.g. AAA-0001 (sign-in) or ABA-0010 (created)" },
  { name: "related_model", label: "Related model", hint: "e.g. request, user, application" },
  { name: "relation_key", label: "Relation key", hint: "an id of the related model" },
  { name: "path", label: "Path" },
  { name: "from", label: "From (IP address)" },
  { name: "method", label: "Method" },
  { name: "content_type", label: "Content type" },
  { name: "since", label: "Since", hint: "2026-01-15 or 2026-01-15T10:00:00Z" },
  { name: "until", label: "Until" },
];

type SearchResult = Awaited<ReturnType<AuditLog["search"]["search"]>>;
type ChainReport = Awaited<ReturnType<AuditLog["chain"]["verifyAccount"]>>;

function SearchForm(props: { values: Record<string, string> }): VNode {
  return (
    <form method="get" action="/dashboard/audit" class="fd-filters" aria-label="Search the audit log">
      <datalist id="audit-codes">
        {Object.values(AuditCode).map((code) => (
          <option key={code} value={code} />
        ))}
      </datalist>
      {FILTERS.map((f) => (
        <div class="fd-field" key={f.name}>
          <label for={`filter-${f.name}`}>{f.label}</label>
          <input
            type="text"
            id={`filter-${f.name}`}
            name={f.name}
            value={props.values[f.name] ?? ""}
            list={f.name === "code" ? "audit-codes" : undefined}
            aria-describedby={f.hint ? `hint-${f.name}` : undefined}
            autocomplete="off"
          />
          {f.hint ? (
            <span class="fd-hint" id={`hint-${f.name}`}>
              {f.hint}
            </span>
          ) : null}
        </div>
      ))}
      <button type="submit" class="fd-button">
        Search
      </button>
    </form>
  );
}

function Results(props: { result: SearchResult; filters: Record<string, string>; marker: string }): VNode {
  const { result, filters } = props;
  const next = result.next_marker
    ? `${result.next_marker.nextpartitionkey},${result.next_marker.nextrowkey}`
    : undefined;
  return (
    <>
      <p role="status">
        {result.results.length === 0
          ? "No entries match."
          : `${result.results.length} entries on this page${result.total_pages > 1 ? `, ${result.total_pages} pages from here` : ""}.`}
      </p>
      {result.results.length > 0 ? (
        <div class="fd-table-wrap">
          <table class="fd-table">
            <caption class="fd-visually-hidden">Audit entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Code</th>
                <th scope="col">Related</th>
                <th scope="col">What</th>
                <th scope="col">Call</th>
              </tr>
            </thead>
            <tbody>
              {result.results.map((e) => (
                <tr key={e.RowKey}>
                  <td>
                    <Time value={e.Timestamp} />
                  </td>
                  <td>
                    <code>{e.code}</code>
                  </td>
                  <td class="fd-break">
                    {e.related_model}
                    {e.relation_key ? ` ${e.relation_key}` : ""}
                  </td>
                  <td class="fd-break">{e.value}</td>
                  <td class="fd-break">
                    {e.method} {e.path}
                    {e.from ? <span class="fd-muted"> from {e.from}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <nav class="fd-pager" aria-label="Audit log pages">
        {props.marker ? <a href={hrefWith("/dashboard/audit", filters)}>Newest entries</a> : null}
        {next ? (
          <a href={hrefWith("/dashboard/audit", { ...filters, marker: next })} rel="next">
            Older entries
          </a>
        ) : null}
      </nav>
    </>
  );
}

function ChainResult(props: { report: ChainReport }): VNode {
  const { report } = props;
  return (
    <>
      {report.ok ? (
        <Notice kind="success">
          The chain verifies: {report.entries} entries read, head at entry {report.head_seq}.
        </Notice>
      ) : (
        <Notice kind="error">
          The chain does not verify at entry {report.problem?.seq}: {report.problem?.kind}.{" "}
          {report.problem?.detail}
        </Notice>
      )}
      <dl class="fd-fields fd-card">
        <dt>Entries read</dt>
        <dd>{report.entries}</dd>
        <dt>Chain starts after entry</dt>
        <dd>{report.start_seq}</dd>
        <dt>Head entry</dt>
        <dd>{report.head_seq}</dd>
        <dt>Head hash</dt>
        <dd>
          <code class="fd-break">{report.head_hash}</code>
        </dd>
      </dl>
      <p class="fd-hint">
        Every entry's hash covers the one before it, so a changed, removed or inserted entry breaks the chain.
        The command <code>ferry audit verify</code> checks every account the same way.
      </p>
      <p>
        <a href="/dashboard/audit">Back to the audit log</a>
      </p>
    </>
  );
}

/** The audit log pages: search with marker paging, and chain verification. */
export function auditPages(deps: { kit: DashboardKit; audit: AuditLog }): RouteModule {
  const { kit, audit } = deps;
  return async (app) => {
    kit.get(
      app,
      "/dashboard/audit",
      { operationId: "dashboardAuditLog", summary: "Audit log search with marker paging" },
      async (request, reply, ctx) => {
        const query = queryOf(request);
        const filters: Record<string, string> = {};
        for (const f of FILTERS) {
          const v = (query[f.name] ?? "").trim();
          if (v) filters[f.name] = v.slice(0, 500);
        }
        const marker = (query.marker ?? "").trim().slice(0, 200);
        let result: SearchResult | undefined;
        let errors: string[] = [];
        try {
          result = await audit.search.search(ctx.user.accountId, {
            ...filters,
            ...(marker ? { marker } : {}),
            page_size: "50",
          });
        } catch (err) {
          if (err instanceof ValidationError) {
            errors = Object.entries(err.fields).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
          } else if (err instanceof AppError && err.status === 404) errors = ["No entries on this page."];
          else throw err;
        }
        return kit.render(
          request,
          reply,
          ctx,
          { title: "Audit log", section: "audit", status: errors.length ? 400 : 200 },
          <>
            <p>
              Every sign-in, API call and change in this account, newest first; the same entries as{" "}
              <code>GET /v1/logentry/search/</code>.{" "}
              <a href="/dashboard/audit/verify">Verify the hash chain</a>
            </p>
            <SearchForm values={filters} />
            {errors.length ? (
              <Notice kind="error">
                <ul>
                  {errors.map((e) => (
                    <li key={e}>{e}</li>
                  ))}
                </ul>
              </Notice>
            ) : null}
            {result ? <Results result={result} filters={filters} marker={marker} /> : null}
          </>,
        );
      },
    );

    kit.get(
      app,
      "/dashboard/audit/verify",
      { operationId: "dashboardAuditVerify", summary: "Audit log hash-chain verification" },
      async (request, reply, ctx) => {
        const report = await audit.chain.verifyAccount(ctx.user.accountId);
        return kit.render(
          request,
          reply,
          ctx,
          { title: "Audit chain verification", section: "audit" },
          <ChainResult report={report} />,
        );
      },
    );
  };
}
