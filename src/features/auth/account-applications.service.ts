import type { Database } from "../../db/database.js";
import { normaliseScopes } from "../../http/scopes.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import {
  type ApplicationRow,
  findAccountById,
  findApplicationById,
  listApplicationRows,
} from "./auth.repository.js";
import type { AuthService } from "./auth.service.js";

/** An application as the API and the dashboard show it (never its key or key hash). */
export interface ApplicationView {
  id: number;
  name: string;
  /** The first 12 characters of the key, to recognise it. */
  key_prefix: string;
  /** "*" or space-separated areas (`<area>` or `<area>:read`). */
  scopes: string;
  active: boolean;
  revoked_at: string | null;
  last_used_at: string | null;
  created: string;
}

/** Who acts, for the audit log: the application of an API call or a dashboard user. */
export interface ApplicationsActor {
  accountId: number;
  /** The application of an API call (empty for dashboard users). */
  applicationId?: number;
  /** "user:<id>" for a dashboard user. */
  who?: string;
  ip: string;
  method: string;
  path: string;
}

/** Presents an application row (allow-listed fields). */
export function presentApplication(row: ApplicationRow): ApplicationView {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    scopes: row.scopes,
    active: row.revoked_at === null,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    created: row.created,
  };
}

/**
 * The applications of one account, for the dashboard and `/v1/application/`: list, create (the key
 * is answered once) and revoke, which goes through AuthService.revokeApplication so every cache
 * of keys and tokens forgets the application at once. Another account's application is a 404.
 */
export class AccountApplications {
  constructor(
    private readonly database: Database,
    private readonly auth: AuthService,
    private readonly audit: AuditWriter,
  ) {}

  private async account(accountId: number) {
    const account = await findAccountById(this.database.db, accountId);
    if (!account) throw new AppError("RESOURCE_NOT_FOUND", "No such account.");
    return account;
  }

  /** The account's applications, newest first (revoked ones included, marked). */
  async list(accountId: number): Promise<ApplicationView[]> {
    const account = await this.account(accountId);
    const rows = await listApplicationRows(this.database.db, account.email);
    return rows
      .filter((r) => r.account_id === accountId)
      .reverse()
      .map(presentApplication);
  }

  /** One application of the account; 404 when absent or another account's. */
  async get(accountId: number, id: number): Promise<ApplicationView> {
    const row = Number.isSafeInteger(id) ? await findApplicationById(this.database.db, id) : undefined;
    if (!row || row.account_id !== accountId)
      throw new AppError("RESOURCE_NOT_FOUND", "No such application.");
    return presentApplication(row);
  }

  /**
   * Creates an application with `name` (1-100 characters) and `scopes` ("*" when empty) and answers
   * its API key, shown this once. 400 with field messages when invalid. Audited as ABA-0010.
   */
  async create(
    actor: ApplicationsActor,
    input: { name?: unknown; scopes?: unknown },
  ): Promise<{ application: ApplicationView; api_key: string }> {
    const fields: Record<string, string[]> = {};
    const name = typeof input.name === "string" ? input.name.trim() : "";
    if (!name) fields.name = ["This field is required."];
    else if (name.length > 100) fields.name = ["Use at most 100 characters."];
    let scopes: string[] = [];
    if (Array.isArray(input.scopes) && input.scopes.every((s) => typeof s === "string"))
      scopes = input.scopes;
    else if (typeof input.scopes === "string") scopes = [input.scopes];
    else if (input.scopes !== undefined && input.scopes !== null)
      fields.scopes = ["Give a list of scopes or a space-separated string."];
    let normalised = "*";
    try {
      normalised = normaliseScopes(scopes);
    } catch (err) {
      fields.scopes = [(err as Error).message];
    }
    if (Object.keys(fields).length > 0) throw new ValidationError(fields);
    const account = await this.account(actor.accountId);
    const { application, apiKey } = await this.auth.createApplication(
      account.email,
      name,
      normalised.split(" "),
    );
    await this.record(
      actor,
      AuditCode.ENTITY_CREATED,
      application.id,
      `Application created (scopes: ${normalised})`,
    );
    return { application: presentApplication(application), api_key: apiKey };
  }

  /**
   * Revokes an application of the account: its key and every token issued to it stop working at
   * once. 404 when absent, another account's, or already revoked. Audited as ABA-0020.
   */
  async revoke(actor: ApplicationsActor, id: number): Promise<void> {
    const app = await this.get(actor.accountId, id);
    if (!app.active) throw new AppError("RESOURCE_NOT_FOUND", "This application is already revoked.");
    await this.auth.revokeApplication(id);
    await this.record(actor, AuditCode.ENTITY_DELETED, id, "Application revoked");
  }

  private async record(
    actor: ApplicationsActor,
    code: typeof AuditCode.ENTITY_CREATED | typeof AuditCode.ENTITY_DELETED,
    id: number,
    value: string,
  ) {
    await this.audit.write(this.database.db, {
      accountId: actor.accountId,
      code,
      apiKeyId: actor.applicationId ?? "",
      relatedModel: "application",
      relationKey: id,
      value: actor.who ? `${value} by ${actor.who}` : value,
      from: actor.ip,
      method: actor.method,
      path: actor.path,
    });
  }
}
