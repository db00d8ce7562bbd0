import { randomInt } from "node:crypto";
import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { addSeconds, parseTimestamp, toTimestamp } from "../../shared/time.js";
import {
  consumeTfaCode,
  insertTfaCode,
  latestTfaCode,
  type RecipientRequestRow,
  reserveAttempt,
  tfaSendsSince,
} from "./recipient.repository.js";
import type { RecipientTokens } from "./recipient-tokens.js";

/** The message port two-factor codes leave through (NotificationsService.queueDirect: the outbox). */
export interface TfaMessageQueue {
  queueDirect(
    ex: Executor,
    accountId: number,
    message: { channel: "email" | "sms"; to: string; subject?: string; text: string },
  ): Promise<void>;
}

/** Where the recipient stands in the two-factor step (drives the page). */
export interface TfaStatus {
  channel: "email" | "sms";
  /** The destination with most characters hidden: `j***@example.com`, `+1******4567`. */
  maskedDestination: string;
  /** A code was sent and can still be entered. */
  codeActive: boolean;
  /** The newest code took too many wrong entries. */
  locked: boolean;
  /** Codes that may still be sent in the current window. */
  sendsLeft: number;
  /** Seconds until another code may be sent, when sendsLeft is 0. */
  retryAfterSeconds: number;
}

/** Outcome of a send. */
export type TfaSendResult = { ok: true } | { ok: false; reason: "send_limit"; retryAfterSeconds: number };

/** Outcome of a code entry. */
export type TfaVerifyResult =
  | { ok: true }
  | { ok: false; reason: "wrong"; attemptsLeft: number }
  | { ok: false; reason: "locked" | "expired" | "no_code" | "malformed" };

/** Hides a destination: keeps the first letter of an email's local part and the last 4 digits of a number. */
export function maskDestination(channel: "email" | "sms", value: string): string {
  if (channel === "email") {
    const at = value.lastIndexOf("@");
    if (at < 1) return "***";
    return `${value[0]}***${value.slice(at)}`;
  }
  const digits = value.replace(/[^\d]/g, "");
  if (digits.length < 6) return "******";
  return `+${digits[0]}${"*".repeat(digits.length - 5)}${digits.slice(-4)}`;
}

/**
 * Two-factor step of recipient pages (DESIGN §4): 6-digit codes stored as keyed hashes, valid
 * TFA_CODE_TTL_SECONDS, TFA_MAX_ATTEMPTS wrong entries lock a code, TFA_MAX_SENDS sends per
 * TFA_SEND_WINDOW_SECONDS. Codes leave through the notifications outbox in the same transaction.
 */
export class TwoFactorService {
  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly tokens: RecipientTokens,
    private readonly messages: () => TfaMessageQueue | undefined,
  ) {}

  /** True when the request asks for two-factor (tfa_send_to and a destination set). */
  static required(request: RecipientRequestRow): boolean {
    return (request.tfa_send_to === "email" || request.tfa_send_to === "sms") && !!request.tfa_send_to_value;
  }

  /** The recipient's two-factor status for a request that requires it. */
  async status(request: RecipientRequestRow): Promise<TfaStatus> {
    const now = this.clock.now();
    const db = this.database.db;
    const latest = await latestTfaCode(db, request.id);
    const window = await this.sendWindow(db, request.id, now);
    const max = this.config.TFA_MAX_ATTEMPTS;
    const live =
      !!latest && latest.consumed_at === null && parseTimestamp(latest.expires_at).getTime() > now.getTime();
    return {
      channel: request.tfa_send_to as "email" | "sms",
      maskedDestination: maskDestination(
        request.tfa_send_to as "email" | "sms",
        request.tfa_send_to_value ?? "",
      ),
      codeActive: live && (latest?.attempts ?? 0) < max,
      locked: live && (latest?.attempts ?? 0) >= max,
      sendsLeft: window.sendsLeft,
      retryAfterSeconds: window.retryAfterSeconds,
    };
  }

  private async sendWindow(ex: Executor, requestId: number, now: Date) {
    const windowSeconds = this.config.TFA_SEND_WINDOW_SECONDS;
    const since = toTimestamp(addSeconds(now, -windowSeconds));
    const { count, oldest } = await tfaSendsSince(ex, requestId, since);
    const sendsLeft = Math.max(0, this.config.TFA_MAX_SENDS - count);
    const retryAfterSeconds =
      sendsLeft > 0 || !oldest
        ? 0
        : Math.max(
            1,
            Math.ceil((parseTimestamp(oldest).getTime() + windowSeconds * 1000 - now.getTime()) / 1000),
          );
    return { sendsLeft, retryAfterSeconds };
  }

  /**
   * Sends a new code to the request's destination (replacing any earlier one), unless the send
   * limit is reached. The code, its hash and the queued message commit together.
   */
  async sendCode(request: RecipientRequestRow, brandName: string): Promise<TfaSendResult> {
    const messages = this.messages();
    if (!messages) throw new Error("two-factor codes need the notifications service");
    const channel = request.tfa_send_to as "email" | "sms";
    return this.database.db.transaction().execute(async (trx) => {
      // Serialise sends of one request so two racing clicks cannot both pass the limit.
      await trx
        .updateTable("requests")
        .set({ tfa_times_sent: (eb) => eb.ref("tfa_times_sent") })
        .where("id", "=", request.id)
        .execute();
      const now = this.clock.now();
      const window = await this.sendWindow(trx, request.id, now);
      if (window.sendsLeft === 0)
        return { ok: false, reason: "send_limit", retryAfterSeconds: window.retryAfterSeconds };
      const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
      const minutes = Math.round(this.config.TFA_CODE_TTL_SECONDS / 60);
      await insertTfaCode(trx, {
        requestId: request.id,
        codeHash: this.tokens.hashCode(request.id, code),
        expiresAt: toTimestamp(addSeconds(now, this.config.TFA_CODE_TTL_SECONDS)),
        created: toTimestamp(now),
      });
      const text = `Your ${brandName} verification code is ${code}. It expires in ${minutes} minutes. Do not share it.`;
      await messages.queueDirect(trx, request.account_id, {
        channel,
        to: request.tfa_send_to_value ?? "",
        subject: `Your verification code: ${code}`,
        text,
      });
      return { ok: true };
    });
  }

  /** Checks an entered code against the newest code of this request (never another request's). */
  async verifyCode(request: RecipientRequestRow, entered: string): Promise<TfaVerifyResult> {
    const code = entered.replace(/\s+/g, "");
    if (!/^\d{6}$/.test(code)) return { ok: false, reason: "malformed" };
    const db = this.database.db;
    const max = this.config.TFA_MAX_ATTEMPTS;
    const now = this.clock.now();
    const latest = await latestTfaCode(db, request.id);
    if (!latest || latest.consumed_at !== null) return { ok: false, reason: "no_code" };
    if (latest.attempts >= max) return { ok: false, reason: "locked" };
    if (parseTimestamp(latest.expires_at).getTime() <= now.getTime()) return { ok: false, reason: "expired" };
    // Count the attempt before checking it: a burst of parallel guesses gets `max` tries in total.
    const attempts = await reserveAttempt(db, latest.id, max);
    if (attempts === undefined) return { ok: false, reason: "locked" };
    if (this.tokens.verifyCode(request.id, code, latest.code_hash)) {
      const consumed = await consumeTfaCode(db, latest.id, toTimestamp(now), max);
      return consumed ? { ok: true } : { ok: false, reason: "no_code" };
    }
    if (attempts >= max) return { ok: false, reason: "locked" };
    return { ok: false, reason: "wrong", attemptsLeft: max - attempts };
  }
}
