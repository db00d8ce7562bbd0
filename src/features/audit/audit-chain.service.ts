import type { Database } from "../../db/database.js";
import { type LogEntry, presentLogEntry } from "./audit.presenter.js";
import {
  type AuditEntryRow,
  entriesInChainOrder,
  findChainHead,
  findCheckpoint,
  listAuditedAccounts,
} from "./audit.repository.js";
import { CHAIN_GENESIS, chainedFieldsOf, chainHash, etagForHash, rowKeyForSeq } from "./audit.writer.js";

/** What broke the chain at the first bad position. */
export type ChainProblemKind = "changed" | "removed" | "inserted";

/** The first place an account's chain does not verify. */
export interface ChainProblem {
  kind: ChainProblemKind;
  /** Sequence number of the entry concerned (the first missing one for "removed"). */
  seq: number;
  /** PartitionKey of the entry concerned ("" when the entry is missing). */
  partition_key: string;
  row_key: string;
  detail: string;
}

/** Result of verifying one account's chain. */
export interface AccountChainReport {
  account_id: number;
  ok: boolean;
  /** Entries read. */
  entries: number;
  /** The chain starts after this seq (the retention checkpoint; 0 without one). */
  start_seq: number;
  /** The chain head as recorded (seq 0 and the genesis hash when the account never logged). */
  head_seq: number;
  head_hash: string;
  problem: ChainProblem | null;
}

/** One exported line: the Log entry plus what an outside verifier needs to re-check the chain. */
export interface ExportedEntry extends LogEntry {
  account_id: number;
  seq: number;
  prev_hash: string;
  hash: string;
}

const BATCH = 2000;

/** Walks and exports the per-account hash chains of the audit log (tamper evidence). */
export class AuditChainService {
  constructor(private readonly database: Database) {}

  /** Every account that has audit entries or a chain head, ascending. */
  async auditedAccounts(): Promise<number[]> {
    return listAuditedAccounts(this.database.db);
  }

  /**
   * Re-computes the account's chain from its retention checkpoint (or genesis) to its head and
   * reports the first entry that was changed, removed or inserted behind the writer's back.
   */
  async verifyAccount(accountId: number): Promise<AccountChainReport> {
    const { db } = this.database;
    const head = await findChainHead(db, accountId);
    const checkpoint = await findCheckpoint(db, accountId);
    const startSeq = checkpoint ? Number(checkpoint.seq) : 0;
    let expectedSeq = startSeq + 1;
    let prevHash = checkpoint?.hash ?? CHAIN_GENESIS;
    const headSeq = head?.seq ?? startSeq;
    const headHash = head?.hash ?? prevHash;
    const report = (problem: ChainProblem | null, entries: number): AccountChainReport => ({
      account_id: accountId,
      ok: problem === null,
      entries,
      start_seq: startSeq,
      head_seq: headSeq,
      head_hash: headHash,
      problem,
    });
    const at = (kind: ChainProblemKind, row: AuditEntryRow, detail: string): ChainProblem => ({
      kind,
      seq: Number(row.seq),
      partition_key: row.partition_key,
      row_key: row.row_key,
      detail,
    });

    let entries = 0;
    let after: number | undefined;
    for (;;) {
      const rows = await entriesInChainOrder(db, accountId, after, BATCH);
      for (const row of rows) {
        entries++;
        const seq = Number(row.seq);
        if (!Number.isSafeInteger(seq) || seq < expectedSeq) {
          const where =
            seq <= startSeq ? "before the chain start" : `between ${expectedSeq - 1} and ${expectedSeq}`;
          return report(
            at("inserted", row, `Entry with seq ${row.seq} does not belong to the chain (${where}).`),
            entries,
          );
        }
        if (seq > headSeq) {
          return report(
            at("inserted", row, `Entry with seq ${seq} is beyond the chain head (seq ${headSeq}).`),
            entries,
          );
        }
        if (seq > expectedSeq) {
          return report(missing(expectedSeq, seq - 1), entries);
        }
        const recomputed = chainHash(row.prev_hash, chainedFieldsOf(row));
        if (row.prev_hash !== prevHash || recomputed !== row.hash || row.etag !== etagForHash(row.hash)) {
          return report(
            at("changed", row, `Entry ${seq} was changed: its content no longer matches its chain hash.`),
            entries,
          );
        }
        prevHash = row.hash;
        expectedSeq = seq + 1;
      }
      if (rows.length < BATCH) break;
      after = Number(rows[rows.length - 1]?.seq);
    }
    if (expectedSeq - 1 < headSeq) return report(missing(expectedSeq, headSeq), entries);
    if (prevHash !== headHash) {
      return report(
        {
          kind: "changed",
          seq: headSeq,
          partition_key: "",
          row_key: rowKeyForSeq(headSeq),
          detail: "The recorded chain head does not match the last entry.",
        },
        entries,
      );
    }
    return report(null, entries);
  }

  /**
   * Entries with Timestamp ≥ `since` (fixed-width timestamp text), account by account
   * (ascending) and oldest first within an account, read in batches.
   */
  async *exportSince(since: string, accountIds?: number[]): AsyncGenerator<ExportedEntry> {
    const { db } = this.database;
    for (const accountId of accountIds ?? (await this.auditedAccounts())) {
      let after: number | undefined;
      for (;;) {
        const rows = await entriesInChainOrder(db, accountId, after, BATCH, since);
        for (const row of rows) {
          yield {
            account_id: accountId,
            seq: Number(row.seq),
            ...presentLogEntry(row),
            prev_hash: row.prev_hash,
            hash: row.hash,
          };
        }
        if (rows.length < BATCH) break;
        after = Number(rows[rows.length - 1]?.seq);
      }
    }
  }
}

function missing(from: number, to: number): ChainProblem {
  return {
    kind: "removed",
    seq: from,
    partition_key: "",
    row_key: rowKeyForSeq(from),
    detail: from === to ? `Entry ${from} was removed.` : `Entries ${from} to ${to} were removed.`,
  };
}
