import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { Notifications } from "../notifications/index.js";

/** Default of `push_expiry_days` when the account has none (the requests feature's default). */
export const DEFAULT_PUSH_EXPIRY_DAYS = 14;

/** Who changes a setting from the dashboard (audit fields). */
export interface SettingsActor {
  accountId: number;
  userId: number;
  ip: string;
  method: string;
  path: string;
}

/**
 * Account settings as the dashboard edits them, through the services that own them: the name
 * (shown on recipient pages), `push_expiry_days`, and custom SMTP (SmtpSettingsService: the
 * password is write-only). Each change is audited as ABA-0030 (SMTP: by its own service).
 */
export class AccountSettings {
  constructor(
    private readonly deps: {
      database: Database;
      clock: Clock;
      audit: AuditWriter;
      accounts: AccountsService;
      smtp: Notifications["smtpSettings"];
    },
  ) {}

  /** Name, email, push expiry days and the SMTP settings (undefined when none) of an account. */
  async read(accountId: number) {
    const { db } = this.deps.database;
    const profile = await this.deps.accounts.profile(db, accountId);
    if (!profile) throw new AppError("RESOURCE_NOT_FOUND", "No such account.");
    const days = profile.settings.push_expiry_days;
    const smtp = await this.deps.smtp.get(accountId).catch((err: unknown) => {
      if (err instanceof AppError && err.code === "RESOURCE_NOT_FOUND") return undefined;
      throw err;
    });
    return {
      name: profile.name,
      email: profile.email,
      pushExpiryDays:
        Number.isInteger(days) && (days as number) >= 1 && (days as number) <= 3650
          ? (days as number)
          : DEFAULT_PUSH_EXPIRY_DAYS,
      smtp,
    };
  }

  /** Sets the account's name (at most 200 characters, trimmed). 400 when too long. */
  async rename(actor: SettingsActor, name: string): Promise<void> {
    const trimmed = name.trim();
    if (trimmed.length > 200) throw new ValidationError({ name: ["Use at most 200 characters."] });
    await this.change(actor, "Account name changed", (trx, now) =>
      this.deps.accounts.rename(trx, actor.accountId, trimmed, now),
    );
  }

  /** Sets `push_expiry_days` (an integer 1-3650). 400 otherwise. */
  async setPushExpiryDays(actor: SettingsActor, value: string): Promise<void> {
    const days = Number(value);
    if (!/^\d{1,4}$/.test(value.trim()) || !Number.isInteger(days) || days < 1 || days > 3650)
      throw new ValidationError({ push_expiry_days: ["Enter a whole number of days from 1 to 3650."] });
    await this.change(actor, `push_expiry_days set to ${days}`, async (trx, now) => {
      await this.deps.accounts.mergeSettings(trx, actor.accountId, { push_expiry_days: days }, now);
    });
  }

  /** Sets the SMTP settings (the password kept when `password` is undefined, removed when ""). */
  async setSmtp(actor: SettingsActor, body: Record<string, unknown>): Promise<void> {
    await this.deps.smtp.put({ accountId: actor.accountId, applicationId: 0, actor }, body);
  }

  /** Removes the SMTP settings (404 when none). */
  async removeSmtp(actor: SettingsActor): Promise<void> {
    await this.deps.smtp.remove({ accountId: actor.accountId, applicationId: 0, actor });
  }

  private async change(
    actor: SettingsActor,
    value: string,
    apply: (trx: Parameters<AccountsService["profile"]>[0], now: string) => Promise<void>,
  ): Promise<void> {
    const now = toTimestamp(this.deps.clock.now());
    await this.deps.database.db.transaction().execute(async (trx) => {
      await apply(trx, now);
      await this.deps.audit.write(trx, {
        accountId: actor.accountId,
        code: AuditCode.ENTITY_UPDATED,
        relatedModel: "account",
        relationKey: actor.accountId,
        value: `${value} by user:${actor.userId}`,
        from: actor.ip,
        method: actor.method,
        path: actor.path,
      });
    });
  }
}
