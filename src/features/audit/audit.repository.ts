import { CompiledQuery, type RawBuilder, type Selectable, sql } from "kysely";
import { type Executor, prepared } from "../../db/database.js";
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
  /** With `filters.related_model`: one entity's entries. */
  relationKey?: string | undefined;
  /** Entries with timestamp ≥ since and < until (stored timestamp form). */
  since?: string | undefined;
  until?: string | undefined;
}

/** An unset filter column's value, written into the SQL as a literal (see scoped). */
const NOT_SET = sql.lit("");

/**
 * The filters' indexes hold only entries whose value is set (an empty value is never searched), so
 * every filter also carries `<> ''`, the term by which both databases match a query to such an index.
 */
function scoped(ex: Executor, scope: AuditSearchScope) {
  let q = ex.selectFrom("audit_entries").where("account_id", "=", scope.accountId);
  for (const [column, value] of Object.entries(scope.filters) as [keyof AuditFilters, string | undefined][]) {
    if (value !== undefined) q = q.where(column, "=", value).where(column, "<>", NOT_SET);
  }
  if (scope.maxSeq !== undefined) q = q.where("seq", "<=", scope.maxSeq);
  if (scope.relationKey !== undefined) q = q.where("relation_key", "=", scope.relationKey);
  if (scope.since !== undefined) q = q.where("timestamp", ">=", scope.since);
  if (scope.until !== undefined) q = q.where("timestamp", "<", scope.until);
  return q;
}

/**
 * Entries of the scope, newest (highest seq) first: `limit` rows after skipping `offset`. The
 * page's seqs come first from the filter's (account_id, column, seq) index, whose entries OFFSET
 * skips without reading their rows; then the rows of those seqs (two statements).
 */
export async function searchEntries(
  ex: Executor,
  scope: AuditSearchScope,
  limit: number,
  offset: number,
): Promise<AuditEntryRow[]> {
  const seqs = (await pageOfSeqs(ex, scope, limit, offset).execute()).map((r) => r.seq);
  if (seqs.length === 0) return [];
  return ex
    .selectFrom("audit_entries")
    .selectAll()
    .where("account_id", "=", scope.accountId)
    .where("seq", "in", seqs)
    .orderBy("seq", "desc")
    .execute();
}

function pageOfSeqs(ex: Executor, scope: AuditSearchScope, limit: number, offset: number) {
  return scoped(ex, scope).select("seq").orderBy("seq", "desc").limit(limit).offset(offset);
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

/**
 * Reads the newest `size` entries of the scope's `lead` filter alone (its index, in seq order) and
 * counts how many of them also match the scope's other filters: `sampled` is how many were read
 * (fewer than `size` means every entry of the lead filter was read, so `matched` is exact).
 */
export async function sampleMatches(
  ex: Executor,
  scope: AuditSearchScope,
  lead: keyof AuditFilters,
  size: number,
): Promise<{ sampled: number; matched: number }> {
  const row = await compiledSample(ex, scope, lead, size).executeTakeFirstOrThrow();
  return { sampled: Number(row.sampled), matched: Number(row.matched ?? 0) };
}

function compiledSample(ex: Executor, scope: AuditSearchScope, lead: keyof AuditFilters, size: number) {
  const others = (Object.entries(scope.filters) as [keyof AuditFilters, string | undefined][]).filter(
    ([column, value]) => column !== lead && value !== undefined,
  ) as [keyof AuditFilters, string][];
  const leadScope: AuditSearchScope = { ...scope, filters: { [lead]: scope.filters[lead] } };
  const sample = scoped(ex, leadScope)
    .select(others.map(([column]) => column))
    .orderBy("seq", "desc")
    .limit(size)
    .as("sample");
  return ex.selectFrom(sample).select((eb) => [
    eb.fn.countAll<number>().as("sampled"),
    eb.fn
      .sum<number | null>(
        eb
          .case()
          .when(eb.and(others.map(([column, value]) => eb(eb.ref(`sample.${column}`), "=", value))))
          .then(1)
          .else(0)
          .end(),
      )
      .as("matched"),
  ]);
}

/** The SQL and parameters of sampleMatches (for printing query plans in benchmarks). */
export function compileSample(ex: Executor, scope: AuditSearchScope, lead: keyof AuditFilters, size: number) {
  return compiledSample(ex, scope, lead, size).compile();
}

/** The SQL and parameters of the search's page of seqs (for printing query plans in benchmarks). */
export function compileSearch(ex: Executor, scope: AuditSearchScope, limit: number, offset: number) {
  return pageOfSeqs(ex, scope, limit, offset).compile();
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

// ---------------------------------------------------------------------------------------------
// appending to a chain

/** An account's chain head: the seq and hash of its newest entry. */
export interface ChainHead {
  seq: number;
  hash: string;
}

/** Filter columns whose ordinals an appended entry stores. */
const ORDINALS = Object.entries(ORDINAL_COLUMNS) as [keyof AuditFilters, OrdinalColumn][];

/** The stored values of a new entry (the ordinals are computed by the statement that inserts it). */
export type NewAuditEntry = Omit<Selectable<AuditEntriesTable>, "id" | OrdinalColumn>;

/**
 * The entry's ordinal for `column`, evaluated in the statement that inserts it: 1 + the ordinal of
 * the account's newest entry with the same value (one seek on the (account_id, column, seq) index).
 * Empty values are never searched (an empty filter filters nothing): 0, no seek.
 */
function ordinalAfter(
  entry: NewAuditEntry,
  column: keyof AuditFilters,
  ordinal: OrdinalColumn,
): RawBuilder<number> {
  const value = entry[column];
  return value === ""
    ? sql<number>`0`
    : sql<number>`coalesce((select ${sql.ref(ordinal)} from audit_entries where account_id = ${entry.account_id} and ${sql.ref(column)} = ${value} and ${sql.ref(column)} <> '' order by seq desc limit 1), 0) + 1`;
}

function ordinalsOf(entry: NewAuditEntry): Record<OrdinalColumn, RawBuilder<number>> {
  return Object.fromEntries(
    ORDINALS.map(([column, ordinal]) => [ordinal, ordinalAfter(entry, column, ordinal)]),
  ) as Record<OrdinalColumn, RawBuilder<number>>;
}

/**
 * PostgreSQL: appends `entry` after `known` if that is still the account's stored head
 * (compare-and-set on the head row); false, with nothing written, when it is not. The compare and
 * the insert are one statement, so outside a transaction the entry commits on its own in one round
 * trip, as a named prepared statement (planning it costs about six times its execution).
 */
export async function appendAfterKnownHead(
  ex: Executor,
  known: ChainHead,
  entry: NewAuditEntry,
): Promise<boolean> {
  const ordinals = ordinalsOf(entry);
  const query = ex
    .with("head", (db) =>
      db
        .updateTable("audit_chain_heads")
        .set({ seq: entry.seq, hash: entry.hash })
        .where("account_id", "=", entry.account_id)
        .where("seq", "=", known.seq)
        .where("hash", "=", known.hash)
        .returning("account_id"),
    )
    .insertInto("audit_entries")
    .columns([...Object.keys(entry), ...Object.keys(ordinals)] as (keyof AuditEntriesTable)[])
    .expression((eb) =>
      eb.selectFrom("head").select([
        // Parameters in a SELECT list have no type to infer: cast them to their columns' types.
        ...Object.entries(entry).map(([column, value]) =>
          sql`cast(${value} as ${sql.raw(typeof value === "number" ? "bigint" : "text")})`.as(column),
        ),
        ...Object.entries(ordinals).map(([column, expression]) => expression.as(column)),
      ]),
    );
  // The statement's text varies only with which ordinals are 0.
  const res = await ex.executeQuery(prepared(query.compile()));
  return Number(res.numAffectedRows ?? 0) === 1;
}

/** PostgreSQL batch appends' statement text, by the entries' column list. */
const batchAppendStatements = new Map<string, string>();

/**
 * PostgreSQL: appends `entries` (consecutive, all of one account, the first right after `known`)
 * if `known` is still the account's stored head; false, with nothing written, when it is not. One
 * autocommitted statement whatever the number of entries: the compare-and-set on the head row, and
 * an insert of the entries passed as one array per column. An entry's ordinal for a column is
 * 1 + the stored newest ordinal of its value + how many entries before it in the batch share that
 * value. The text depends only on the column list, so it is one named prepared statement.
 */
export async function appendBatchAfterKnownHead(
  ex: Executor,
  known: ChainHead,
  entries: readonly NewAuditEntry[],
): Promise<boolean> {
  const first = entries[0];
  const last = entries.at(-1);
  if (!first || !last) throw new Error("a batch append needs entries");
  const columns = (Object.keys(first) as (keyof NewAuditEntry)[]).filter((c) => c !== "account_id");
  const shape = columns.join(",");
  let text = batchAppendStatements.get(shape);
  if (text === undefined) {
    // $1 account, $2/$3 the known head, $4/$5 the new head, then one array per column.
    const arrays = columns.map((c, i) => `$${i + 6}::${typeof first[c] === "number" ? "bigint" : "text"}[]`);
    const ordinals = ORDINALS.map(
      ([column, ordinal]) =>
        `case when b."${column}" = '' then 0 else coalesce((select e."${ordinal}" from "audit_entries" e` +
        ` where e."account_id" = $1 and e."${column}" = b."${column}" and e."${column}" <> ''` +
        ` order by e."seq" desc limit 1), 0)` +
        ` + row_number() over (partition by b."${column}" order by b.k) end`,
    );
    const names = ["account_id", ...columns, ...ORDINALS.map(([, ordinal]) => ordinal)];
    text =
      `with head as (update "audit_chain_heads" set "seq" = $4, "hash" = $5` +
      ` where "account_id" = $1 and "seq" = $2 and "hash" = $3 returning "account_id")` +
      ` insert into "audit_entries" (${names.map((c) => `"${c}"`).join(", ")})` +
      ` select head."account_id", ${columns.map((c) => `b."${c}"`).join(", ")}, ${ordinals.join(", ")}` +
      ` from head cross join unnest(${arrays.join(", ")}) with ordinality` +
      ` as b(${columns.map((c) => `"${c}"`).join(", ")}, k) order by b.k`;
    batchAppendStatements.set(shape, text);
  }
  const params = [
    first.account_id,
    known.seq,
    known.hash,
    last.seq,
    last.hash,
    ...columns.map((c) => entries.map((entry) => entry[c])),
  ];
  const res = await ex.executeQuery(prepared(CompiledQuery.raw(text, params)));
  return Number(res.numAffectedRows ?? 0) > 0;
}

/**
 * Advances the account's head by one and returns the head it had before, creating the head row on
 * first use. The upsert-and-increment locks the head row until `trx` ends, so concurrent writers
 * queue here; finish with insertEntryAtHead.
 */
export async function lockNextSeq(trx: Executor, accountId: number, genesis: string): Promise<ChainHead> {
  const head = await trx
    .insertInto("audit_chain_heads")
    .values({ account_id: accountId, seq: 1, hash: genesis })
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet((eb) => ({ seq: eb("audit_chain_heads.seq", "+", 1) })),
    )
    .returning(["seq", "hash"])
    .executeTakeFirstOrThrow();
  return { seq: Number(head.seq) - 1, hash: head.hash };
}

/**
 * Locks the account's head row until `trx` ends and returns it, creating it (at the genesis) on
 * first use: concurrent writers queue here, and once it returns the head cannot move under `trx`,
 * so an append after it (appendBatchAfterKnownHead) succeeds. Each statement after it reads the
 * entries committed before the lock was granted.
 */
export async function lockHead(trx: Executor, accountId: number, genesis: string): Promise<ChainHead> {
  const head = await trx
    .insertInto("audit_chain_heads")
    .values({ account_id: accountId, seq: 0, hash: genesis })
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet((eb) => ({ seq: eb.ref("audit_chain_heads.seq") })),
    )
    .returning(["seq", "hash"])
    .executeTakeFirstOrThrow();
  return { seq: Number(head.seq), hash: head.hash };
}

/** Inserts the entry taken by lockNextSeq and records its hash on the head row. */
export async function insertEntryAtHead(trx: Executor, entry: NewAuditEntry): Promise<void> {
  // Prepared: planning the ordinals' subqueries costs more than running them, under the head's lock.
  await trx.executeQuery(
    prepared(
      trx
        .insertInto("audit_entries")
        .values({ ...entry, ...ordinalsOf(entry) })
        .compile(),
    ),
  );
  await trx
    .updateTable("audit_chain_heads")
    .set({ hash: entry.hash })
    .where("account_id", "=", entry.account_id)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// SQLite group commit: statements written once per shape

/**
 * SQLite: moves the account's head from `known` to `next` if `known` is still the stored head
 * (compare-and-set); false, with nothing written, when it is not. A group commit appends all of an
 * account's entries of one batch after one such statement: SQLite has one writer at a time, so once
 * it has succeeded nothing else can move the head before the transaction ends.
 */
export async function advanceKnownHead(
  ex: Executor,
  accountId: number,
  known: ChainHead,
  next: ChainHead,
): Promise<boolean> {
  const res = await ex.executeQuery(
    CompiledQuery.raw(
      'update "audit_chain_heads" set "seq" = ?, "hash" = ? where "account_id" = ? and "seq" = ? and "hash" = ?',
      [next.seq, next.hash, accountId, known.seq, known.hash],
    ),
  );
  return Number(res.numAffectedRows ?? 0) === 1;
}

/** INSERT statements by shape (the entry's columns and which ordinals are 0): at most 2^7 per column list. */
const insertStatements = new Map<string, string>();

/**
 * SQLite: inserts `entry` with its ordinals (see ordinalAfter) as plain SQL text built once per shape, so
 * the statement cache of the connection reuses one prepared statement; building it through the
 * query builder cost more CPU than running it.
 */
export async function insertEntry(ex: Executor, entry: NewAuditEntry): Promise<void> {
  const columns = Object.keys(entry) as (keyof NewAuditEntry)[];
  const params: unknown[] = columns.map((column) => entry[column]);
  let shape = columns.join(",");
  for (const [column] of ORDINALS) {
    const empty = entry[column] === "";
    shape += empty ? "0" : "1";
    if (!empty) params.push(entry.account_id, entry[column]);
  }
  let text = insertStatements.get(shape);
  if (text === undefined) {
    const names = [...columns, ...ORDINALS.map(([, ordinal]) => ordinal)].map((c) => `"${c}"`).join(", ");
    const values = [
      ...columns.map(() => "?"),
      ...ORDINALS.map(([column, ordinal]) =>
        entry[column] === ""
          ? "0"
          : `coalesce((select "${ordinal}" from "audit_entries" where "account_id" = ? and "${column}" = ? and "${column}" <> '' order by "seq" desc limit 1), 0) + 1`,
      ),
    ].join(", ");
    text = `insert into "audit_entries" (${names}) values (${values})`;
    insertStatements.set(shape, text);
  }
  await ex.executeQuery(CompiledQuery.raw(text, params));
}
