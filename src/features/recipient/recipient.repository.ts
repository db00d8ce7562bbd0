import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { RecipientTfaCodesTable } from "../../db/schema.js";
import type { RequestRow } from "../requests/index.js";

/** A request row as the recipient pages read it. */
export type RecipientRequestRow = RequestRow;
/** A two-factor code row. */
type TfaCodeRow = Selectable<RecipientTfaCodesTable>;

/** Stores a new two-factor code hash. */
export async function insertTfaCode(
  ex: Executor,
  values: { requestId: number; codeHash: string; expiresAt: string; created: string },
): Promise<number> {
  const row = await ex
    .insertInto("recipient_tfa_codes")
    .values({
      request_id: values.requestId,
      code_hash: values.codeHash,
      attempts: 0,
      expires_at: values.expiresAt,
      consumed_at: null,
      created: values.created,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The newest code sent for a request, or undefined. */
export async function latestTfaCode(ex: Executor, requestId: number): Promise<TfaCodeRow | undefined> {
  return ex
    .selectFrom("recipient_tfa_codes")
    .selectAll()
    .where("request_id", "=", requestId)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** Codes sent for a request since `since` (timestamp), and the oldest of them (for Retry-After). */
export async function tfaSendsSince(
  ex: Executor,
  requestId: number,
  since: string,
): Promise<{ count: number; oldest: string | null }> {
  const row = await ex
    .selectFrom("recipient_tfa_codes")
    .select((eb) => [eb.fn.countAll<number>().as("count"), eb.fn.min("created").as("oldest")])
    .where("request_id", "=", requestId)
    .where("created", ">", since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: (row.oldest as string | null) ?? null };
}

/**
 * Counts one attempt on a code before it is checked, so parallel guesses can never test more than
 * `max` codes; returns the new count, or undefined when the code is already locked.
 */
export async function reserveAttempt(ex: Executor, codeId: number, max: number): Promise<number | undefined> {
  const row = await ex
    .updateTable("recipient_tfa_codes")
    .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
    .where("id", "=", codeId)
    .where("attempts", "<", max)
    .returning("attempts")
    .executeTakeFirst();
  return row?.attempts;
}

/** Marks a code used; false when another request consumed it first. */
export async function consumeTfaCode(
  ex: Executor,
  codeId: number,
  at: string,
  max: number,
): Promise<boolean> {
  const res = await ex
    .updateTable("recipient_tfa_codes")
    .set({ consumed_at: at })
    .where("id", "=", codeId)
    .where("consumed_at", "is", null)
    // The attempt that carried the right code was already counted (reserveAttempt).
    .where("attempts", "<=", max)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
