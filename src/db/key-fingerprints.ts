import type { Database } from "./database.js";

/** A recorded master key fingerprint (migration 0032). */
export interface RecordedFingerprint {
  kid: string;
  fingerprint: string;
}

/** Every fingerprint the database recorded, by kid order. */
export async function recordedFingerprints(database: Database): Promise<RecordedFingerprint[]> {
  return database.db.selectFrom("key_fingerprints").select(["kid", "fingerprint"]).orderBy("kid").execute();
}

/** Records fingerprints of kids not yet recorded; a kid recorded meanwhile by another node keeps its row. */
export async function recordFingerprints(
  database: Database,
  rows: readonly RecordedFingerprint[],
  recordedAt: string,
): Promise<void> {
  if (rows.length === 0) return;
  await database.db
    .insertInto("key_fingerprints")
    .values(rows.map((r) => ({ ...r, recorded_at: recordedAt })))
    .onConflict((oc) => oc.column("kid").doNothing())
    .execute();
}
