import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isRefusedAddress } from "../../adapters/http-client/address-guard.js";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { DeliveryError, type Mailer } from "../../adapters/mailer/mailer.js";
import { SmtpMailer } from "../../adapters/mailer/smtp-mailer.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, ValidationError } from "../../shared/errors.js";
import { toTimestamp } from "../../shared/time.js";
import { isValidEmail } from "../../shared/validation.js";
import { type AuditActor, AuditCode, type AuditWriter, actorFields } from "../audit/index.js";
import { presentSmtpSettings, type SmtpSettingsView } from "./notifications.presenter.js";
import {
  deleteSmtpSettings,
  findSmtpSettings,
  type SmtpSettingsRow,
  upsertSmtpSettings,
} from "./notifications.repository.js";
import { openSecret, sealSecret } from "./secret-box.js";

/** Who changes settings: the account and the application, or the dashboard user (for the audit entry). */
export interface SettingsCaller {
  accountId: number;
  applicationId: number;
  /** The signed-in dashboard user who made the change (named in the audit entry). */
  actor?: AuditActor;
}

const TLS_MODES = ["none", "starttls", "tls"] as const;
const HOSTNAME =
  /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const CACHE_MS = 10 * 60 * 1000;

/**
 * Per-account custom SMTP settings (a custom sender domain): stored with the password encrypted
 * (AES-256-GCM, key ring "secrets" key, kid beside the ciphertext), used instead of the deployment's
 * mailer when set. Hosts resolving to private addresses are refused unless SMTP_CUSTOM_ALLOW_PRIVATE.
 */
export class SmtpSettingsService {
  private readonly cache = new Map<
    number,
    { updated: string; at: number; mailer: SmtpMailer; from: string }
  >();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly keyRing: KeyRing,
    private readonly audit: AuditWriter,
    private readonly options: { allowPrivate: boolean },
  ) {}

  /** The account's settings; 404 when none are set. */
  async get(accountId: number): Promise<SmtpSettingsView> {
    const row = await findSmtpSettings(this.database.db, accountId);
    if (!row) throw notFound("SMTP settings");
    return presentSmtpSettings(row);
  }

  /**
   * Sets (replaces) the settings. Body: host (required), port (default 587), tls (none|starttls|tls,
   * default starttls), username, password (omitted: the stored one is kept; "" or null: removed),
   * from_email (required). 400 with field messages when invalid.
   */
  async put(caller: SettingsCaller, body: Record<string, unknown>): Promise<SmtpSettingsView> {
    const errors: Record<string, string[]> = {};
    const add = (f: string, m: string) => {
      errors[f] = [...(errors[f] ?? []), m];
    };
    const host = typeof body.host === "string" ? body.host.trim() : "";
    if (!host) add("host", "This field is required.");
    else if (!HOSTNAME.test(host) && !isIP(host)) add("host", "Enter a valid host name or IP address.");
    const port = body.port === undefined || body.port === null || body.port === "" ? 587 : Number(body.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      add("port", "Enter an integer between 1 and 65535.");
    const tls = body.tls === undefined || body.tls === null ? "starttls" : body.tls;
    if (!(TLS_MODES as readonly unknown[]).includes(tls))
      add("tls", '"tls" must be one of none, starttls, tls.');
    const username = body.username === undefined || body.username === null ? null : String(body.username);
    if (username !== null && username.length > 254)
      add("username", "Ensure this field has no more than 254 characters.");
    const fromEmail = typeof body.from_email === "string" ? body.from_email.trim() : "";
    if (!fromEmail) add("from_email", "This field is required.");
    else if (!isValidEmail(fromEmail)) add("from_email", "Enter a valid email address.");
    if (body.password !== undefined && body.password !== null && typeof body.password !== "string") {
      add("password", "Not a valid string.");
    }
    if (typeof body.password === "string" && body.password.length > 1024) {
      add("password", "Ensure this field has no more than 1024 characters.");
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const now = toTimestamp(this.clock.now());
    return this.database.db.transaction().execute(async (trx) => {
      const existing = await findSmtpSettings(trx, caller.accountId);
      let sealed: { kid: string; ciphertext: string } | null = null;
      if (typeof body.password === "string" && body.password !== "") {
        sealed = sealSecret(this.keyRing, body.password, label(caller.accountId));
      } else if (body.password === undefined && existing?.password_ciphertext && existing.password_kid) {
        sealed = { kid: existing.password_kid, ciphertext: existing.password_ciphertext };
      }
      const row = await upsertSmtpSettings(trx, {
        account_id: caller.accountId,
        host,
        port,
        tls: tls as (typeof TLS_MODES)[number],
        username: username || null,
        password_ciphertext: sealed?.ciphertext ?? null,
        password_kid: sealed?.kid ?? null,
        from_email: fromEmail,
        created: existing?.created ?? now,
        updated: now,
      });
      await this.audit.write(trx, {
        accountId: caller.accountId,
        code: existing ? AuditCode.ENTITY_UPDATED : AuditCode.ENTITY_CREATED,
        apiKeyId: caller.applicationId,
        relatedModel: "smtp_settings",
        relationKey: caller.accountId,
        ...actorFields(caller.actor, host),
      });
      this.drop(caller.accountId);
      return presentSmtpSettings(row);
    });
  }

  /** Removes the settings (the deployment's mailer is used again); 404 when none were set. */
  async remove(caller: SettingsCaller): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      if (!(await deleteSmtpSettings(trx, caller.accountId))) throw notFound("SMTP settings");
      await this.audit.write(trx, {
        accountId: caller.accountId,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: caller.applicationId,
        relatedModel: "smtp_settings",
        relationKey: caller.accountId,
        ...actorFields(caller.actor, ""),
      });
    });
    this.drop(caller.accountId);
  }

  /**
   * The mailer of the account's own SMTP server and its sender address, or undefined when the account
   * has none. Throws a permanent DeliveryError when the host resolves to a refused address.
   */
  async mailerFor(accountId: number): Promise<{ mailer: Mailer; from: string } | undefined> {
    const row = await findSmtpSettings(this.database.db, accountId);
    if (!row) {
      this.drop(accountId);
      return undefined;
    }
    const hit = this.cache.get(accountId);
    if (hit && hit.updated === row.updated && Date.now() - hit.at < CACHE_MS) return hit;
    this.drop(accountId);
    const address = await this.resolve(row.host);
    const mailer = new SmtpMailer({
      host: address,
      port: row.port,
      tls: row.tls,
      user: row.username ?? undefined,
      password: this.password(row),
      servername: isIP(row.host) ? undefined : row.host,
    });
    const entry = { updated: row.updated, at: Date.now(), mailer, from: row.from_email };
    this.cache.set(accountId, entry);
    return entry;
  }

  /** Closes cached transports. */
  async close(): Promise<void> {
    for (const id of [...this.cache.keys()]) this.drop(id);
  }

  private password(row: SmtpSettingsRow): string | undefined {
    if (!row.password_ciphertext || !row.password_kid) return undefined;
    return openSecret(
      this.keyRing,
      { kid: row.password_kid, ciphertext: row.password_ciphertext },
      label(row.account_id),
    );
  }

  private async resolve(host: string): Promise<string> {
    let addresses: { address: string }[];
    try {
      addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
    } catch {
      throw new DeliveryError(`The custom SMTP host ${host} does not resolve.`, false);
    }
    if (!this.options.allowPrivate && addresses.some((a) => isRefusedAddress(a.address))) {
      throw new DeliveryError(
        `The custom SMTP host ${host} resolves to a private address, which is refused.`,
        true,
      );
    }
    const first = addresses[0];
    if (!first) throw new DeliveryError(`The custom SMTP host ${host} does not resolve.`, false);
    return first.address;
  }

  private drop(accountId: number): void {
    const hit = this.cache.get(accountId);
    if (hit) void hit.mailer.close();
    this.cache.delete(accountId);
  }
}

function label(accountId: number): string {
  return `smtp-password:${accountId}`;
}
