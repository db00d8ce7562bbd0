import type { Executor } from "../../db/database.js";
import {
  findAccountByEmail,
  findAccountById,
  updateAccountName,
  updateAccountSettings,
} from "./auth.repository.js";

/** An account as other features show it: its name, email and settings. */
export interface AccountProfile {
  id: number;
  name: string;
  email: string;
  /** Per-account settings; each feature documents the keys it reads. */
  settings: Record<string, unknown>;
  /** The recipients' language when their browser names none Ferry supports, and of emails and SMS (ADR 0033). */
  defaultLanguage: string;
}

/** Reads an account's settings JSON as an object ({} when absent or unreadable). */
export function parseAccountSettings(raw: string | undefined): Record<string, unknown> {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Accounts as other features see them: profile and per-account settings. */
export class AccountsService {
  /** The account `accountId` (undefined when absent). */
  async profile(ex: Executor, accountId: number): Promise<AccountProfile | undefined> {
    const row = await findAccountById(ex, accountId);
    return (
      row && {
        id: row.id,
        name: row.name,
        email: row.email,
        settings: parseAccountSettings(row.settings),
        defaultLanguage: row.default_language,
      }
    );
  }

  /** Sets the account's name, shown on recipient pages (call inside the transaction of the change). */
  async rename(ex: Executor, accountId: number, name: string, now: string): Promise<void> {
    await updateAccountName(ex, accountId, name, now);
  }

  /** The id of the account with `email` (case-insensitive), or undefined. */
  async idByEmail(ex: Executor, email: string): Promise<number | undefined> {
    return (await findAccountByEmail(ex, email))?.id;
  }

  /** The account's settings ({} when the account is absent). */
  async settings(ex: Executor, accountId: number): Promise<Record<string, unknown>> {
    return (await this.profile(ex, accountId))?.settings ?? {};
  }

  /**
   * Merges `patch` into the account's settings (read-modify-write: call inside the transaction of
   * the change) and returns the merged settings.
   */
  async mergeSettings(
    ex: Executor,
    accountId: number,
    patch: Record<string, unknown>,
    now: string,
  ): Promise<Record<string, unknown>> {
    const next = { ...(await this.settings(ex, accountId)), ...patch };
    await updateAccountSettings(ex, accountId, JSON.stringify(next), now);
    return next;
  }
}
