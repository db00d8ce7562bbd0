import { createHash, randomBytes } from "node:crypto";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { addSeconds, parseTimestamp, toTimestamp } from "../../shared/time.js";
import {
  countFullSessions,
  deleteSession,
  deleteSessionsOfUser,
  findSession,
  findUserById,
  insertSession,
  type SessionRow,
  touchSession,
} from "./dashboard.repository.js";

/** How far sign-in has come in a session. */
export type SessionStage = "password" | "enrol" | "full";

/** Lifetimes of dashboard sessions, in seconds. */
export interface SessionLifetimes {
  /** A signed-in session ends after this long without a request. */
  idleSeconds: number;
  /** A signed-in session ends this long after sign-in, whatever its activity. */
  absoluteSeconds: number;
  /** A half-done sign-in (password given, code or enrolment owed) ends this long after it began. */
  pendingSeconds: number;
}

/** Defaults: 30 minutes idle, 12 hours absolute, 10 minutes to finish a sign-in. */
export const DEFAULT_LIFETIMES: SessionLifetimes = {
  idleSeconds: 30 * 60,
  absoluteSeconds: 12 * 3600,
  pendingSeconds: 10 * 60,
};

/** A live session with its user. */
export interface LiveSession {
  session: SessionRow;
  userId: number;
  accountId: number;
  email: string;
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Dashboard sessions: a random 256-bit token in the cookie, only its hash stored, with a stage,
 * idle and absolute expiry. Each stage change issues a new token (no fixation).
 */
export class SessionsService {
  constructor(private readonly deps: { database: Database; clock: Clock; lifetimes: SessionLifetimes }) {}

  /** Starts a session at `stage` for a user; returns its token (for the cookie) and lifetime. */
  async start(
    user: { id: number; accountId: number },
    stage: SessionStage,
    from: { ip: string; userAgent: string },
  ): Promise<{ token: string; maxAgeSeconds: number }> {
    const token = randomBytes(32).toString("base64url");
    const now = this.deps.clock.now();
    const { lifetimes } = this.deps;
    const maxAgeSeconds = stage === "full" ? lifetimes.absoluteSeconds : lifetimes.pendingSeconds;
    await insertSession(this.deps.database.db, {
      tokenHash: sha256(token),
      userId: user.id,
      accountId: user.accountId,
      stage,
      ip: from.ip,
      userAgent: from.userAgent.slice(0, 200),
      now: toTimestamp(now),
      expiresAt: toTimestamp(addSeconds(now, maxAgeSeconds)),
    });
    return { token, maxAgeSeconds };
  }

  /**
   * The live session of a token: undefined when unknown, past its absolute expiry, or (signed in)
   * idle too long; expired sessions are deleted. Activity is recorded at most once a minute.
   */
  async resolve(token: string | undefined): Promise<LiveSession | undefined> {
    if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const { db } = this.deps.database;
    const hash = sha256(token);
    const session = await findSession(db, hash);
    if (!session) return undefined;
    const now = this.deps.clock.now();
    const idleEnd = addSeconds(parseTimestamp(session.last_seen_at), this.deps.lifetimes.idleSeconds);
    if (parseTimestamp(session.expires_at) <= now || (session.stage === "full" && idleEnd <= now)) {
      await deleteSession(db, hash);
      return undefined;
    }
    const user = await findUserById(db, session.user_id);
    if (!user || user.account_id !== session.account_id) return undefined;
    if (now.getTime() - parseTimestamp(session.last_seen_at).getTime() >= 60_000)
      await touchSession(db, session.id, toTimestamp(now));
    return { session, userId: user.id, accountId: user.account_id, email: user.email };
  }

  /** Ends the session of a token (sign-out). */
  async end(token: string | undefined): Promise<void> {
    if (token) await deleteSession(this.deps.database.db, sha256(token));
  }

  /** Ends every session of a user (sign-out everywhere); returns how many ended. */
  async endAll(userId: number): Promise<number> {
    return deleteSessionsOfUser(this.deps.database.db, userId);
  }

  /** How many signed-in sessions a user has. */
  async countSignedIn(userId: number): Promise<number> {
    return countFullSessions(this.deps.database.db, userId);
  }
}
