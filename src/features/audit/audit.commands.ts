import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import type { CommandFlags, CommandOutput, CommandSpec } from "../../shared/feature.js";
import { toTimestamp } from "../../shared/time.js";
import type { AccountChainReport, AuditChainService } from "./audit-chain.service.js";

/** Exit code of a command given bad arguments. */
const USAGE_EXIT = 2;

function usageError(out: CommandOutput, message: string): number {
  if (out.json) console.log(JSON.stringify({ error: message }));
  else console.error(`Error: ${message}`);
  return USAGE_EXIT;
}

/** Parses --account into an id; undefined when absent, null when malformed. */
function readAccount(flags: CommandFlags): number | undefined | null {
  if (flags.account === undefined) return undefined;
  return /^\d{1,15}$/.test(flags.account) && Number(flags.account) > 0 ? Number(flags.account) : null;
}

/** Parses --since (`YYYY-MM-DD` = midnight UTC, or an ISO 8601 date-time) into stored timestamp text. */
export function parseSince(raw: string): string | undefined {
  const text = raw.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text))
    return undefined;
  const iso = text.length === 10 ? `${text}T00:00:00Z` : text.replace(" ", "T");
  const date = new Date(/Z|[+-]\d{2}:?\d{2}$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(date.getTime()) ? undefined : toTimestamp(date);
}

function describe(r: AccountChainReport): string {
  const range = r.entries === 0 ? "no entries" : `${r.entries} entries after seq ${r.start_seq}`;
  if (r.ok) return `account ${r.account_id}: OK (${range}, head seq ${r.head_seq} ${r.head_hash})`;
  const p = r.problem;
  return `account ${r.account_id}: BROKEN: ${p?.kind} entry at seq ${p?.seq} (RowKey ${p?.row_key}${p?.partition_key ? `, PartitionKey ${p.partition_key}` : ""}): ${p?.detail}`;
}

/**
 * `ferry audit verify [--account ID] [--json]`: walks each account's hash chain and reports the
 * first changed, removed or inserted entry. Exit 0 when every chain verifies, 1 when one is broken.
 */
async function verify(chain: AuditChainService, out: CommandOutput, flags: CommandFlags): Promise<number> {
  const account = readAccount(flags);
  if (account === null) return usageError(out, "--account must be an account id");
  const ids = account === undefined ? await chain.auditedAccounts() : [account];
  const reports: AccountChainReport[] = [];
  for (const id of ids) reports.push(await chain.verifyAccount(id));
  const ok = reports.every((r) => r.ok);
  const summary = ok
    ? `Audit log verified: ${reports.length} account(s), no tampering found.`
    : `Audit log BROKEN in ${reports.filter((r) => !r.ok).length} of ${reports.length} account(s).`;
  out.print({ ok, accounts: reports }, [...reports.map(describe), summary].join("\n"));
  return ok ? 0 : 1;
}

async function write(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, "drain");
}

/**
 * `ferry audit export --since DATE [--account ID] [--out FILE] [--json]`: writes the entries with
 * Timestamp ≥ DATE as JSON Lines (to FILE, or stdout), oldest first per account, each line the Log
 * entry plus account_id, seq, prev_hash and hash so the chain can be re-checked elsewhere.
 */
async function exportEntries(
  chain: AuditChainService,
  out: CommandOutput,
  flags: CommandFlags,
): Promise<number> {
  if (!flags.since) return usageError(out, "--since DATE is required (YYYY-MM-DD or an ISO 8601 date-time)");
  const since = parseSince(flags.since);
  if (!since)
    return usageError(out, `--since must be YYYY-MM-DD or an ISO 8601 date-time, got "${flags.since}"`);
  const account = readAccount(flags);
  if (account === null) return usageError(out, "--account must be an account id");
  const stream: Writable = flags.out ? createWriteStream(flags.out, { mode: 0o600 }) : process.stdout;
  let count = 0;
  try {
    for await (const entry of chain.exportSince(since, account === undefined ? undefined : [account])) {
      await write(stream, `${JSON.stringify(entry)}\n`);
      count++;
    }
  } finally {
    if (flags.out) {
      stream.end();
      await once(stream, "finish");
    }
  }
  if (flags.out) {
    out.print(
      { exported: count, since, file: flags.out },
      `Exported ${count} entries since ${since} to ${flags.out}`,
    );
  } else {
    console.error(`Exported ${count} entries since ${since}`);
  }
  return 0;
}

/** The audit feature's commands: `audit verify` and `audit export`. */
export const auditCommands: CommandSpec<AuditChainService>[] = [
  { name: "audit verify", usage: "[--account ID] [--json]   Check audit hash chains", run: verify },
  {
    name: "audit export",
    usage: "--since DATE [--account ID] [--out FILE]   Audit entries as JSON Lines",
    run: exportEntries,
  },
];
