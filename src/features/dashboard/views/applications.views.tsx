import type { VNode } from "preact";
import type { ApplicationView } from "../../auth/index.js";
import { CsrfField, Notice } from "./layout.js";

/** Areas a key can be limited to (the API's scope areas). */
export interface ScopeChoice {
  area: string;
  /** "" (none), "read" or "write" as chosen in the form. */
  level: "" | "read" | "write";
}

function when(value: string | null): string {
  return value ? `${value.slice(0, 16).replace("T", " ")} UTC` : "never";
}

/** The create form: a name, then full access or chosen areas. */
function CreateForm(props: {
  csrfToken: string;
  areas: readonly string[];
  error?: string;
  name?: string;
}): VNode {
  return (
    <section class="fd-card" aria-labelledby="create-heading">
      <h2 id="create-heading">Create an application</h2>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <form method="post" action="/dashboard/applications" class="fd-form">
        <CsrfField token={props.csrfToken} />
        <label for="app-name">Name</label>
        <input
          id="app-name"
          name="name"
          type="text"
          required
          maxLength={100}
          value={props.name ?? ""}
          aria-describedby="app-name-hint"
        />
        <p id="app-name-hint" class="fd-hint">
          What uses the key, e.g. "Website" or "CI deploys".
        </p>
        <fieldset>
          <legend>Access</legend>
          <label class="fd-check">
            <input type="radio" name="access" value="all" checked /> Everything (scope *)
          </label>
          <label class="fd-check">
            <input type="radio" name="access" value="areas" /> Only the areas below
          </label>
          <div class="fd-table-wrap">
            <table class="fd-table">
              <caption class="fd-hint">Areas, used when "Only the areas below" is chosen</caption>
              <thead>
                <tr>
                  <th scope="col">Area</th>
                  <th scope="col">Access</th>
                </tr>
              </thead>
              <tbody>
                {props.areas.map((area) => (
                  <tr key={area}>
                    <th scope="row">
                      <label for={`scope-${area}`}>{area}</label>
                    </th>
                    <td>
                      <select id={`scope-${area}`} name={`scope_${area}`}>
                        <option value="">No access</option>
                        <option value="read">Read only</option>
                        <option value="write">Read and write</option>
                      </select>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </fieldset>
        <button type="submit" class="fd-button">
          Create application
        </button>
      </form>
    </section>
  );
}

/** The key of a just-created application, shown once, with a copy button. */
function NewKey(props: { application: ApplicationView; apiKey: string }): VNode {
  return (
    <section class="fd-card" aria-labelledby="key-heading">
      <h2 id="key-heading">API key of "{props.application.name}"</h2>
      <Notice kind="success">
        Application created. Copy the key now: it is shown only this once and stored only as a hash.
      </Notice>
      <code id="new-key" class="fd-secret">
        {props.apiKey}
      </code>
      <p class="fd-row">
        <button type="button" class="fd-button" data-copy="new-key" data-copy-status="copy-status" hidden>
          Copy key
        </button>
        <span id="copy-status" role="status" />
      </p>
      <p class="fd-hint">
        Exchange it for a token: POST /v1/auth/get_token/ with api_key and the account owner's email.
      </p>
    </section>
  );
}

/** The applications page: list with revoke buttons, create form, and a new key when just created. */
export function ApplicationsPage(props: {
  csrfToken: string;
  applications: ApplicationView[];
  areas: readonly string[];
  created?: { application: ApplicationView; apiKey: string };
  notice?: string;
  error?: string;
  name?: string;
  /** A revoke refused because the typed name did not match. */
  confirmError?: { id: number; message: string };
}): VNode {
  return (
    <>
      {props.notice ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.created ? (
        <NewKey application={props.created.application} apiKey={props.created.apiKey} />
      ) : null}
      <section class="fd-card" aria-labelledby="list-heading">
        <h2 id="list-heading">Applications and API keys</h2>
        {props.applications.length === 0 ? (
          <p>No applications yet: create one below to get an API key.</p>
        ) : (
          <div class="fd-table-wrap">
            <table class="fd-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last token</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="fd-hint">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {props.applications.map((a) => (
                  <tr key={a.id} id={`application-${a.id}`}>
                    <td>{a.name}</td>
                    <td>
                      <code>{a.key_prefix}…</code>
                    </td>
                    <td>
                      <code>{a.scopes}</code>
                    </td>
                    <td>
                      {a.active ? (
                        <span class="fd-badge fd-badge-ok">Active</span>
                      ) : (
                        <>
                          <span class="fd-badge fd-badge-off">Revoked</span>{" "}
                          <span class="fd-hint">{when(a.revoked_at)}</span>
                        </>
                      )}
                    </td>
                    <td>{when(a.last_used_at)}</td>
                    <td>{when(a.created)}</td>
                    <td>
                      {a.active ? (
                        <details class="fd-confirm" open={props.confirmError?.id === a.id}>
                          <summary class="fd-button fd-button-danger">
                            Revoke<span class="fd-visually-hidden"> {a.name}</span>…
                          </summary>
                          <form method="post" action={`/dashboard/applications/${a.id}/revoke`}>
                            <CsrfField token={props.csrfToken} />
                            <p>
                              Its key and every token taken with it stop working at once; this cannot be
                              undone.
                            </p>
                            <label for={`confirm-${a.id}`}>
                              Type <strong>{a.name}</strong> to confirm
                            </label>
                            <input
                              id={`confirm-${a.id}`}
                              type="text"
                              name="confirm_name"
                              autocomplete="off"
                              required
                              aria-invalid={props.confirmError?.id === a.id ? "true" : undefined}
                              aria-describedby={
                                props.confirmError?.id === a.id ? `confirm-${a.id}-error` : undefined
                              }
                            />
                            {props.confirmError?.id === a.id ? (
                              <p class="fd-field-error" id={`confirm-${a.id}-error`}>
                                {props.confirmError.message}
                              </p>
                            ) : null}
                            <button type="submit" class="fd-button fd-button-danger">
                              Revoke {a.name}
                            </button>
                          </form>
                        </details>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <CreateForm csrfToken={props.csrfToken} areas={props.areas} error={props.error} name={props.name} />
    </>
  );
}
