/**
 * Anchors of the audit chains (ADR 0029): a signed record of every account's chain head (seq,
 * hash, RowKey, time) written out of the database. Verifying a chain alone cannot tell a log whose
 * newest entries were deleted and whose head was reset to an earlier entry from one that never had
 * them; an anchor kept elsewhere can: every head it names must still be in the chain, unchanged.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { toTimestamp } from "../../shared/time.js";
import {
  type ChainHeadEntry,
  findChainBounds,
  findEntryHash,
  listChainHeadEntries,
} from "./audit-anchor.repository.js";

export const ANCHOR_FORMAT = "ferry-audit-anchor/1";

/** A signed anchor as written to its file. */
export interface AuditAnchor {
  format: typeof ANCHOR_FORMAT;
  created: string;
  /** Master key the signature's HMAC key is derived from. */
  kid: string;
  heads: ChainHeadEntry[];
  /** HMAC-SHA256 (base64url) over the canonical JSON of the fields above. */
  signature: string;
}

/** How one anchored head compares with the chain now. */
export interface AnchoredHeadReport {
  account_id: number;
  seq: number;
  ok: boolean;
  /** "present", "pruned" (removed by retention, checkpoint past it), "changed" or "missing". */
  status: "present" | "pruned" | "changed" | "missing";
  detail: string;
}

export interface AnchorReport {
  ok: boolean;
  /** False when the file is not an anchor this server signed (or was altered). */
  signature_ok: boolean;
  created: string | null;
  heads: AnchoredHeadReport[];
  detail: string;
}

/** Why an anchor file cannot be read at all (bad JSON, wrong format): a usage problem. */
export class AnchorFormatError extends Error {}

function canonical(anchor: Omit<AuditAnchor, "signature">): string {
  const heads = anchor.heads.map((h) => ({
    account_id: h.account_id,
    seq: h.seq,
    hash: h.hash,
    row_key: h.row_key,
    timestamp: h.timestamp,
  }));
  return JSON.stringify({ format: anchor.format, created: anchor.created, kid: anchor.kid, heads });
}

export class AuditAnchorService {
  constructor(
    private readonly database: Database,
    private readonly keyRing: KeyRing,
    private readonly clock: Clock,
  ) {}

  private sign(body: Omit<AuditAnchor, "signature">): string {
    return createHmac("sha256", this.keyRing.derive(body.kid, "audit-anchor"))
      .update(canonical(body))
      .digest("base64url");
  }

  /** A signed anchor of the chain heads of `accountIds` (default: every account with a head). */
  async create(accountIds?: number[]): Promise<AuditAnchor> {
    const heads = await listChainHeadEntries(this.database.db, accountIds);
    const body = {
      format: ANCHOR_FORMAT,
      created: toTimestamp(this.clock.now()),
      kid: this.keyRing.activeKid,
      heads,
    } as const;
    return { ...body, signature: this.sign(body) };
  }

  /** Reads anchor JSON text; throws AnchorFormatError when it is not shaped as an anchor. */
  parse(text: string): AuditAnchor {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new AnchorFormatError("the anchor file is not JSON");
    }
    const a = value as Partial<AuditAnchor> | null;
    const headOk = (h: unknown) => {
      const x = h as Partial<ChainHeadEntry> | null;
      return (
        !!x &&
        Number.isSafeInteger(x.account_id) &&
        Number.isSafeInteger(x.seq) &&
        typeof x.hash === "string" &&
        typeof x.row_key === "string" &&
        typeof x.timestamp === "string"
      );
    };
    if (
      !a ||
      a.format !== ANCHOR_FORMAT ||
      typeof a.created !== "string" ||
      typeof a.kid !== "string" ||
      typeof a.signature !== "string" ||
      !Array.isArray(a.heads) ||
      !a.heads.every(headOk)
    )
      throw new AnchorFormatError(`the file is not a ${ANCHOR_FORMAT} anchor`);
    return a as AuditAnchor;
  }

  /** Checks the anchor's signature, then that every head it names is still in its chain unchanged. */
  async verify(anchor: AuditAnchor): Promise<AnchorReport> {
    let signatureOk = false;
    try {
      const expected = Buffer.from(this.sign(anchor));
      const given = Buffer.from(anchor.signature);
      signatureOk = expected.length === given.length && timingSafeEqual(expected, given);
    } catch {
      signatureOk = false; // a kid this ring does not hold
    }
    if (!signatureOk)
      return {
        ok: false,
        signature_ok: false,
        created: anchor.created,
        heads: [],
        detail:
          "The anchor's signature does not verify: it was altered or not signed by this server's key ring.",
      };
    const { db } = this.database;
    const heads: AnchoredHeadReport[] = [];
    for (const head of anchor.heads) {
      const base = { account_id: head.account_id, seq: head.seq };
      const hash = await findEntryHash(db, head.account_id, head.seq);
      if (hash === head.hash) {
        heads.push({ ...base, ok: true, status: "present", detail: `Entry ${head.seq} is in the chain.` });
        continue;
      }
      if (hash !== undefined) {
        heads.push({
          ...base,
          ok: false,
          status: "changed",
          detail: `Entry ${head.seq} no longer has the anchored hash: the chain was rewritten after the anchor.`,
        });
        continue;
      }
      const { headSeq, checkpoint } = await findChainBounds(db, head.account_id);
      if (
        checkpoint &&
        checkpoint.seq >= head.seq &&
        (checkpoint.seq > head.seq || checkpoint.hash === head.hash)
      ) {
        heads.push({
          ...base,
          ok: true,
          status: "pruned",
          detail: `Entry ${head.seq} was removed by retention (checkpoint at seq ${checkpoint.seq}).`,
        });
        continue;
      }
      heads.push({
        ...base,
        ok: false,
        status: "missing",
        detail: `Entry ${head.seq} (anchored ${anchor.created}) is missing: the log was cut back to seq ${headSeq ?? 0}.`,
      });
    }
    const bad = heads.filter((h) => !h.ok).length;
    return {
      ok: bad === 0,
      signature_ok: true,
      created: anchor.created,
      heads,
      detail:
        bad === 0
          ? `Anchor of ${anchor.created}: all ${heads.length} anchored head(s) are in their chains.`
          : `Anchor of ${anchor.created}: ${bad} of ${heads.length} anchored head(s) are missing or changed.`,
    };
  }
}
