import type { Selectable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { AuditCheckpointsTable, AuditEntriesTable } from "../../db/schema.js";

/** One stored audit entry. */
export type AuditEntryRow = Selectable<AuditEntriesTable>;

/** A retention checkpoint row. */
export type AuditCheckpointRow = Selectable<AuditCheckpointsTable>;

/** Exact-match filters of the log search, by stored column name (each has an (account_id, column, seq) index). */
export interface AuditFilters {
  partition_key?: string;
  code?: string;
  related_model?: string;
  path?: string;
  from_address?: string;
  method?: string;
  content_type?: string;
}

/** Search scope: one account, exact filters, and optionally only entries at or before `maxSeq`. */
export interface AuditSearchScope {
  accountId: number;
  filters: AuditFilters;
  maxSeq?: number | undefined;
}

function scoped(ex: Executor, scope: AuditSearchScope) {
  let q = ex.selectFrom("audit_entries").where("account_id", "=", scope.accountId);
  for (const [column, value] of Object.entries(scope.filters) as [keyof AuditFilters, string | undefined][]) {
    if (value !== undefined) q = q.where(column, "=", value);
  }
  if (scope.maxSeq !== undefined) q = q.where("seq", "<=", scope.maxSeq);
  return q;
}

/** Entries of the scope, newest (highest seq) first: `limit` rows after skipping `offset`. */
export async function searchEntries(
  ex: Executor,
  scope: AuditSearchScope,
  limit: number,
  offset: number,
): Promise<AuditEntryRow[]> {
  return scoped(ex, scope).selectAll().orderBy("seq", "desc").limit(limit).offset(offset).execute();
}

/** Each exact filter's ordinal column: an entry's position among the account's entries with that value. */
export const ORDINAL_COLUMNS = {
  partition_key: "partition_key_ord",
  code: "code_ord",
  related_model: "related_model_ord",
  path: "path_ord",
  from_address: "from_address_ord",
  method: "method_ord",
  content_type: "content_type_ord",
} as const satisfies Record<keyof AuditFilters, keyof AuditEntriesTable>;

/** An ordinal column of audit_entries. */
export type OrdinalColumn = (typeof ORDINAL_COLUMNS)[keyof AuditFilters];

/**
 * The `ordinal` of the scope's newest entry (`"newest"`, seq ≤ maxSeq) or of the account's oldest
 * entry with the filter's value (`"oldest"`, maxSeq ignored): one seek on the filter's index.
 * Undefined when no entry matches.
 */
export async function findOrdinal(
  ex: Executor,
  scope: AuditSearchScope,
  ordinal: OrdinalColumn,
  end: "newest" | "oldest",
): Promise<number | undefined> {
  const row = await scoped(ex, end === "newest" ? scope : { ...scope, maxSeq: undefined })
    .select(ordinal)
    .orderBy("seq", end === "newest" ? "desc" : "asc")
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row[ordinal]) : undefined;
}

/** The SQL and parameters of findOrdinal (for printing query plans in benchmarks). */
export function compileFindOrdinal(
  ex: Executor,
  scope: AuditSearchScope,
  ordinal: OrdinalColumn,
  end: "newest" | "oldest",
) {
  return scoped(ex, end === "newest" ? scope : { ...scope, maxSeq: undefined })
    .select(ordinal)
    .orderBy("seq", end === "newest" ? "desc" : "asc")
    .limit(1)
    .compile();
}

/** How many entries the scope holds (counted on the filter's index). */
export async function countEntries(ex: Executor, scope: AuditSearchScope): Promise<number> {
  const row = await scoped(ex, scope)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The SQL and parameters of the search query (for printing query plans in benchmarks). */
export function compileSearch(ex: Executor, scope: AuditSearchScope, limit: number, offset: number) {
  return scoped(ex, scope).selectAll().orderBy("seq", "desc").limit(limit).offset(offset).compile();
}

/** Entries of one account in chain order with seq > `afterSeq` (all when undefined), at most `limit`. */
export async function entriesInChainOrder(
  ex: Executor,
  accountId: number,
  afterSeq: number | undefined,
  limit: number,
  sinceTimestamp?: string,
): Promise<AuditEntryRow[]> {
  return ex
    .selectFrom("audit_entries")
    .selectAll()
    .where("account_id", "=", accountId)
    .$if(afterSeq !== undefined, (q) => q.where("seq", ">", afterSeq as number))
    .$if(sinceTimestamp !== undefined, (q) => q.where("timestamp", ">=", sinceTimestamp as string))
    .orderBy("seq", "asc")
    .limit(limit)
    .execute();
}

/** Every account that has an audit chain head or any entry, ascending. */
export async function listAuditedAccounts(ex: Executor): Promise<number[]> {
  const heads = await ex.selectFrom("audit_chain_heads").select("account_id").execute();
  const withEntries = await ex.selectFrom("audit_entries").select("account_id").distinct().execute();
  const ids = new Set([...heads, ...withEntries].map((r) => Number(r.account_id)));
  return [...ids].sort((a, b) => a - b);
}

/** The account's chain head (seq and hash of its newest entry), if it ever logged. */
export async function findChainHead(
  ex: Executor,
  accountId: number,
): Promise<{ seq: number; hash: string } | undefined> {
  const row = await ex
    .selectFrom("audit_chain_heads")
    .select(["seq", "hash"])
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row ? { seq: Number(row.seq), hash: row.hash } : undefined;
}

/** The account's retention checkpoint, if retention ever deleted its entries. */
export async function findCheckpoint(
  ex: Executor,
  accountId: number,
): Promise<AuditCheckpointRow | undefined> {
  return ex
    .selectFrom("audit_checkpoints")
    .selectAll()
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

/** True when an account with this id exists. */
export async function accountExists(ex: Executor, accountId: number): Promise<boolean> {
  const row = await ex.selectFrom("accounts").select("id").where("id", "=", accountId).executeTakeFirst();
  return row !== undefined;
}

/** Accounts that have audit entries older than `cutoff` (their oldest entry is older). */
export async function accountsWithEntriesBefore(ex: Executor, cutoff: string): Promise<number[]> {
  const heads = await ex.selectFrom("audit_chain_heads").select("account_id").execute();
  const out: number[] = [];
  for (const { account_id } of heads) {
    const oldest = await ex
      .selectFrom("audit_entries")
      .select("timestamp")
      .where("account_id", "=", account_id)
      .orderBy("seq", "asc")
      .limit(1)
      .executeTakeFirst();
    if (oldest && oldest.timestamp < cutoff) out.push(Number(account_id));
  }
  return out;
}

/**
 * Deletes the account's entries with seq ≤ `throughSeq` and moves its checkpoint to that entry
 * (`hash`, `timestamp`), adding `deleted` to the running count. Call inside a transaction.
 */
export async function deleteThroughSeq(
  trx: Executor,
  accountId: number,
  through: { seq: number; hash: string; timestamp: string },
  now: string,
): Promise<number> {
  const res = await trx
    .deleteFrom("audit_entries")
    .where("account_id", "=", accountId)
    .where("seq", "<=", through.seq)
    .executeTakeFirst();
  const deleted = Number(res.numDeletedRows);
  await trx
    .insertInto("audit_checkpoints")
    .values({
      account_id: accountId,
      seq: through.seq,
      hash: through.hash,
      timestamp: through.timestamp,
      deleted_count: deleted,
      updated: now,
    })
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet((eb) => ({
        seq: through.seq,
        hash: through.hash,
        timestamp: through.timestamp,
        deleted_count: eb("audit_checkpoints.deleted_count", "+", deleted),
        updated: now,
      })),
    )
    .execute();
  return deleted;
}

/** The SQL and parameters of the count query behind `total_pages` (for printing query plans). */
export function compileCount(ex: Executor, scope: AuditSearchScope) {
  return scoped(ex, scope)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .compile();
}

/**
 * Entries of an account with seq ≤ `maxSeq` (all when undefined), from the chain head and the
 * retention checkpoint alone: an intact chain holds every seq after the checkpoint exactly once.
 */
export async function countChainEntries(ex: Executor, accountId: number, maxSeq?: number): Promise<number> {
  const head = await findChainHead(ex, accountId);
  if (!head) return 0;
  const checkpoint = await findCheckpoint(ex, accountId);
  const top = maxSeq === undefined ? head.seq : Math.min(maxSeq, head.seq);
  return Math.max(0, top - Number(checkpoint?.seq ?? 0));
}
