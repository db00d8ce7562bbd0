import { type CommandSpec, requiredFlag as required } from "../../shared/feature.js";
import type { AuthService } from "./auth.service.js";

/** `ferry admin create-account|create-app|revoke-app|list-apps`. */
export const adminCommands: CommandSpec<AuthService>[] = [
  {
    name: "admin create-account",
    usage: "--email E [--name N] [--json]   Create an owner account",
    run: async (auth, out, flags) => {
      const account = await auth.createAccount(required(flags.email, "--email"), flags.name ?? "");
      out.print(
        { account_id: account.id, email: account.email, name: account.name },
        `Created account ${account.id} <${account.email}>`,
      );
      return 0;
    },
  },
  {
    name: "admin create-app",
    usage: "--email E --name N [--scopes S ...] [--json]   Create an application; prints its API key once",
    run: async (auth, out, flags) => {
      const { account, application, apiKey } = await auth.createApplication(
        required(flags.email, "--email"),
        required(flags.name, "--name"),
        [...(flags.scopes ?? []), ...flags.positionals],
      );
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
      return 0;
    },
  },
  {
    name: "admin revoke-app",
    usage: "--id N [--json]   Revoke an application: its key and tokens stop working at once",
    run: async (auth, out, flags) => {
      const id = Number(required(flags.id, "--id"));
      await auth.revokeApplication(id);
      out.print({ application_id: id, revoked: true }, `Revoked application ${id}`);
      return 0;
    },
  },
  {
    name: "admin list-apps",
    usage: "[--email E] [--json]   List applications (never their keys)",
    run: async (auth, out, flags) => {
      const rows = (await auth.listApplications(flags.email)).map((a) => ({
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
      return 0;
    },
  },
];
