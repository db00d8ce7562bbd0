import { createHash, randomBytes } from "node:crypto";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import { normaliseScopes } from "../../http/scopes.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { isLocale, type Locale, SUPPORTED_LOCALES } from "../../shared/i18n/i18n.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import { AccountsService } from "./accounts.service.js";
import { ApplicationCache } from "./application-cache.js";
import {
  type AccountRow,
  type ApplicationRow,
  countAccounts,
  findAccountByEmail,
  findAccountById,
  findApplicationById,
  findApplicationByKeyHash,
  insertAccount,
  insertApplication,
  listApplicationRows,
  revokeApplicationRow,
  touchApplication,
  updateAccountLanguage,
  updateAccountName,
} from "./auth.repository.js";
import { loadJose } from "./jose.js";

/** The claims Ferry puts in every token. */
export interface TokenClaims {
  app_id: number;
  account_id: number;
  iat: number;
  orig_iat: number;
  exp: number;
}

/** Where a token operation came from, for the audit log. */
export interface CallerInfo {
  ip: string;
  method: string;
  path: string;
  contentType?: string;
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** SHA-256 hex of an API key (keys are 256-bit random, so a fast hash suffices). */
export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey, "utf8").digest("hex");
}

/** Accounts, applications and JWT tokens (spec: Authentication). */
export class AuthService {
  private readonly verified = new Map<string, TokenClaims>();
  /** Profiles and settings of accounts, for other features. */
  readonly accounts = new AccountsService();

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly keyRing: KeyRing,
    private readonly audit: AuditWriter,
    private readonly applications: ApplicationCache = new ApplicationCache(undefined),
  ) {}

  private now(): string {
    return toTimestamp(this.clock.now());
  }

  /** Creates an account; throws AppError(INVALID_REQUEST) on a bad or taken email. */
  async createAccount(email: string, name = ""): Promise<AccountRow> {
    if (!EMAIL_PATTERN.test(email)) throw new AppError("INVALID_REQUEST", "Enter a valid email address.");
    const { db } = this.database;
    if (await findAccountByEmail(db, email)) {
      throw new AppError("CONFLICT", `An account with email ${email} already exists.`);
    }
    return insertAccount(db, { email, name, now: this.now() });
  }

  /**
   * Creates an application for the account with `email` and returns its API key, which is
   * shown this once and stored only as a hash.
   */
  async createApplication(
    email: string,
    name: string,
    scopes?: string[],
  ): Promise<{ account: AccountRow; application: ApplicationRow; apiKey: string }> {
    const { db } = this.database;
    const account = await findAccountByEmail(db, email);
    if (!account) throw new AppError("RESOURCE_NOT_FOUND", `No account with email ${email}.`);
    const normalised = normaliseScopes(scopes);
    const apiKey = `fry_${this.config.isSandbox ? "sbx" : "live"}_${randomBytes(32).toString("base64url")}`;
    const application = await insertApplication(db, {
      accountId: account.id,
      name,
      keyPrefix: apiKey.slice(0, 12),
      keyHash: hashApiKey(apiKey),
      scopes: normalised,
      now: this.now(),
    });
    return { account, application, apiKey };
  }

  /** Revokes an application: its key and every token issued to it stop working at once. */
  async revokeApplication(id: number): Promise<void> {
    const ok = await revokeApplicationRow(this.database.db, id, this.now());
    if (!ok) throw new AppError("RESOURCE_NOT_FOUND", `No active application with id ${id}.`);
    for (const [token, claims] of this.verified) if (claims.app_id === id) this.verified.delete(token);
    await this.applications.changed(id).catch(() => {
      throw new AppError(
        "SERVICE_UNAVAILABLE",
        `Application ${id} is revoked, but Redis did not confirm that other nodes were told.`,
      );
    });
  }

  /** Runs this node's periodic revocation check now (ADR 0067); a timer runs it every few seconds. */
  checkRevocations(): Promise<void> {
    return this.applications.checkRevocations();
  }

  /** Stops listening for other nodes' revocations (on shutdown). */
  close(): void {
    this.applications.close();
  }

  /** Lists applications (never their keys), optionally of one account. */
  async listApplications(email?: string) {
    return listApplicationRows(this.database.db, email);
  }

  /**
   * On a sandbox deployment with an empty database, creates a development account and
   * application and returns its credentials once; returns undefined otherwise (never in live).
   */
  async ensureDevelopmentAccount(): Promise<{ email: string; apiKey: string } | undefined> {
    if (!this.config.isSandbox) return undefined;
    if ((await countAccounts(this.database.db)) > 0) return undefined;
    const email = "dev@ferry.local";
    await this.createAccount(email, "Development account");
    const { apiKey } = await this.createApplication(email, "Development application");
    return { email, apiKey };
  }

  /**
   * get_token: exchanges api_key + the owner's email for a JWT. A mismatch is 401 and is
   * audited as AAA-0002 on the account the email names (unknown emails have no account to log to).
   */
  async issueToken(apiKey: unknown, email: unknown, caller: CallerInfo): Promise<string> {
    const fields: Record<string, string[]> = {};
    if (typeof apiKey !== "string" || apiKey === "") fields.api_key = ["This field is required."];
    if (typeof email !== "string" || email === "") fields.email = ["This field is required."];
    if (Object.keys(fields).length > 0) {
      throw new ValidationError(fields);
    }
    const { db } = this.database;
    const application = await findApplicationByKeyHash(db, hashApiKey(apiKey as string));
    const account = await findAccountByEmail(db, email as string);
    const ok =
      application && account && application.account_id === account.id && application.revoked_at === null;
    const auditBase = {
      from: caller.ip,
      method: caller.method,
      path: caller.path,
      contentType: caller.contentType,
    };
    if (!ok || !application || !account) {
      if (account) {
        await this.audit.write(db, {
          ...auditBase,
          accountId: account.id,
          code: AuditCode.TOKEN_REFUSED,
          apiKeyId: application && application.account_id === account.id ? application.id : "",
          value: "Invalid credentials",
        });
      }
      throw new AppError("AUTHENTICATION_FAILURE", "Unable to log in with the provided credentials.");
    }
    const nowSec = Math.floor(this.clock.now().getTime() / 1000);
    const token = await this.sign({
      app_id: application.id,
      account_id: account.id,
      iat: nowSec,
      orig_iat: nowSec,
    });
    await db.transaction().execute(async (trx) => {
      await touchApplication(trx, application.id, this.now());
      await this.audit.write(trx, {
        ...auditBase,
        accountId: account.id,
        code: AuditCode.TOKEN_ISSUED,
        apiKeyId: application.id,
        relatedModel: "application",
        relationKey: application.id,
        value: "Token issued",
      });
    });
    return token;
  }

  /** token_refresh: a valid token whose orig_iat is within the refresh window gets a new token with a new exp. */
  async refreshToken(token: unknown): Promise<string> {
    const claims = await this.verifySignature(token);
    const nowSec = Math.floor(this.clock.now().getTime() / 1000);
    if (nowSec - claims.orig_iat > this.config.TOKEN_REFRESH_WINDOW_SECONDS) {
      throw new AppError("AUTHENTICATION_FAILURE", "Refresh has expired.");
    }
    await this.requireActiveApplication(claims);
    return this.sign({
      app_id: claims.app_id,
      account_id: claims.account_id,
      iat: nowSec,
      orig_iat: claims.orig_iat,
    });
  }

  /**
   * token_verify: a token is valid only while its application is active, as for every API call
   * (401 for a revoked or deleted application, like a bad signature).
   */
  async verifyToken(token: unknown): Promise<TokenClaims> {
    const claims = await this.verifySignature(token);
    await this.requireActiveApplication(claims);
    return claims;
  }

  /** Checks signature (HS256, kid from the ring), expiry and shape; not the application. */
  private async verifySignature(token: unknown): Promise<TokenClaims> {
    if (typeof token !== "string" || token === "") {
      throw new ValidationError({ token: ["This field is required."] });
    }
    const nowSec = Math.floor(this.clock.now().getTime() / 1000);
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp > nowSec) return cached;
      this.verified.delete(token);
      throw new AppError("AUTHENTICATION_FAILURE", "Signature has expired.");
    }
    let payload: Record<string, unknown>;
    const { errors: joseErrors, jwtVerify } = await loadJose();
    try {
      const result = await jwtVerify(
        token,
        (header) => this.keyRing.derive(String(header.kid ?? ""), "jwt"),
        {
          algorithms: ["HS256"],
          currentDate: this.clock.now(),
        },
      );
      payload = result.payload as Record<string, unknown>;
    } catch (err) {
      const expired = err instanceof joseErrors.JWTExpired;
      throw new AppError(
        "AUTHENTICATION_FAILURE",
        expired ? "Signature has expired." : "Error decoding signature.",
      );
    }
    const claims = payload as unknown as TokenClaims;
    for (const k of ["app_id", "account_id", "iat", "orig_iat", "exp"] as const) {
      if (!Number.isSafeInteger(claims[k]))
        throw new AppError("AUTHENTICATION_FAILURE", "Invalid token claims.");
    }
    if (this.verified.size >= 10_000) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, claims);
    return claims;
  }

  /** Resolves the caller of an API request from its token; 401 when invalid or the application is revoked. */
  async authenticate(token: string): Promise<AuthContext> {
    const claims = await this.verifySignature(token);
    const app = await this.requireActiveApplication(claims);
    return { accountId: app.account_id, applicationId: app.id, scopes: app.scopes };
  }

  /** The account and application behind an authenticated caller. */
  async describeCaller(ctx: AuthContext): Promise<{ account: AccountRow; application: ApplicationRow }> {
    const { db } = this.database;
    const [account, application] = await Promise.all([
      findAccountById(db, ctx.accountId),
      findApplicationById(db, ctx.applicationId),
    ]);
    if (!account || !application)
      throw new AppError("AUTHENTICATION_FAILURE", "The account of this token no longer exists.");
    return { account, application };
  }

  /**
   * Changes the account's settings readable through `GET /v1/account/`: `name` (shown to recipients;
   * 1-200 characters, trimmed) and `default_language`, the language of recipients whose browser
   * names none Ferry supports and of emails and SMS (ADR 0033). 400 naming the field for a bad
   * value or a read-only field (`id`, `email`, `environment`, `application`), nothing changed;
   * audited (ENTITY_UPDATED on `account`) with the change.
   */
  async updateAccount(
    ctx: AuthContext,
    patch: Record<string, unknown>,
  ): Promise<{ account: AccountRow; application: ApplicationRow }> {
    const errors: Record<string, string[]> = {};
    for (const field of ["id", "email", "environment", "application"])
      if (patch[field] !== undefined) errors[field] = ["This field is read-only."];
    const changes: { name?: string; default_language?: Locale } = {};
    if (patch.name !== undefined) {
      const name = typeof patch.name === "string" ? patch.name.trim() : "";
      if (name === "" || name.length > 200) errors.name = ["Enter a name of 1 to 200 characters."];
      else changes.name = name;
    }
    if (patch.default_language !== undefined) {
      const language = patch.default_language;
      if (!isLocale(language)) errors.default_language = [`Choose one of: ${SUPPORTED_LOCALES.join(", ")}.`];
      else changes.default_language = language;
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    if (Object.keys(changes).length > 0) {
      await this.database.db.transaction().execute(async (trx) => {
        const now = toTimestamp(this.clock.now());
        if (changes.name !== undefined) await updateAccountName(trx, ctx.accountId, changes.name, now);
        if (changes.default_language !== undefined)
          await updateAccountLanguage(trx, ctx.accountId, changes.default_language, now);
        await this.audit.write(trx, {
          accountId: ctx.accountId,
          code: AuditCode.ENTITY_UPDATED,
          apiKeyId: ctx.applicationId,
          relatedModel: "account",
          relationKey: ctx.accountId,
          value: JSON.stringify(changes),
        });
      });
    }
    return this.describeCaller(ctx);
  }

  private async requireActiveApplication(claims: TokenClaims): Promise<ApplicationRow> {
    const { db } = this.database;
    const app = await this.applications.get(claims.app_id, () => findApplicationById(db, claims.app_id));
    if (!app || app.revoked_at !== null || app.account_id !== claims.account_id) {
      throw new AppError("AUTHENTICATION_FAILURE", "The application of this token has been revoked.");
    }
    return app;
  }

  private async sign(claims: Omit<TokenClaims, "exp">): Promise<string> {
    const kid = this.keyRing.activeKid;
    const { SignJWT } = await loadJose();
    return new SignJWT({ app_id: claims.app_id, account_id: claims.account_id, orig_iat: claims.orig_iat })
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid })
      .setIssuedAt(claims.iat)
      .setExpirationTime(claims.iat + this.config.TOKEN_TTL_SECONDS)
      .sign(this.keyRing.derive(kid, "jwt"));
  }
}
