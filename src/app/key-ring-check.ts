import { type KeyRing, keyFingerprint } from "../adapters/key-ring/key-ring.js";
import type { Database } from "../db/database.js";
import { recordedFingerprints, recordFingerprints } from "../db/key-fingerprints.js";
import { toTimestamp } from "../shared/time.js";

/** A node that must not start as configured; `message` is one line for the operator. */
export class StartupRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupRefusedError";
  }
}

/** What the database says of this node's key ring. */
export type KeyRingVerdict = { ok: true; known: string[]; added: string[] } | { ok: false; message: string };

/** Compares the ring with the recorded fingerprints; records nothing. */
export async function judgeKeyRing(database: Database, ring: KeyRing): Promise<KeyRingVerdict> {
  const recorded = new Map((await recordedFingerprints(database)).map((r) => [r.kid, r.fingerprint]));
  const kids = ring.kids();
  const differing = kids.filter((kid) => {
    const fingerprint = recorded.get(kid);
    return fingerprint !== undefined && fingerprint !== keyFingerprint(ring, kid);
  });
  if (differing.length > 0) {
    return {
      ok: false,
      message: `Master key ${differing.join(", ")} is not the key this database was first started with: every node must use the same FERRY_MASTER_KEY (copy it from a running node).`,
    };
  }
  const known = kids.filter((kid) => recorded.has(kid));
  if (recorded.size > 0 && known.length === 0) {
    return {
      ok: false,
      message: `None of this node's master keys (${kids.join(", ")}) is one this database was started with (${[...recorded.keys()].join(", ")}): set FERRY_MASTER_KEY to the key ring every node shares.`,
    };
  }
  return { ok: true, known, added: kids.filter((kid) => !recorded.has(kid)) };
}

/**
 * At start: refuses (StartupRefusedError) a key ring that does not match the fingerprints the
 * database recorded, else records the ring's new kids (the first start, or a key added to the
 * ring). Two nodes starting at once on an empty database with different keys: the second's
 * fingerprint is not recorded, and the re-check after recording refuses it.
 */
export async function checkKeyRing(database: Database, ring: KeyRing, now: Date): Promise<void> {
  const first = await judgeKeyRing(database, ring);
  if (!first.ok) throw new StartupRefusedError(first.message);
  if (first.added.length === 0) return;
  await recordFingerprints(
    database,
    first.added.map((kid) => ({ kid, fingerprint: keyFingerprint(ring, kid) })),
    toTimestamp(now),
  );
  const again = await judgeKeyRing(database, ring);
  if (!again.ok) throw new StartupRefusedError(again.message);
}
