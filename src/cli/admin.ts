import type { Container } from "../app/container.js";

/** Output helper: one JSON object on stdout with --json, else readable lines. */
export interface Output {
  json: boolean;
  print(obj: Record<string, unknown>, text: string): void;
}

/** `ferry admin create-account --email E [--name N]`. */
export async function createAccountCommand(
  c: Container,
  out: Output,
  email: string,
  name = "",
): Promise<void> {
  const account = await c.auth.createAccount(email, name);
  out.print(
    { account_id: account.id, email: account.email, name: account.name },
    `Created account ${account.id} <${account.email}>`,
  );
}

/** `ferry admin create-app --email E --name N [--scopes ...]`: prints the API key once. */
export async function createAppCommand(
  c: Container,
  out: Output,
  email: string,
  name: string,
  scopes?: string[],
) {
  const { account, application, apiKey } = await c.auth.createApplication(email, name, scopes);
  out.print(
    {
      account_id: account.id,
      application_id: application.id,
      email: account.email,
      name: application.name,
      scopes: application.scopes,
      api_key: apiKey,
    },
    [
      `Created application ${application.id} "${application.name}" for ${account.email} (scopes: ${application.scopes})`,
      `API key (shown once, store it now): ${apiKey}`,
    ].join("\n"),
  );
}

/** `ferry admin revoke-app --id N`. */
export async function revokeAppCommand(c: Container, out: Output, id: number): Promise<void> {
  await c.auth.revokeApplication(id);
  out.print({ application_id: id, revoked: true }, `Revoked application ${id}`);
}

/** `ferry admin list-apps [--email E]`. */
export async function listAppsCommand(c: Container, out: Output, email?: string): Promise<void> {
  const apps = await c.auth.listApplications(email);
  const rows = apps.map((a) => ({
    application_id: a.id,
    account_id: a.account_id,
    email: a.email,
    name: a.name,
    key_prefix: a.key_prefix,
    scopes: a.scopes,
    revoked_at: a.revoked_at,
    last_used_at: a.last_used_at,
    created: a.created,
  }));
  out.print(
    { applications: rows },
    rows.length === 0
      ? "No applications."
      : rows
          .map(
            (r) =>
              `${r.application_id}\t${r.email}\t${r.name}\t${r.key_prefix}…\t${r.scopes}\t${r.revoked_at ? `revoked ${r.revoked_at}` : "active"}`,
          )
          .join("\n"),
  );
}
