import { sql } from "kysely";
import type { CommandSpec } from "../shared/feature.js";
import type { Database, Executor } from "./database.js";

/** Lists whose row count per account is kept in `list_counts` (ADR 0070). */
export type CountedList =
  | "requests"
  | "requests_sent"
  | "contacts"
  | "media"
  | "containers"
  | "notifications"
  | "notifications_queued"
  | "notifications_sent"
  | "notifications_failed";

/** Where each counted list's rows live: its table and the condition over alias `R`. */
const DEFINITIONS: Record<CountedList, { table: string; where: string }> = {
  requests: { table: "requests", where: "R.kind = 'request'" },
  requests_sent: { table: "requests", where: "R.kind = 'request' AND R.is_draft = 0" },
  contacts: { table: "contacts", where: "1 = 1" },
  media: { table: "media", where: "1 = 1" },
  containers: { table: "containers", where: "1 = 1" },
  notifications: { table: "notifications", where: "1 = 1" },
  notifications_queued: { table: "notifications", where: "R.status = 'queued'" },
  notifications_sent: { table: "notifications", where: "R.status = 'sent'" },
  notifications_failed: { table: "notifications", where: "R.status = 'failed'" },
};

/** The kept number of rows in `list` of the account (one primary-key read). */
export async function keptCount(ex: Executor, accountId: number, list: CountedList): Promise<number> {
  const row = await ex
    .selectFrom("list_counts")
    .select("n")
    .where("account_id", "=", accountId)
    .where("list", "=", list)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Rebuilds every kept count from the tables, inside the caller's transaction. On PostgreSQL the
 * counted tables are locked against writes (SHARE) until it commits, so no change slips between
 * the count and the rewrite. Returns the lists whose kept count differed, per account.
 */
export async function reconcileListCounts(
  trx: Executor,
  postgres: boolean,
): Promise<{ accountId: number; list: string; kept: number; actual: number }[]> {
  if (postgres)
    await sql
      .raw("LOCK TABLE requests, contacts, media, containers, notifications IN SHARE MODE")
      .execute(trx);
  const actual = new Map<string, number>();
  for (const [list, d] of Object.entries(DEFINITIONS)) {
    const rows = await sql<{
      account_id: number;
      n: number;
    }>`SELECT R.account_id, count(*) AS n FROM ${sql.raw(
      d.table,
    )} R WHERE ${sql.raw(d.where)} GROUP BY R.account_id`.execute(trx);
    for (const r of rows.rows) actual.set(`${r.account_id} ${list}`, Number(r.n));
  }
  const kept = await trx.selectFrom("list_counts").selectAll().execute();
  const diffs: { accountId: number; list: string; kept: number; actual: number }[] = [];
  const seen = new Set<string>();
  for (const k of kept) {
    const key = `${k.account_id} ${k.list}`;
    seen.add(key);
    const a = actual.get(key) ?? 0;
    if (Number(k.n) !== a)
      diffs.push({ accountId: k.account_id, list: k.list, kept: Number(k.n), actual: a });
  }
  for (const [key, a] of actual) {
    if (seen.has(key)) continue;
    const [id, list] = key.split(" ") as [string, string];
    diffs.push({ accountId: Number(id), list, kept: 0, actual: a });
  }
  for (const d of diffs) {
    await trx
      .insertInto("list_counts")
      .values({ account_id: d.accountId, list: d.list, n: d.actual })
      .onConflict((oc) => oc.columns(["account_id", "list"]).doUpdateSet({ n: d.actual }))
      .execute();
  }
  return diffs;
}

/** `ferry admin reconcile-counts`: rebuilds the kept list counts from the tables. */
export const listCountCommands: CommandSpec<Database>[] = [
  {
    name: "admin reconcile-counts",
    usage: "[--json]   Rebuild the kept list counts from the tables",
    run: async (database, out) => {
      const fixed = await database.db
        .transaction()
        .execute((trx) => reconcileListCounts(trx, database.dialect === "postgres"));
      out.print(
        {
          fixed: fixed.map((f) => ({
            account_id: f.accountId,
            list: f.list,
            kept: f.kept,
            actual: f.actual,
          })),
        },
        fixed.length
          ? fixed.map((f) => `account ${f.accountId} ${f.list}: ${f.kept} -> ${f.actual}`).join("\n")
          : "Every kept count matches its rows.",
      );
      return 0;
    },
  },
];
