import { once } from "node:events";
import { createWriteStream, readFileSync, writeFileSync } from "node:fs";
import type { Writable } from "node:stream";
import type { CommandFlags, CommandOutput, CommandSpec } from "../../shared/feature.js";
import { toTimestamp } from "../../shared/time.js";
import { AnchorFormatError, type AnchorReport, type AuditAnchorService } from "./audit-anchor.service.js";
import type { AccountChainReport, AuditChainService } from "./audit-chain.service.js";

/** What the audit commands run against. */
export interface AuditCommandDeps {
  chain: AuditChainService;
  anchors: AuditAnchorService;
}

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
 * `ferry audit verify [--account ID] [--anchor FILE] [--json]`: walks each account's hash chain and
 * reports the first changed, removed or inserted entry; with --anchor, also checks that every chain
 * head the anchor recorded is still in its chain with the same hash (a log cut back to an earlier
 * head verifies as a chain, but not against an older anchor). Exit 0 when all holds, 1 otherwise.
 */
async function verify(
  { chain, anchors }: AuditCommandDeps,
  out: CommandOutput,
  flags: CommandFlags,
): Promise<number> {
  const account = readAccount(flags);
  if (account === null) return usageError(out, "--account must be an account id");
  let anchorReport: AnchorReport | undefined;
  if (flags.anchor !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.anchor, "utf8");
    } catch {
      return usageError(out, `cannot read the anchor file ${flags.anchor}`);
    }
    try {
      anchorReport = await anchors.verify(anchors.parse(text));
    } catch (err) {
      if (err instanceof AnchorFormatError) return usageError(out, `--anchor: ${err.message}`);
      throw err;
    }
  }
  const ids = account === undefined ? await chain.auditedAccounts() : [account];
  const reports: AccountChainReport[] = [];
  for (const id of ids) reports.push(await chain.verifyAccount(id));
  const chainsOk = reports.every((r) => r.ok);
  const ok = chainsOk && (anchorReport?.ok ?? true);
  const summary = chainsOk
    ? `Audit log verified: ${reports.length} account(s), no tampering found.`
    : `Audit log BROKEN in ${reports.filter((r) => !r.ok).length} of ${reports.length} account(s).`;
  const lines = [...reports.map(describe), summary];
  if (anchorReport) {
    for (const h of anchorReport.heads.filter((x) => !x.ok))
      lines.push(`account ${h.account_id}: ANCHOR ${h.status.toUpperCase()}: ${h.detail}`);
    lines.push(anchorReport.ok ? anchorReport.detail : `ANCHOR CHECK FAILED. ${anchorReport.detail}`);
  }
  out.print({ ok, accounts: reports, ...(anchorReport ? { anchor: anchorReport } : {}) }, lines.join("\n"));
  return ok ? 0 : 1;
}

/**
 * `ferry audit anchor [--account ID] [--out FILE] [--json]`: writes a signed anchor of the chain
 * heads (to FILE with mode 0600, or stdout) for `audit verify --anchor` to check later. Keep
 * anchors where whoever can write the database cannot (another host, write-once storage).
 */
async function anchor(
  { anchors }: AuditCommandDeps,
  out: CommandOutput,
  flags: CommandFlags,
): Promise<number> {
  const account = readAccount(flags);
  if (account === null) return usageError(out, "--account must be an account id");
  const made = await anchors.create(account === undefined ? undefined : [account]);
  const text = `${JSON.stringify(made, null, 2)}\n`;
  if (!flags.out) {
    process.stdout.write(text);
    return 0;
  }
  writeFileSync(flags.out, text, { mode: 0o600 });
  out.print(
    { anchored: made.heads.length, created: made.created, file: flags.out },
    `Anchored ${made.heads.length} chain head(s) at ${made.created} in ${flags.out}`,
  );
  return 0;
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
  { chain }: AuditCommandDeps,
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

/** The audit feature's commands: `audit verify`, `audit anchor` and `audit export`. */
export const auditCommands: CommandSpec<AuditCommandDeps>[] = [
  {
    name: "audit verify",
    usage: "[--account ID] [--anchor FILE] [--json]   Check audit hash chains (and an anchor)",
    run: verify,
  },
  {
    name: "audit anchor",
    usage: "[--account ID] [--out FILE] [--json]   Write a signed anchor of the chain heads",
    run: anchor,
  },
  {
    name: "audit export",
    usage:
      "--since DATE [--account ID] [--out FILE] [--json]   Audit entries as JSON Lines (--json: the summary with --out)",
    run: exportEntries,
  },
];
