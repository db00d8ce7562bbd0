import { type CommandSpec, requiredFlag as required, UsageError } from "../../shared/feature.js";
import type { AuthService } from "../auth/index.js";
import type { UsersService } from "./users.service.js";

/** What the dashboard's commands run against. */
export interface DashboardCommandDeps {
  auth: AuthService;
  users: UsersService;
  database: { db: Parameters<AuthService["accounts"]["profile"]>[0] };
}

/**
 * `ferry admin create-account` (the account and its first dashboard user, with a one-time setup
 * link; it replaces the auth feature's command of the same name) and `ferry admin invite`.
 */
export const dashboardCommands: CommandSpec<DashboardCommandDeps>[] = [
  {
    name: "admin create-account",
    usage:
      "--email E [--name N] [--json]   Create an owner account; prints the owner's one-time dashboard setup link",
    run: async ({ auth, users }, out, flags) => {
      const email = required(flags.email, "--email");
      // Checked before anything is created: the command makes the account and its first user, or nothing.
      if (await users.signsIn(email))
        throw new UsageError(
          `${email} already signs in to a Ferry dashboard; one address signs in to one account. Use another address.`,
        );
      const account = await auth.createAccount(email, flags.name ?? "");
      const { setupUrl } = await users.invite(account.id, account.email, null);
      out.print(
        { account_id: account.id, email: account.email, name: account.name, setup_url: setupUrl },
        [
          `Created account ${account.id} <${account.email}>`,
          `Dashboard setup link (one use, valid 7 days): ${setupUrl}`,
        ].join("\n"),
      );
      return 0;
    },
  },
  {
    name: "admin invite",
    usage:
      "--account ID --email E [--json]   Add a dashboard user to an account; prints their one-time setup link",
    run: async ({ auth, users, database }, out, flags) => {
      const accountId = Number(required(flags.account, "--account"));
      if (!Number.isSafeInteger(accountId) || accountId < 1)
        throw new UsageError("--account must be an account id");
      if (!(await auth.accounts.profile(database.db, accountId)))
        throw new UsageError(`No account with id ${accountId}`);
      const { user, setupUrl } = await users.invite(accountId, required(flags.email, "--email"), null);
      out.print(
        { account_id: accountId, user_id: user.id, email: user.email, setup_url: setupUrl },
        [
          `Invited ${user.email} to account ${accountId}`,
          `Dashboard setup link (one use, valid 7 days): ${setupUrl}`,
        ].join("\n"),
      );
      return 0;
    },
  },
];
