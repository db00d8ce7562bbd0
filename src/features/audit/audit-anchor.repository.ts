import type { Executor } from "../../db/database.js";

/** Seq, hash and time of one account's chain head, with the head entry's RowKey and Timestamp. */
export interface ChainHeadEntry {
  account_id: number;
  seq: number;
  hash: string;
  row_key: string;
  timestamp: string;
}

/** Every account's chain head with its head entry (accounts whose head entry is gone are skipped). */
export async function listChainHeadEntries(ex: Executor, accountIds?: number[]): Promise<ChainHeadEntry[]> {
  let query = ex
    .selectFrom("audit_chain_heads as h")
    .innerJoin("audit_entries as e", (join) =>
      join.onRef("e.account_id", "=", "h.account_id").onRef("e.seq", "=", "h.seq"),
    )
    .select(["h.account_id", "h.seq", "h.hash", "e.row_key", "e.timestamp"])
    .orderBy("h.account_id");
  if (accountIds) query = query.where("h.account_id", "in", accountIds.length ? accountIds : [-1]);
  const rows = await query.execute();
  return rows.map((r) => ({
    account_id: Number(r.account_id),
    seq: Number(r.seq),
    hash: r.hash,
    row_key: r.row_key,
    timestamp: r.timestamp,
  }));
}

/** The stored hash of the account's entry `seq`, if the entry exists. */
export async function findEntryHash(
  ex: Executor,
  accountId: number,
  seq: number,
): Promise<string | undefined> {
  const row = await ex
    .selectFrom("audit_entries")
    .select("hash")
    .where("account_id", "=", accountId)
    .where("seq", "=", seq)
    .executeTakeFirst();
  return row?.hash;
}

/** The account's chain head seq and its retention checkpoint seq and hash (undefined when absent). */
export async function findChainBounds(
  ex: Executor,
  accountId: number,
): Promise<{ headSeq: number | undefined; checkpoint: { seq: number; hash: string } | undefined }> {
  const head = await ex
    .selectFrom("audit_chain_heads")
    .select("seq")
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  const checkpoint = await ex
    .selectFrom("audit_checkpoints")
    .select(["seq", "hash"])
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return {
    headSeq: head ? Number(head.seq) : undefined,
    checkpoint: checkpoint ? { seq: Number(checkpoint.seq), hash: checkpoint.hash } : undefined,
  };
}
