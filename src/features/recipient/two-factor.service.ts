import { randomInt } from "node:crypto";
import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { Translator } from "../../shared/i18n/i18n.js";
import { addSeconds, parseTimestamp, toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { DirectMessages } from "../notifications/index.js";
import type { RequestRecords } from "../requests/index.js";
import {
  consumeTfaCode,
  insertTfaCode,
  latestTfaCode,
  type RecipientRequestRow,
  reserveAttempt,
  tfaSendsSince,
} from "./recipient.repository.js";
import type { RecipientTokens } from "./recipient-tokens.js";

/**
 * What a two-factor step protects: a request's link, or a container's sessions (containers share the
 * requests' id space, so codes and failures are kept per id).
 */
export interface TfaSubject {
  id: number;
  accountId: number;
  model: "request" | "container";
  channel: "email" | "sms";
  destination: string;
  /** Wrong codes in a row so far (the row's `tfa_failures`). */
  failures: number;
}

/** The two-factor subject of a request, or undefined when it asks for no code. */
export function tfaSubjectOfRequest(request: RecipientRequestRow): TfaSubject | undefined {
  if ((request.tfa_send_to !== "email" && request.tfa_send_to !== "sms") || !request.tfa_send_to_value)
    return undefined;
  return {
    id: request.id,
    accountId: request.account_id,
    model: "request",
    channel: request.tfa_send_to,
    destination: request.tfa_send_to_value,
    failures: Number(request.tfa_failures ?? 0),
  };
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
  /** Too many wrong codes in a row: no code can be sent or entered until the owner resets. */
  lockedOut: boolean;
  /** Codes that may still be sent in the current window. */
  sendsLeft: number;
  /** Seconds until another code may be sent, when sendsLeft is 0. */
  retryAfterSeconds: number;
}

/** Outcome of a send. */
type TfaSendResult =
  | { ok: true }
  | { ok: false; reason: "send_limit"; retryAfterSeconds: number }
  | { ok: false; reason: "locked_out" };

/** Outcome of a code entry. */
type TfaVerifyResult =
  | { ok: true }
  | { ok: false; reason: "wrong"; attemptsLeft: number }
  | { ok: false; reason: "locked" | "locked_out" | "expired" | "no_code" | "malformed" };

/** Hides a destination: keeps the first letter of an email's local part and the last 4 digits of a number. */
function maskDestination(channel: "email" | "sms", value: string): string {
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
 * Two-factor step of recipient pages and container sessions: 6-digit codes stored as keyed hashes,
 * valid TFA_CODE_TTL_SECONDS, TFA_MAX_ATTEMPTS wrong entries lock a code, TFA_MAX_SENDS sends per
 * TFA_SEND_WINDOW_SECONDS, and TFA_MAX_FAILURES wrong codes in a row (over every code) lock the
 * subject until its owner sends the link again or changes the setting (an ABA-0030 entry records
 * the lock). Codes leave through the notifications outbox in the same transaction.
 */
export class TwoFactorService {
  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly tokens: RecipientTokens,
    private readonly messages: Pick<DirectMessages, "queue">,
    private readonly records: Pick<
      RequestRecords,
      "lockForTfaSend" | "countTfaSend" | "reserveTfaFailure" | "clearTfaFailuresAfter"
    >,
    private readonly audit: AuditWriter,
  ) {}

  /** True when the subject has had TFA_MAX_FAILURES wrong codes in a row. */
  lockedOut(subject: TfaSubject): boolean {
    return subject.failures >= this.config.TFA_MAX_FAILURES;
  }

  /** The recipient's two-factor status. */
  async status(subject: TfaSubject): Promise<TfaStatus> {
    const now = this.clock.now();
    const db = this.database.db;
    const latest = await latestTfaCode(db, subject.id);
    const window = await this.sendWindow(db, subject.id, now);
    const max = this.config.TFA_MAX_ATTEMPTS;
    const lockedOut = this.lockedOut(subject);
    const live =
      !!latest && latest.consumed_at === null && parseTimestamp(latest.expires_at).getTime() > now.getTime();
    return {
      channel: subject.channel,
      maskedDestination: maskDestination(subject.channel, subject.destination),
      codeActive: !lockedOut && live && (latest?.attempts ?? 0) < max,
      locked: !lockedOut && live && (latest?.attempts ?? 0) >= max,
      lockedOut,
      sendsLeft: lockedOut ? 0 : window.sendsLeft,
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
   * Sends a new code to the subject's destination (replacing any earlier one), unless the send
   * limit is reached or the subject is locked. The code, its hash and the queued message commit
   * together.
   */
  async sendCode(subject: TfaSubject, brandName: string, i18n: Translator): Promise<TfaSendResult> {
    if (this.lockedOut(subject)) return { ok: false, reason: "locked_out" };
    return this.database.db.transaction().execute(async (trx) => {
      // Serialise sends of one subject so two racing clicks cannot both pass the limit.
      await this.records.lockForTfaSend(trx, subject.id);
      const now = this.clock.now();
      const window = await this.sendWindow(trx, subject.id, now);
      if (window.sendsLeft === 0)
        return { ok: false, reason: "send_limit", retryAfterSeconds: window.retryAfterSeconds };
      const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
      const minutes = Math.round(this.config.TFA_CODE_TTL_SECONDS / 60);
      await insertTfaCode(trx, {
        requestId: subject.id,
        codeHash: this.tokens.hashCode(subject.id, code),
        expiresAt: toTimestamp(addSeconds(now, this.config.TFA_CODE_TTL_SECONDS)),
        created: toTimestamp(now),
      });
      const text = i18n.t("tfa.messageText", { brand: brandName, code, minutes });
      await this.records.countTfaSend(trx, subject.id);
      await this.messages.queue(trx, subject.accountId, {
        channel: subject.channel,
        to: subject.destination,
        subject: i18n.t("tfa.messageSubject", { code }),
        text,
      });
      return { ok: true };
    });
  }

  /**
   * Checks an entered code against the newest code of this subject (never another's). Each checked
   * code counts against both the code's attempts and the subject's failures in a row, reserved
   * before the check so parallel guesses stay within both bounds; a correct code clears the
   * failures.
   */
  async verifyCode(subject: TfaSubject, entered: string): Promise<TfaVerifyResult> {
    if (this.lockedOut(subject)) return { ok: false, reason: "locked_out" };
    const code = entered.replace(/\s+/g, "");
    if (!/^\d{6}$/.test(code)) return { ok: false, reason: "malformed" };
    const db = this.database.db;
    const max = this.config.TFA_MAX_ATTEMPTS;
    const maxFailures = this.config.TFA_MAX_FAILURES;
    const now = this.clock.now();
    const latest = await latestTfaCode(db, subject.id);
    if (!latest || latest.consumed_at !== null) return { ok: false, reason: "no_code" };
    if (latest.attempts >= max) return { ok: false, reason: "locked" };
    if (parseTimestamp(latest.expires_at).getTime() <= now.getTime()) return { ok: false, reason: "expired" };
    const attempts = await reserveAttempt(db, latest.id, max);
    if (attempts === undefined) return { ok: false, reason: "locked" };
    const failures = await this.records.reserveTfaFailure(db, subject.id, maxFailures);
    if (failures === undefined) return { ok: false, reason: "locked_out" };
    if (this.tokens.verifyCode(subject.id, code, latest.code_hash)) {
      const consumed = await db.transaction().execute(async (trx) => {
        const done = await consumeTfaCode(trx, latest.id, toTimestamp(now), max);
        // Conditional: a lock other guesses set while this code was checked stays.
        if (done) await this.records.clearTfaFailuresAfter(trx, subject.id, failures, maxFailures);
        return done;
      });
      return consumed ? { ok: true } : { ok: false, reason: "no_code" };
    }
    if (failures >= maxFailures) {
      await this.audit.write(db, {
        accountId: subject.accountId,
        code: AuditCode.ENTITY_UPDATED,
        relatedModel: subject.model,
        relationKey: subject.id,
        value: `two-factor locked after ${failures} wrong codes in a row; send the link again to unlock it`,
      });
      return { ok: false, reason: "locked_out" };
    }
    if (attempts >= max) return { ok: false, reason: "locked" };
    return { ok: false, reason: "wrong", attemptsLeft: Math.min(max - attempts, maxFailures - failures) };
  }
}
