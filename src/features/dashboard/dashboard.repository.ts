import { type Selectable, sql } from "kysely";
import type { Executor } from "../../db/database.js";
import type { DashboardSessionsTable, DashboardUsersTable } from "../../db/schema.js";

/** A dashboard user row. */
export type UserRow = Selectable<DashboardUsersTable>;
/** A dashboard session row. */
export type SessionRow = Selectable<DashboardSessionsTable>;

/** Inserts a user awaiting setup (no password yet) with the hash of its setup link token. */
export async function insertUser(
  ex: Executor,
  v: {
    accountId: number;
    email: string;
    setupTokenHash: string;
    setupExpiresAt: string;
    invitedBy: number | null;
    now: string;
  },
): Promise<UserRow> {
  return ex
    .insertInto("dashboard_users")
    .values({
      account_id: v.accountId,
      email: v.email,
      setup_token_hash: v.setupTokenHash,
      setup_expires_at: v.setupExpiresAt,
      invited_by: v.invitedBy,
      created: v.now,
      updated: v.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The user who signs in with a (lower-case) email: the one row of it with a password, if any. */
export async function findSignInUserByEmail(ex: Executor, email: string): Promise<UserRow | undefined> {
  return ex
    .selectFrom("dashboard_users")
    .selectAll()
    .where("email", "=", email)
    .where("password_hash", "is not", null)
    .executeTakeFirst();
}

/** The user of an account with a (lower-case) email, set up or invited. */
export async function findAccountUserByEmail(
  ex: Executor,
  accountId: number,
  email: string,
): Promise<UserRow | undefined> {
  return ex
    .selectFrom("dashboard_users")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("email", "=", email)
    .executeTakeFirst();
}

/** Finds a user by id. */
export async function findUserById(ex: Executor, id: number): Promise<UserRow | undefined> {
  return ex.selectFrom("dashboard_users").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Finds a user by the hash of a setup link token. */
export async function findUserBySetupHash(ex: Executor, hash: string): Promise<UserRow | undefined> {
  return ex.selectFrom("dashboard_users").selectAll().where("setup_token_hash", "=", hash).executeTakeFirst();
}

/** The users of an account, oldest first. */
export async function listUsersOfAccount(ex: Executor, accountId: number): Promise<UserRow[]> {
  return ex
    .selectFrom("dashboard_users")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
}

/** Counts the users of an account. */
export async function countUsersOfAccount(ex: Executor, accountId: number): Promise<number> {
  const row = await ex
    .selectFrom("dashboard_users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Updates columns of a user. */
export async function updateUser(
  ex: Executor,
  id: number,
  patch: Partial<Omit<UserRow, "id" | "account_id" | "created">> & { updated: string },
): Promise<void> {
  await ex.updateTable("dashboard_users").set(patch).where("id", "=", id).execute();
}

/**
 * Moves the user's last accepted TOTP step to `step` only when it is newer; false when a code of
 * that step (or a later one) was already accepted: a replay. Atomic, so two racing sign-ins with
 * one code cannot both pass.
 */
export async function advanceTotpStep(ex: Executor, id: number, step: number, now: string): Promise<boolean> {
  const res = await ex
    .updateTable("dashboard_users")
    .set({ totp_last_step: step, updated: now })
    .where("id", "=", id)
    .where("totp_last_step", "<", step)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Counts one sign-in attempt (password, TOTP, recovery or enrolment code) before it is checked, in
 * one statement: the count rises by one and, when it reaches `threshold`, the lock starts until
 * `lockUntil`; a lock that has expired starts a new count at 1. Returns the attempt's number in the
 * run of failures, or undefined when the user is locked at `now` (nothing counted). Concurrent
 * attempts serialise on the row, so at most `threshold` of them are ever checked per lock period.
 */
export async function reserveSignInAttempt(
  ex: Executor,
  id: number,
  v: { now: string; lockUntil: string; threshold: number },
): Promise<number | undefined> {
  const row = await ex
    .updateTable("dashboard_users")
    .set({
      failed_attempts: sql<number>`CASE WHEN locked_until IS NULL THEN failed_attempts + 1 ELSE 1 END`,
      locked_until: sql<
        string | null
      >`CASE WHEN locked_until IS NULL AND failed_attempts + 1 >= ${v.threshold} THEN ${v.lockUntil} ELSE NULL END`,
      updated: v.now,
    })
    .where("id", "=", id)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", v.now)]))
    .returning("failed_attempts")
    .executeTakeFirst();
  return row ? Number(row.failed_attempts) : undefined;
}

/**
 * Settles a successful attempt numbered `reserved`, only when no other attempt was counted since
 * (a lock other attempts set meanwhile stays): "clear" ends the run of failures (signed in),
 * "release" takes back only this attempt's count (a right password, with a code still owed, must
 * not wipe out wrong codes). True when settled.
 */
export async function settleSignInAttempt(
  ex: Executor,
  id: number,
  reserved: number,
  how: "clear" | "release",
  now: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("dashboard_users")
    .set({ failed_attempts: how === "clear" ? 0 : reserved - 1, locked_until: null, updated: now })
    .where("id", "=", id)
    .where("failed_attempts", "=", reserved)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Replaces the user's recovery code hashes only when they are still `before`; false when another request changed them. */
export async function replaceRecoveryCodes(
  ex: Executor,
  id: number,
  before: string,
  after: string,
  now: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("dashboard_users")
    .set({ recovery_codes: after, updated: now })
    .where("id", "=", id)
    .where("recovery_codes", "=", before)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Deletes a user of an account and then their sessions; false, touching nothing, when the user is
 * absent or another account's. Run it in a transaction.
 */
export async function deleteUser(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const user = await ex
    .selectFrom("dashboard_users")
    .select("id")
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  if (!user) return false;
  // Sessions reference the user: they go first, but only once the user is known to be this account's.
  await ex
    .deleteFrom("dashboard_sessions")
    .where("user_id", "=", id)
    .where("account_id", "=", accountId)
    .execute();
  await ex.deleteFrom("dashboard_users").where("id", "=", id).where("account_id", "=", accountId).execute();
  return true;
}

/** Inserts a session. */
export async function insertSession(
  ex: Executor,
  v: {
    tokenHash: string;
    userId: number;
    accountId: number;
    stage: string;
    ip: string;
    userAgent: string;
    now: string;
    expiresAt: string;
  },
): Promise<void> {
  await ex
    .insertInto("dashboard_sessions")
    .values({
      token_hash: v.tokenHash,
      user_id: v.userId,
      account_id: v.accountId,
      stage: v.stage,
      ip: v.ip,
      user_agent: v.userAgent,
      created: v.now,
      last_seen_at: v.now,
      expires_at: v.expiresAt,
    })
    .execute();
}

/** Finds a session by token hash. */
export async function findSession(ex: Executor, tokenHash: string): Promise<SessionRow | undefined> {
  return ex
    .selectFrom("dashboard_sessions")
    .selectAll()
    .where("token_hash", "=", tokenHash)
    .executeTakeFirst();
}

/** Records activity on a session (idle expiry counts from it). */
export async function touchSession(ex: Executor, id: number, now: string): Promise<void> {
  await ex.updateTable("dashboard_sessions").set({ last_seen_at: now }).where("id", "=", id).execute();
}

/** Deletes one session by token hash. */
export async function deleteSession(ex: Executor, tokenHash: string): Promise<void> {
  await ex.deleteFrom("dashboard_sessions").where("token_hash", "=", tokenHash).execute();
}

/** Deletes every session of a user; returns how many. */
export async function deleteSessionsOfUser(ex: Executor, userId: number): Promise<number> {
  const res = await ex.deleteFrom("dashboard_sessions").where("user_id", "=", userId).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Counts a user's full (signed-in) sessions. */
export async function countFullSessions(ex: Executor, userId: number): Promise<number> {
  const row = await ex
    .selectFrom("dashboard_sessions")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("user_id", "=", userId)
    .where("stage", "=", "full")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
