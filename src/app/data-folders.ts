/**
 * The modes of Ferry's data on the local file system: the SQLite database (session tokens, key
 * hashes) and the key file readable by their owner only (0600), the data folder and the local
 * blob store's folder 0700. New files and folders are created so (src/db/database.ts, the key ring,
 * the local blob store); `tightenDataModes` brings those of an existing installation, created
 * before, to the same modes at start.
 */
import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BlobStoreOptions } from "../adapters/blob-store/blob-store.js";
import type { Config } from "../config/config.js";

/** Names in the data folder that are Ferry's own. */
const OWN_DATA_ENTRY = /^(ferry\.db(-wal|-shm|-journal)?|master-keys\.json(\.\d+\.tmp)?|blobs)$/;

/** What tightenDataModes changed: `path 0644 -> 0600` items. */
export interface TightenedModes {
  changed: string[];
  /** Paths whose mode could not be changed (another owner), with the reason. */
  failed: string[];
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** Whether every entry of `dir` passes `own` (a folder shared with other files is left alone). */
function holdsOnly(dir: string, own: (name: string, isDirectory: boolean) => boolean): boolean {
  return readdirSync(dir, { withFileTypes: true }).every((e) => own(e.name, e.isDirectory()));
}

/**
 * Removes the group and other bits of Ferry's data files (ferry.db and its -wal/-shm/-journal,
 * master-keys.json) and folders (the data folder and the local blob folder, when nothing but
 * Ferry's own entries are in them: FERRY_DATA_DIR=/tmp must not lock out everyone else).
 */
export function tightenDataModes(config: Config, blobs: BlobStoreOptions): TightenedModes {
  const result: TightenedModes = { changed: [], failed: [] };
  const tighten = (path: string, mode: number, isOwn?: () => boolean) => {
    let current: number;
    try {
      current = statSync(path).mode & 0o777;
    } catch {
      return; // absent
    }
    if ((current & 0o077) === 0) return;
    try {
      if (isOwn && !isOwn()) return;
      chmodSync(path, mode);
      result.changed.push(`${path} ${octal(current)} -> ${octal(mode)}`);
    } catch (err) {
      result.failed.push(`${path} (${octal(current)}): ${(err as Error).message}`);
    }
  };
  const db = join(config.dataDir, "ferry.db");
  if (!config.DATABASE_URL) {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) tighten(db + suffix, 0o600);
  }
  tighten(join(config.dataDir, "master-keys.json"), 0o600);
  if (blobs.kind === "local") {
    tighten(blobs.dir, 0o700, () =>
      holdsOnly(blobs.dir, (name, isDirectory) => isDirectory || /\.(blob|tmp)$/.test(name)),
    );
  }
  tighten(config.dataDir, 0o700, () => holdsOnly(config.dataDir, (name) => OWN_DATA_ENTRY.test(name)));
  return result;
}

/** The log line of what tightenDataModes changed, or undefined when nothing was loose. */
export function tightenedModesMessage(modes: TightenedModes): string | undefined {
  const parts: string[] = [];
  if (modes.changed.length > 0) {
    parts.push(
      `Ferry's data was readable by other users of this machine (the database holds session tokens); permissions tightened: ${modes.changed.join(", ")}.`,
    );
  }
  if (modes.failed.length > 0) {
    parts.push(
      `Could not tighten the permissions of ${modes.failed.join("; ")}: make them 0600 (files) and 0700 (folders), owned by the user Ferry runs as.`,
    );
  }
  return parts.length > 0 ? parts.join(" ") : undefined;
}
