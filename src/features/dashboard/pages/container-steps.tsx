/**
 * The container page's enrichment parts: each step with its state, status, provider and the fields
 * its kind presents (results included, until retention destroys them), and the consent ledger with
 * its CSV export.
 */
import type { VNode } from "preact";
import { CsrfField } from "../views/layout.js";

/** A consent record as the API shows it. */
export interface ConsentRecord {
  id: number;
  recipient: number;
  feature: number | null;
  disclosure_id: string;
  disclosure_version: string;
  text_sha256: string;
  accepted_at: string;
  ip: string;
  user_agent: string;
  auth_method: string;
}

const COMMON = new Set([
  "id",
  "container",
  "state",
  "expiration",
  "recipient_permissions",
  "after",
  "created",
  "updated",
  "title",
  "description",
  "feature_attr",
  "status",
  "provider",
  "signers",
  "sealed_document",
]);

/** A signer as a signing step presents it. */
interface PresentedSigner {
  recipient: number;
  role: string;
  order: number;
  status: string;
  signed_at: string | null;
  declined_reason: string | null;
}

/** The signers of a signing step, in order, with each one's state. */
function Signers(props: { signers: PresentedSigner[] }): VNode {
  return (
    <ol class="fd-signers">
      {props.signers.map((s) => (
        <li key={s.recipient} data-signer={String(s.recipient)}>
          Recipient {s.recipient} ({s.role}): {s.status}
          {s.signed_at ? ` at ${s.signed_at}` : ""}
          {s.declined_reason ? ` — ${s.declined_reason}` : ""}
        </li>
      ))}
    </ol>
  );
}

/** The owner's download of a step's sealed document (a form post with the page's CSRF token). */
function SealedDocument(props: { mediaId: number; csrfToken: string }): VNode {
  return (
    <form method="post" action={`/dashboard/media/${props.mediaId}/download`} class="fd-inline">
      <CsrfField token={props.csrfToken} />
      <button type="submit" class="fd-link-button" data-sealed={String(props.mediaId)}>
        Download the sealed PDF
      </button>
    </form>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Each enrichment step of the container. */
export function StepsSection(props: { steps: Record<string, unknown>[]; csrfToken: string }): VNode {
  return (
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      {props.steps.length === 0 ? (
        <p>No enrichment steps.</p>
      ) : (
        <div class="fd-table-wrap">
          <table class="fd-table" id="steps">
            <caption class="fd-visually-hidden">Enrichment steps, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">Kind</th>
                <th scope="col">State</th>
                <th scope="col">Status</th>
                <th scope="col">Waits for</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {props.steps.map((s) => (
                <tr key={String(s.id)} data-step={String(s.id)}>
                  <td>
                    {String(s.id)} {show(s.title) === "—" ? "" : String(s.title)}
                  </td>
                  <td>
                    {String(s.feature_attr)} · {String(s.provider)}
                  </td>
                  <td>{String(s.state)}</td>
                  <td>{String(s.status)}</td>
                  <td>{Array.isArray(s.after) && s.after.length ? s.after.join(", ") : "—"}</td>
                  <td class="fd-break">
                    {Array.isArray(s.signers) ? <Signers signers={s.signers as PresentedSigner[]} /> : null}
                    {typeof s.sealed_document === "number" ? (
                      <SealedDocument mediaId={s.sealed_document} csrfToken={props.csrfToken} />
                    ) : null}
                    {Object.entries(s)
                      .filter(([k]) => !COMMON.has(k))
                      .map(([k, v]) => (
                        <div key={k}>
                          {k}: {show(v)}
                        </div>
                      ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The consent ledger of the container, with its CSV export. */
export function ConsentsSection(props: { containerId: number; consents: ConsentRecord[] }): VNode {
  return (
    <section aria-labelledby="consents-heading">
      <h2 id="consents-heading">Consents</h2>
      {props.consents.length === 0 ? (
        <p>No disclosures accepted.</p>
      ) : (
        <>
          <p>
            <a href={`/dashboard/containers/${props.containerId}/consents.csv`} download>
              Export as CSV
            </a>
          </p>
          <div class="fd-table-wrap">
            <table class="fd-table" id="consents">
              <caption class="fd-visually-hidden">Accepted disclosures, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Accepted</th>
                  <th scope="col">Recipient</th>
                  <th scope="col">Disclosure</th>
                  <th scope="col">Text SHA-256</th>
                  <th scope="col">Authenticated by</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                {props.consents.map((c) => (
                  <tr key={c.id}>
                    <td>{c.accepted_at}</td>
                    <td>{c.recipient}</td>
                    <td>
                      {c.disclosure_id} v{c.disclosure_version}
                      {c.feature === null ? "" : ` (step ${c.feature})`}
                    </td>
                    <td class="fd-break">
                      <code>{c.text_sha256}</code>
                    </td>
                    <td>{c.auth_method}</td>
                    <td class="fd-break">
                      {c.ip} · {c.user_agent}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** The consent ledger as CSV (RFC 4180; cells that a spreadsheet would run as formulas are quoted with a leading apostrophe). */
export function consentsCsv(consents: ConsentRecord[]): string {
  const cell = (value: unknown) => {
    let text = value === null || value === undefined ? "" : String(value);
    if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const header = [
    "id",
    "recipient",
    "feature",
    "disclosure_id",
    "disclosure_version",
    "text_sha256",
    "accepted_at",
    "ip",
    "user_agent",
    "auth_method",
  ];
  const rows = consents.map((c) =>
    [
      c.id,
      c.recipient,
      c.feature,
      c.disclosure_id,
      c.disclosure_version,
      c.text_sha256,
      c.accepted_at,
      c.ip,
      c.user_agent,
      c.auth_method,
    ]
      .map(cell)
      .join(","),
  );
  return `${[header.join(","), ...rows].join("\r\n")}\r\n`;
}
