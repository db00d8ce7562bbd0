import type { VNode } from "preact";
import { CsrfField, Notice } from "./layout.js";

/** Email and password. */
export function SignInForm(props: {
  csrfToken: string;
  next: string;
  email?: string;
  error?: string;
}): VNode {
  return (
    <section class="fd-card fd-narrow" aria-label="Sign in">
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <form method="post" action="/dashboard/sign-in" class="fd-form">
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="next" value={props.next} />
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={props.email ?? ""}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" class="fd-button">
          Continue
        </button>
      </form>
      <p class="fd-hint">New here? Use the setup link you were given: it lets you choose your password.</p>
    </section>
  );
}

/** The second step: a TOTP code or a recovery code. */
export function CodeForm(props: { csrfToken: string; next: string; error?: string }): VNode {
  return (
    <section class="fd-card fd-narrow" aria-label="Two-factor code">
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <form method="post" action="/dashboard/sign-in/code" class="fd-form">
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="next" value={props.next} />
        <label for="code">Code from your authenticator app</label>
        <input
          id="code"
          name="code"
          type="text"
          inputMode="numeric"
          autocomplete="one-time-code"
          required
          maxLength={24}
          aria-describedby="code-hint"
        />
        <p id="code-hint" class="fd-hint">
          Enter the 6-digit code, or one of your recovery codes if you lost your phone.
        </p>
        <button type="submit" class="fd-button">
          Sign in
        </button>
      </form>
    </section>
  );
}

/** Choosing a password from a setup link. */
export function SetPasswordForm(props: {
  csrfToken: string;
  email: string;
  token: string;
  error?: string;
}): VNode {
  return (
    <section class="fd-card fd-narrow" aria-label="Choose a password">
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <p>
        Choose a password for <strong>{props.email}</strong>. Next you will set up two-factor authentication
        with an authenticator app.
      </p>
      <form method="post" action={`/dashboard/setup/${props.token}`} class="fd-form">
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="email" value={props.email} autocomplete="username" />
        <label for="password">New password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minLength={12}
          aria-describedby="password-hint"
        />
        <p id="password-hint" class="fd-hint">
          At least 12 characters. A passphrase of several words is easy to type and hard to guess.
        </p>
        <label for="password_confirm">Repeat the password</label>
        <input
          id="password_confirm"
          name="password_confirm"
          type="password"
          autocomplete="new-password"
          required
        />
        <button type="submit" class="fd-button">
          Set password
        </button>
      </form>
    </section>
  );
}

/** A setup link that is unknown, used or expired. */
export function SetupLinkInvalid(): VNode {
  return (
    <section class="fd-card fd-narrow">
      <p>
        This setup link has expired or was already used. Ask a colleague for a new invitation, or sign in.
      </p>
      <p>
        <a href="/dashboard/sign-in">Sign in</a>
      </p>
    </section>
  );
}

/** TOTP enrolment: QR code, the secret and URI as text, and the code that confirms it. */
export function EnrolmentForm(props: {
  csrfToken: string;
  email: string;
  secret: string;
  uri: string;
  qrDataUrl: string;
  error?: string;
}): VNode {
  return (
    <section class="fd-card" aria-label="Two-factor enrolment">
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <p>
        Two-factor authentication is required. Scan this QR code with an authenticator app (1Password, Google
        Authenticator, Aegis, ...), then enter the 6-digit code it shows.
      </p>
      <div class="fd-enrol">
        <img
          class="fd-qr"
          src={props.qrDataUrl}
          alt={`QR code of the two-factor secret for ${props.email}`}
          width={200}
          height={200}
        />
        <dl class="fd-fields">
          <dt>Secret (type it if you cannot scan)</dt>
          <dd>
            <code id="totp-secret">{props.secret}</code>
          </dd>
          <dt>Setup URI</dt>
          <dd>
            <code class="fd-break">{props.uri}</code>
          </dd>
        </dl>
      </div>
      <form method="post" action="/dashboard/setup/two-factor" class="fd-form">
        <CsrfField token={props.csrfToken} />
        <label for="code">6-digit code</label>
        <input
          id="code"
          name="code"
          type="text"
          inputMode="numeric"
          autocomplete="one-time-code"
          required
          maxLength={6}
        />
        <button type="submit" class="fd-button">
          Confirm
        </button>
      </form>
    </section>
  );
}

/** The recovery codes, shown this once. */
export function RecoveryCodesPage(props: { codes: string[] }): VNode {
  return (
    <section class="fd-card fd-narrow" aria-label="Recovery codes">
      <Notice kind="success">Two-factor authentication is set up.</Notice>
      <p>
        Save these recovery codes somewhere safe. Each one signs you in once if you lose your authenticator.
        They are shown only now.
      </p>
      <ul class="fd-codes" id="recovery-codes">
        {props.codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <p>
        <a class="fd-button" href="/dashboard/">
          Continue to the dashboard
        </a>
      </p>
    </section>
  );
}
