import { createHash, randomBytes } from "node:crypto";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { constantTimeEqual } from "../../crypto/hashing.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError } from "../../shared/errors.js";
import { addSeconds, parseTimestamp, toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditCodeValue, type AuditWriter } from "../audit/index.js";
import { openSecret, sealSecret } from "../notifications/index.js";
import {
  advanceTotpStep,
  countUsersOfAccount,
  deleteSessionsOfUser,
  deleteUser,
  findAccountUserByEmail,
  findSignInUserByEmail,
  findUserById,
  findUserBySetupHash,
  insertUser,
  listUsersOfAccount,
  replaceRecoveryCodes,
  reserveSignInAttempt,
  settleSignInAttempt,
  type UserRow,
  updateUser,
} from "./dashboard.repository.js";
import { hashPassword, passwordProblem, verifyDecoy, verifyPassword } from "./password.js";
import { matchTotpStep, newTotpSecret, totpQrDataUrl, totpUri } from "./totp.js";

/** How long a setup link stays valid. */
export const SETUP_LINK_SECONDS = 7 * 86_400;
/** Failed password or code attempts in a row before the user is locked out. */
export const LOCKOUT_THRESHOLD = 5;
/** How long a lockout lasts. */
export const LOCKOUT_SECONDS = 15 * 60;
/** Recovery codes made at enrolment. */
const RECOVERY_CODES = 10;
const SEAL_LABEL = "ferry/dashboard/totp";
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Where a sign-in attempt came from (audit fields). */
export interface SignInCaller {
  ip: string;
  method: string;
  path: string;
}

/** The signed-in dashboard user who changes the team, and where from (audit fields). */
export interface TeamActor extends SignInCaller {
  accountId: number;
  userId: number;
}

/** A dashboard user as pages show it (never hashes or secrets). */
export interface UserView {
  id: number;
  accountId: number;
  email: string;
  /** "active" (TOTP enrolled), "pending" (setup link not used or enrolment unfinished). */
  status: "active" | "pending";
  lastSignInAt: string | null;
  created: string;
}

/** The outcome of a failed sign-in step, in words the form shows. */
export class SignInRefused extends Error {}

/**
 * The one answer of the password step to an unknown email, a wrong password and a locked user
 * alike, so the form tells nothing about which emails exist or are locked.
 */
export const PASSWORD_REFUSED = `Wrong email or password. After ${LOCKOUT_THRESHOLD} failed attempts in a row, sign-in stays locked for 15 minutes.`;
/** The answer of the code steps while the user is locked out (the password was already right). */
const LOCKED_OUT =
  "Too many failed attempts: sign-in is locked for 15 minutes. Try again later or ask a colleague.";

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Normalises a recovery code as typed (case, spaces and dashes do not matter). */
function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, "");
}

function present(row: UserRow): UserView {
  return {
    id: row.id,
    accountId: row.account_id,
    email: row.email,
    status: row.totp_enabled_at ? "active" : "pending",
    lastSignInAt: row.last_sign_in_at,
    created: row.created,
  };
}

/**
 * Dashboard users: setup links, passwords (scrypt), TOTP enrolment and recovery codes, the two
 * steps of sign-in with lockout and replay refusal, and the colleagues of an account. Every
 * sign-in outcome is audited: AAA-0001 on success, AAA-0002 on each refusal.
 */
export class UsersService {
  constructor(
    private readonly deps: {
      database: Database;
      clock: Clock;
      keyRing: KeyRing;
      audit: AuditWriter;
      publicBaseUrl: string;
      issuer: string;
    },
  ) {}

  private now(): string {
    return toTimestamp(this.deps.clock.now());
  }

  /** The one-time setup URL of a token. */
  setupUrl(token: string): string {
    return `${this.deps.publicBaseUrl}/dashboard/setup/${token}`;
  }

  /**
   * Adds a user to an account and returns its one-time setup link (valid SETUP_LINK_SECONDS). An
   * invited user of this account who never finished setup gets a new link (the old one stops
   * working); one already set up is a conflict. Other accounts are never consulted, so the answer
   * is the same whether or not the address is known elsewhere (an address that already signs in
   * to another account is refused when its link is followed). Audited with `actor` when given.
   */
  async invite(
    accountId: number,
    email: string,
    invitedBy: number | null,
    actor?: TeamActor,
  ): Promise<{ user: UserView; setupUrl: string }> {
    const normalised = email.trim().toLowerCase();
    if (!EMAIL_PATTERN.test(normalised) || normalised.length > 254)
      throw new AppError("INVALID_REQUEST", "Enter a valid email address.");
    const token = randomBytes(32).toString("base64url");
    const expires = toTimestamp(addSeconds(this.deps.clock.now(), SETUP_LINK_SECONDS));
    const { db } = this.deps.database;
    return db.transaction().execute(async (trx) => {
      // Only this account's users are looked at: the answer never depends on other accounts.
      const existing = await findAccountUserByEmail(trx, accountId, normalised);
      let row: UserRow;
      if (existing) {
        if (existing.totp_enabled_at)
          throw new AppError("CONFLICT", `${normalised} is already a user of this account.`);
        await updateUser(trx, existing.id, {
          setup_token_hash: sha256(token),
          setup_expires_at: expires,
          updated: this.now(),
        });
        row = existing;
      } else
        row = await insertUser(trx, {
          accountId,
          email: normalised,
          setupTokenHash: sha256(token),
          setupExpiresAt: expires,
          invitedBy,
          now: this.now(),
        });
      if (actor)
        await this.recordTeamChange(
          trx,
          actor,
          existing ? AuditCode.ENTITY_UPDATED : AuditCode.ENTITY_CREATED,
          row.id,
          existing ? "User invited again (new setup link)" : "User invited",
        );
      return { user: present(row), setupUrl: this.setupUrl(token) };
    });
  }

  /** True when a set-up user signs in with this email (any account): `ferry admin create-account` refuses it. */
  async signsIn(email: string): Promise<boolean> {
    return !!(await findSignInUserByEmail(this.deps.database.db, email.trim().toLowerCase()));
  }

  /** True when the account has no user yet (its first start). */
  async hasNoUsers(accountId: number): Promise<boolean> {
    return (await countUsersOfAccount(this.deps.database.db, accountId)) === 0;
  }

  /** The users of an account. */
  async list(accountId: number): Promise<UserView[]> {
    return (await listUsersOfAccount(this.deps.database.db, accountId)).map(present);
  }

  /** A user of an account, or undefined (another account's user is undefined too). */
  async get(accountId: number, userId: number): Promise<UserView | undefined> {
    const row = await findUserById(this.deps.database.db, userId);
    return row && row.account_id === accountId ? present(row) : undefined;
  }

  /**
   * Removes a user of the actor's account, then their sessions, and audits it (ABA-0020 with the
   * actor); 404, changing nothing, when the user is absent or another account's. A user cannot
   * remove themself.
   */
  async remove(actor: TeamActor, userId: number): Promise<void> {
    if (userId === actor.userId) throw new AppError("INVALID_REQUEST", "You cannot remove yourself.");
    await this.deps.database.db.transaction().execute(async (trx) => {
      if (!(await deleteUser(trx, actor.accountId, userId)))
        throw new AppError("RESOURCE_NOT_FOUND", "No such user.");
      await this.recordTeamChange(trx, actor, AuditCode.ENTITY_DELETED, userId, "User removed");
    });
  }

  /** Ends every session of the acting user (sign out everywhere) and audits it; returns how many ended. */
  async signOutEverywhere(actor: TeamActor): Promise<number> {
    return this.deps.database.db.transaction().execute(async (trx) => {
      const ended = await deleteSessionsOfUser(trx, actor.userId);
      await this.recordTeamChange(
        trx,
        actor,
        AuditCode.ENTITY_UPDATED,
        actor.userId,
        `Signed out everywhere (${ended} sessions ended)`,
      );
      return ended;
    });
  }

  /** Audits a change of the team or of a user's sessions, naming the acting user. */
  async recordTeamChange(
    ex: Executor,
    actor: TeamActor,
    code: AuditCodeValue,
    userId: number,
    value: string,
  ): Promise<void> {
    await this.deps.audit.write(ex, {
      accountId: actor.accountId,
      code,
      relatedModel: "user",
      relationKey: userId,
      value: `${value} by user:${actor.userId}`,
      from: actor.ip,
      method: actor.method,
      path: actor.path,
    });
  }

  /** The user a setup link names while it is valid, or undefined. */
  async bySetupToken(token: string): Promise<UserView | undefined> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
    const row = await findUserBySetupHash(this.deps.database.db, sha256(token));
    if (!row?.setup_expires_at || parseTimestamp(row.setup_expires_at) <= this.deps.clock.now())
      return undefined;
    return present(row);
  }

  /**
   * Sets the password of the user a valid setup link names and uses the link up. Throws
   * SignInRefused with the form's message when the link is no longer valid, the password too weak,
   * or the address already signs in to another account.
   */
  async setPasswordFromLink(token: string, password: string): Promise<UserView> {
    const user = await this.bySetupToken(token);
    if (!user) throw new SignInRefused("This setup link has expired or was already used. Ask for a new one.");
    const problem = passwordProblem(password, user.email);
    if (problem) throw new SignInRefused(problem);
    // One sign-in names one account: an address that already signs in elsewhere cannot set up here.
    const signsIn = await findSignInUserByEmail(this.deps.database.db, user.email);
    if (signsIn && signsIn.id !== user.id)
      throw new SignInRefused(
        "This email address already signs in to another Ferry dashboard. Sign in there, or ask for an invitation to another address.",
      );
    await updateUser(this.deps.database.db, user.id, {
      password_hash: await hashPassword(password),
      setup_token_hash: null,
      setup_expires_at: null,
      // A new password restarts two-factor enrolment: the old secret and codes are dropped.
      totp_secret: null,
      totp_enabled_at: null,
      recovery_codes: "[]",
      failed_attempts: 0,
      locked_until: null,
      updated: this.now(),
    });
    await deleteSessionsOfUser(this.deps.database.db, user.id);
    return user;
  }

  /** The TOTP enrolment of a user who has none confirmed: secret, otpauth URI and QR code (made once). */
  async enrolment(userId: number): Promise<{ secret: string; uri: string; qrDataUrl: string }> {
    const { db } = this.deps.database;
    const row = await findUserById(db, userId);
    if (!row) throw new AppError("RESOURCE_NOT_FOUND", "No such user.");
    if (row.totp_enabled_at) throw new AppError("CONFLICT", "Two-factor authentication is already set up.");
    let secret = row.totp_secret ? this.openTotp(row.totp_secret) : undefined;
    if (!secret) {
      secret = newTotpSecret();
      await updateUser(db, userId, {
        totp_secret: JSON.stringify(sealSecret(this.deps.keyRing, secret, SEAL_LABEL)),
        updated: this.now(),
      });
    }
    const uri = totpUri(secret, row.email, this.deps.issuer);
    return { secret, uri, qrDataUrl: await totpQrDataUrl(uri) };
  }

  /**
   * Confirms enrolment with a code of the new secret and returns the recovery codes, shown this
   * once (stored hashed). Throws SignInRefused when the code does not match.
   */
  async confirmEnrolment(userId: number, code: string, caller: SignInCaller): Promise<string[]> {
    const { db } = this.deps.database;
    const row = await findUserById(db, userId);
    if (!row?.totp_secret || row.totp_enabled_at) throw new SignInRefused("Start the setup again.");
    const reserved = await this.reserveOrRefuse(row, caller);
    const secret = this.openTotp(row.totp_secret);
    const step = secret ? matchTotpStep(secret, code.trim(), this.deps.clock.now()) : undefined;
    if (step === undefined || !(await advanceTotpStep(db, userId, step, this.now()))) {
      await this.failed(row, reserved, caller, "Enrolment code refused");
      throw new SignInRefused("That code is not right. Enter the 6-digit code your app shows now.");
    }
    const codes = Array.from({ length: RECOVERY_CODES }, () => {
      const raw = randomBytes(8).toString("hex");
      return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}-${raw.slice(12)}`;
    });
    await db.transaction().execute(async (trx) => {
      await settleSignInAttempt(trx, userId, reserved, "clear", this.now());
      await updateUser(trx, userId, {
        totp_enabled_at: this.now(),
        recovery_codes: JSON.stringify(codes.map((c) => sha256(normaliseRecoveryCode(c)))),
        last_sign_in_at: this.now(),
        updated: this.now(),
      });
      await this.deps.audit.write(trx, {
        accountId: row.account_id,
        code: AuditCode.TOKEN_ISSUED,
        relatedModel: "user",
        relationKey: row.id,
        value: "Dashboard sign-in (two-factor set up)",
        from: caller.ip,
        method: caller.method,
        path: caller.path,
      });
    });
    return codes;
  }

  /**
   * First step of sign-in: email and password. Returns the user (who then owes a TOTP or recovery
   * code, or enrolment). The attempt is counted before the password is checked (at most
   * LOCKOUT_THRESHOLD checks per lock, however many arrive at once). An unknown email, a wrong
   * password and a locked user all spend one scrypt and get the same SignInRefused
   * (PASSWORD_REFUSED), so neither the answer nor its work tells which emails exist; AAA-0002 is
   * written on the account of a known email.
   */
  async checkPassword(email: string, password: string, caller: SignInCaller): Promise<UserView> {
    const row = await findSignInUserByEmail(this.deps.database.db, email.trim().toLowerCase());
    if (!row?.password_hash) {
      await verifyDecoy(password);
      throw new SignInRefused(PASSWORD_REFUSED);
    }
    const reserved = await this.reserve(row);
    if (reserved === undefined) {
      await verifyDecoy(password);
      await this.audit(row, caller, "Refused: locked out after repeated failures");
      throw new SignInRefused(PASSWORD_REFUSED);
    }
    if (!(await verifyPassword(password, row.password_hash))) {
      await this.failed(row, reserved, caller, "Wrong password");
      throw new SignInRefused(PASSWORD_REFUSED);
    }
    // A code is still owed: only this attempt's count is taken back, wrong codes stay counted.
    await settleSignInAttempt(this.deps.database.db, row.id, reserved, "release", this.now());
    return present(row);
  }

  /**
   * Second step of sign-in: a TOTP code (a code already accepted is refused: replay) or an unused
   * recovery code (used up). The attempt is counted before the code is checked. Writes AAA-0001
   * on success, AAA-0002 on refusal (SignInRefused).
   */
  async checkSecondFactor(userId: number, code: string, caller: SignInCaller): Promise<UserView> {
    const { db } = this.deps.database;
    const row = await findUserById(db, userId);
    if (!row?.totp_secret || !row.totp_enabled_at) throw new SignInRefused("Sign in again.");
    const reserved = await this.reserveOrRefuse(row, caller);
    const typed = code.trim();
    let how = "";
    if (/^\d{6}$/.test(typed)) {
      const secret = this.openTotp(row.totp_secret);
      const step = secret ? matchTotpStep(secret, typed, this.deps.clock.now()) : undefined;
      if (step !== undefined && (await advanceTotpStep(db, userId, step, this.now())))
        how = "authenticator code";
      else if (step !== undefined) {
        await this.failed(row, reserved, caller, "Authenticator code replayed");
        throw new SignInRefused("That code was already used. Wait for the next code and enter it.");
      }
    } else {
      // Read again after the reservation: a code used meanwhile is gone.
      const before = (await findUserById(db, userId))?.recovery_codes ?? "[]";
      const hashes = JSON.parse(before) as string[];
      const wanted = sha256(normaliseRecoveryCode(typed));
      const match = hashes.find((h) => constantTimeEqual(h, wanted));
      const after = JSON.stringify(hashes.filter((h) => h !== match));
      // Conditional on the list read: two sign-ins racing with one code cannot both use it.
      if (match && (await replaceRecoveryCodes(db, userId, before, after, this.now()))) how = "recovery code";
    }
    if (!how) {
      await this.failed(row, reserved, caller, "Wrong two-factor code");
      throw new SignInRefused("That code is not right.");
    }
    await db.transaction().execute(async (trx) => {
      await settleSignInAttempt(trx, userId, reserved, "clear", this.now());
      await updateUser(trx, userId, { last_sign_in_at: this.now(), updated: this.now() });
      await this.deps.audit.write(trx, {
        accountId: row.account_id,
        code: AuditCode.TOKEN_ISSUED,
        relatedModel: "user",
        relationKey: row.id,
        value: `Dashboard sign-in (${how})`,
        from: caller.ip,
        method: caller.method,
        path: caller.path,
      });
    });
    return present(row);
  }

  /** How many unused recovery codes the user has. */
  async recoveryCodesLeft(userId: number): Promise<number> {
    const row = await findUserById(this.deps.database.db, userId);
    return row ? (JSON.parse(row.recovery_codes) as string[]).length : 0;
  }

  private openTotp(sealed: string): string | undefined {
    try {
      return openSecret(this.deps.keyRing, JSON.parse(sealed), SEAL_LABEL);
    } catch {
      return undefined;
    }
  }

  /** Counts an attempt before its check (reserveSignInAttempt); undefined while the user is locked out. */
  private reserve(row: UserRow): Promise<number | undefined> {
    const now = this.deps.clock.now();
    return reserveSignInAttempt(this.deps.database.db, row.id, {
      now: toTimestamp(now),
      lockUntil: toTimestamp(addSeconds(now, LOCKOUT_SECONDS)),
      threshold: LOCKOUT_THRESHOLD,
    });
  }

  /** Counts an attempt of a code step; refuses (AAA-0002, SignInRefused) while the user is locked out. */
  private async reserveOrRefuse(row: UserRow, caller: SignInCaller): Promise<number> {
    const reserved = await this.reserve(row);
    if (reserved === undefined) {
      await this.audit(row, caller, "Refused: locked out after repeated failures");
      throw new SignInRefused(LOCKED_OUT);
    }
    return reserved;
  }

  /** Writes AAA-0002 for a refused attempt (already counted by its reservation, which locks at the threshold). */
  private async failed(row: UserRow, reserved: number, caller: SignInCaller, reason: string): Promise<void> {
    await this.audit(row, caller, reserved >= LOCKOUT_THRESHOLD ? `${reason}; locked out` : reason);
  }

  private async audit(row: UserRow, caller: SignInCaller, value: string): Promise<void> {
    await this.deps.audit.write(this.deps.database.db, {
      accountId: row.account_id,
      code: AuditCode.TOKEN_REFUSED,
      relatedModel: "user",
      relationKey: row.id,
      value: `Dashboard sign-in refused: ${value}`,
      from: caller.ip,
      method: caller.method,
      path: caller.path,
    });
  }
}
