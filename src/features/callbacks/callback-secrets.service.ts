import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { unwrapDataKey, wrapDataKey } from "../../crypto/envelope.js";
import { generateWebhookSecret } from "../../crypto/webhook-signature.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError } from "../../shared/errors.js";
import { addSeconds, toTimestamp } from "../../shared/time.js";
import { type AuditActor, AuditCode, type AuditWriter, actorFields } from "../audit/index.js";
import {
  type CallbackSecretRow,
  deleteExpiredSecretRows,
  expireSecretRow,
  insertSecretRow,
  listSecretRows,
} from "./callbacks.repository.js";

const PREFIX = "whsec_";
// Signing secrets are cached this long per account: a rotation made by another process reaches
// this one within it (the previous secret still signs meanwhile, so receivers accept either).
const CACHE_MS = 10_000;

/** The secret view of `GET /v1/callback_secret/`. */
export interface CallbackSecretView {
  secret: string;
  created: string;
  /** Replaced secrets that still sign (a second `v1,` signature) until `expires_at`. */
  previous: { created: string; expires_at: string }[];
}

/**
 * Per-account Standard Webhooks signing secrets (`whsec_` + base64 of 32 bytes). Stored wrapped by
 * the key ring's "secrets" key; created on first use; rotation keeps the previous one signing for
 * the configured overlap.
 */
export class CallbackSecretService {
  private readonly cache = new Map<number, { secrets: string[]; until: number; validUntil: string | null }>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly keyRing: KeyRing,
    private readonly audit: AuditWriter,
    private readonly overlapHours: number,
  ) {}

  /** The current secret and the replaced ones still signing; creates the first secret if needed. */
  async getSecret(accountId: number): Promise<CallbackSecretView> {
    const rows = await this.ensureRows(this.database.db, accountId);
    return this.view(rows);
  }

  /**
   * The secrets that sign a message sent now, current first (one or more `whsec_` strings).
   * Creates the first secret if the account has none.
   */
  async signingSecrets(ex: Executor, accountId: number): Promise<string[]> {
    const nowMs = this.clock.now().getTime();
    const now = toTimestamp(this.clock.now());
    const hit = this.cache.get(accountId);
    if (hit && hit.until > nowMs && (hit.validUntil === null || hit.validUntil > now)) return hit.secrets;
    const rows = (await this.ensureRows(ex, accountId)).filter(
      (r) => r.expires_at === null || r.expires_at > now,
    );
    const secrets = rows.map((r) => this.reveal(r));
    // The entry must not outlive the first previous secret's expiry.
    const expiries = rows.map((r) => r.expires_at).filter((e): e is string => e !== null);
    const validUntil = expiries.length > 0 ? expiries.sort()[0]! : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(accountId, { secrets, until: nowMs + CACHE_MS, validUntil });
    return secrets;
  }

  /**
   * Creates a new current secret; the previous one keeps signing for CALLBACK_SECRET_OVERLAP_HOURS.
   * Audited as ABA-0030 (without the secret). Throws CONFLICT when another rotation ran at the same time.
   */
  async rotate(
    accountId: number,
    applicationId: number | null,
    actor?: AuditActor,
  ): Promise<CallbackSecretView> {
    await this.ensureRows(this.database.db, accountId);
    const rows = await this.database.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const nowTs = toTimestamp(now);
      const [current] = await listSecretRows(trx, accountId);
      const generation = (current?.generation ?? 0) + 1;
      await deleteExpiredSecretRows(trx, accountId, nowTs);
      if (current)
        await expireSecretRow(trx, current.id, toTimestamp(addSeconds(now, this.overlapHours * 3600)));
      const inserted = await insertSecretRow(trx, {
        accountId,
        generation,
        wrapped: this.wrapNew(),
        now: nowTs,
      });
      if (!inserted) throw new AppError("CONFLICT", "The secret was rotated concurrently; try again.");
      await this.audit.write(trx, {
        accountId,
        code: AuditCode.ENTITY_UPDATED,
        apiKeyId: applicationId,
        relatedModel: "callback_secret",
        relationKey: generation,
        ...actorFields(actor, `rotated; previous secret signs until ${this.overlapHours} h from now`),
      });
      return listSecretRows(trx, accountId);
    });
    this.cache.delete(accountId);
    return this.view(rows);
  }

  private async ensureRows(ex: Executor, accountId: number): Promise<CallbackSecretRow[]> {
    const rows = await listSecretRows(ex, accountId);
    if (rows.length > 0) return rows;
    await insertSecretRow(ex, {
      accountId,
      generation: 1,
      wrapped: this.wrapNew(),
      now: toTimestamp(this.clock.now()),
    });
    return listSecretRows(ex, accountId);
  }

  private view(rows: CallbackSecretRow[]): CallbackSecretView {
    const now = toTimestamp(this.clock.now());
    const [current, ...older] = rows;
    if (!current) throw new Error("callback secret missing after creation");
    return {
      secret: this.reveal(current),
      created: current.created,
      previous: older
        .filter((r) => r.expires_at !== null && r.expires_at > now)
        .map((r) => ({ created: r.created, expires_at: r.expires_at as string })),
    };
  }

  private wrapNew(): string {
    const bytes = Buffer.from(generateWebhookSecret().slice(PREFIX.length), "base64");
    const kid = this.keyRing.activeKid;
    return wrapDataKey(bytes, this.keyRing.derive(kid, "secrets"), kid);
  }

  private reveal(row: CallbackSecretRow): string {
    const bytes = unwrapDataKey(row.wrapped_secret, (kid) => this.keyRing.derive(kid, "secrets"));
    return PREFIX + bytes.toString("base64");
  }
}
