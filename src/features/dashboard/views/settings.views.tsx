import type { VNode } from "preact";
import type { UserView } from "../users.service.js";
import { CsrfField, Notice } from "./layout.js";

/** The SMTP settings as the form shows them (never the password). */
export interface SmtpFormValues {
  host: string;
  port: string;
  tls: string;
  username: string;
  from_email: string;
  has_password: boolean;
}

/** Links between the settings pages. */
function SettingsTabs(props: { current: "account" | "team" }): VNode {
  return (
    <nav class="fd-row fd-tabs" aria-label="Settings">
      <a href="/dashboard/settings" aria-current={props.current === "account" ? "page" : undefined}>
        Account
      </a>
      <a href="/dashboard/settings/team" aria-current={props.current === "team" ? "page" : undefined}>
        Team and security
      </a>
    </nav>
  );
}

function Errors(props: { errors?: string[] | undefined }): VNode | null {
  return props.errors?.length ? <Notice kind="error">{props.errors.join(" ")}</Notice> : null;
}

/** Account settings: name (shown on recipient pages), push expiry days, custom SMTP. */
export function AccountSettingsPage(props: {
  csrfToken: string;
  name: string;
  email: string;
  pushExpiryDays: number;
  smtp: SmtpFormValues | undefined;
  notice?: string | undefined;
  errors?: { section: "profile" | "requests" | "smtp"; messages: string[] } | undefined;
}): VNode {
  const smtp = props.smtp;
  const err = (section: "profile" | "requests" | "smtp") =>
    props.errors?.section === section ? props.errors.messages : undefined;
  return (
    <>
      <SettingsTabs current="account" />
      {props.notice ? <Notice kind="success">{props.notice}</Notice> : null}
      <section class="fd-card" aria-labelledby="profile-heading">
        <h2 id="profile-heading">Profile</h2>
        <Errors errors={err("profile")} />
        <form method="post" action="/dashboard/settings/profile" class="fd-form">
          <CsrfField token={props.csrfToken} />
          <label for="account-name">Name</label>
          <input
            id="account-name"
            name="name"
            type="text"
            maxLength={200}
            value={props.name}
            aria-describedby="account-name-hint"
          />
          <p id="account-name-hint" class="fd-hint">
            Shown to recipients at the top of their pages and as the sender when a request names no requester.
            Empty: your email ({props.email}) is shown.
          </p>
          <button type="submit" class="fd-button">
            Save profile
          </button>
        </form>
      </section>
      <section class="fd-card" aria-labelledby="requests-heading">
        <h2 id="requests-heading">Requests</h2>
        <Errors errors={err("requests")} />
        <form method="post" action="/dashboard/settings/requests" class="fd-form">
          <CsrfField token={props.csrfToken} />
          <label for="push-expiry">Push links expire after (days)</label>
          <input
            id="push-expiry"
            name="push_expiry_days"
            type="number"
            min={1}
            max={3650}
            required
            value={String(props.pushExpiryDays)}
            aria-describedby="push-expiry-hint"
          />
          <p id="push-expiry-hint" class="fd-hint">
            Used when a push request is sent without its own expiry: 1 to 3650 days.
          </p>
          <button type="submit" class="fd-button">
            Save
          </button>
        </form>
      </section>
      <section class="fd-card" aria-labelledby="smtp-heading">
        <h2 id="smtp-heading">Email delivery (custom SMTP)</h2>
        <Errors errors={err("smtp")} />
        <p class="fd-hint">
          {smtp
            ? "Notifications of this account leave through your SMTP server."
            : "Not set: notifications leave through this deployment's mail server."}
        </p>
        <form method="post" action="/dashboard/settings/smtp" class="fd-form">
          <CsrfField token={props.csrfToken} />
          <label for="smtp-host">Host</label>
          <input id="smtp-host" name="host" type="text" required value={smtp?.host ?? ""} />
          <label for="smtp-port">Port</label>
          <input id="smtp-port" name="port" type="number" min={1} max={65535} value={smtp?.port ?? "587"} />
          <label for="smtp-tls">Encryption</label>
          <select id="smtp-tls" name="tls">
            {(["starttls", "tls", "none"] as const).map((mode) => (
              <option key={mode} value={mode} selected={(smtp?.tls ?? "starttls") === mode}>
                {mode === "starttls" ? "STARTTLS" : mode === "tls" ? "TLS" : "None"}
              </option>
            ))}
          </select>
          <label for="smtp-username">Username</label>
          <input
            id="smtp-username"
            name="username"
            type="text"
            autocomplete="off"
            value={smtp?.username ?? ""}
          />
          <label for="smtp-password">Password</label>
          <input
            id="smtp-password"
            name="password"
            type="password"
            autocomplete="new-password"
            aria-describedby="smtp-password-hint"
          />
          <p id="smtp-password-hint" class="fd-hint">
            {smtp?.has_password
              ? "A password is stored (never shown). Leave empty to keep it."
              : "No password stored."}
          </p>
          {smtp?.has_password ? (
            <label class="fd-check">
              <input type="checkbox" name="clear_password" value="1" /> Remove the stored password
            </label>
          ) : null}
          <label for="smtp-from">From address</label>
          <input id="smtp-from" name="from_email" type="email" required value={smtp?.from_email ?? ""} />
          <button type="submit" class="fd-button">
            Save SMTP settings
          </button>
        </form>
        {smtp ? (
          <form method="post" action="/dashboard/settings/smtp/remove" class="fd-form">
            <CsrfField token={props.csrfToken} />
            <button type="submit" class="fd-button fd-button-secondary">
              Remove SMTP settings
            </button>
          </form>
        ) : null}
      </section>
    </>
  );
}

/** The team (users of the account: invite, remove) and the signed-in user's sessions. */
export function TeamPage(props: {
  csrfToken: string;
  users: UserView[];
  me: number;
  signedInSessions: number;
  invited?: { email: string; setupUrl: string } | undefined;
  notice?: string | undefined;
  error?: string | undefined;
  inviteEmail?: string | undefined;
}): VNode {
  return (
    <>
      <SettingsTabs current="team" />
      {props.notice ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.invited ? (
        <section class="fd-card" aria-labelledby="invited-heading">
          <h2 id="invited-heading">Invitation for {props.invited.email}</h2>
          <Notice kind="success">
            Send this setup link to your colleague. It works once, for 7 days; they choose a password and set
            up two-factor authentication.
          </Notice>
          <code id="setup-link" class="fd-secret">
            {props.invited.setupUrl}
          </code>
          <p class="fd-row">
            <button
              type="button"
              class="fd-button"
              data-copy="setup-link"
              data-copy-status="copy-status"
              hidden
            >
              Copy link
            </button>
            <span id="copy-status" role="status" />
          </p>
        </section>
      ) : null}
      <section class="fd-card" aria-labelledby="team-heading">
        <h2 id="team-heading">Users of this account</h2>
        <div class="fd-table-wrap">
          <table class="fd-table">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Status</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">
                  <span class="fd-hint">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.users.map((u) => (
                <tr key={u.id} id={`user-${u.id}`}>
                  <td>
                    {u.email}
                    {u.id === props.me ? " (you)" : ""}
                  </td>
                  <td>
                    {u.status === "active" ? (
                      <span class="fd-badge fd-badge-ok">Active</span>
                    ) : (
                      <span class="fd-badge">Invited</span>
                    )}
                  </td>
                  <td>{u.lastSignInAt ? `${u.lastSignInAt.slice(0, 16).replace("T", " ")} UTC` : "never"}</td>
                  <td>
                    {u.id === props.me ? null : (
                      <details class="fd-confirm">
                        <summary class="fd-button fd-button-danger">
                          Remove<span class="fd-visually-hidden"> {u.email}</span>…
                        </summary>
                        <form method="post" action={`/dashboard/settings/team/${u.id}/remove`}>
                          <CsrfField token={props.csrfToken} />
                          <input type="hidden" name="confirm" value="remove" />
                          <p>{u.email} is signed out everywhere and can no longer sign in to this account.</p>
                          <button type="submit" class="fd-button fd-button-danger">
                            Remove {u.email}
                          </button>
                        </form>
                      </details>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section class="fd-card" aria-labelledby="invite-heading">
        <h2 id="invite-heading">Invite a colleague</h2>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <form method="post" action="/dashboard/settings/team" class="fd-form">
          <CsrfField token={props.csrfToken} />
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" required value={props.inviteEmail ?? ""} />
          <button type="submit" class="fd-button">
            Create setup link
          </button>
        </form>
      </section>
      <section class="fd-card" aria-labelledby="security-heading">
        <h2 id="security-heading">Your sessions</h2>
        <p>
          You are signed in on {props.signedInSessions}{" "}
          {props.signedInSessions === 1 ? "browser" : "browsers"}. Sessions end after 30 minutes without
          activity and 12 hours after sign-in.
        </p>
        <form method="post" action="/dashboard/sign-out-everywhere" class="fd-form">
          <CsrfField token={props.csrfToken} />
          <button type="submit" class="fd-button fd-button-secondary">
            Sign out everywhere
          </button>
        </form>
      </section>
    </>
  );
}
