import type { Container } from "../app/container.js";
import type { Output } from "./admin.js";
import { auditExportCommand, auditVerifyCommand } from "./audit.js";
import { keysRotateCommand } from "./keys.js";
import { storageGcCommand } from "./storage.js";

/** Parsed CLI flags shared by every command (see main.ts for the full list). */
export interface CommandFlags {
  email?: string | undefined;
  name?: string | undefined;
  scopes?: string[] | undefined;
  id?: string | undefined;
  json: boolean;
  account?: string | undefined;
  since?: string | undefined;
  out?: string | undefined;
  positionals: string[];
}

/** A feature's CLI command: returns the process exit code. */
export type CommandRunner = (container: Container, out: Output, flags: CommandFlags) => Promise<number>;

/**
 * Feature commands by their two-word name ("audit verify"). Features add entries here; `ferry help`
 * lists them with their one-line usage.
 */
export const featureCommands: Record<string, { usage: string; run: CommandRunner }> = {
  "audit verify": { usage: "[--account ID] [--json]   Check audit hash chains", run: auditVerifyCommand },
  "audit export": {
    usage: "--since DATE [--account ID] [--out FILE]   Audit entries as JSON Lines",
    run: auditExportCommand,
  },
  "keys rotate": {
    usage: "[--json]   Add a new master key, make it active, re-wrap media data keys (blobs untouched)",
    run: keysRotateCommand,
  },
  "storage gc": {
    usage: "[--json]   Remove stale incomplete uploads and orphan blobs now",
    run: storageGcCommand,
  },
};
