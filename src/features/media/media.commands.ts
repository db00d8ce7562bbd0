import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { CommandSpec } from "../../shared/feature.js";
import type { MediaStorageService } from "./media-storage.service.js";

/**
 * `ferry keys rotate`: adds a new master key to the key file and makes it active, then re-wraps
 * every media data key under the new KEK (blobs are not touched). With FERRY_MASTER_KEY the ring
 * cannot be changed from here: put the new key first in that variable, then run this command to
 * re-wrap the data keys under it.
 *
 * `ferry storage gc`: runs the storage cleanup once, now: removes uploads incomplete for
 * UPLOAD_STALE_HOURS, deletes blobs no media part references and the local store's temporary
 * files of writes a crash interrupted (both older than that same grace period), and on S3 aborts
 * multipart uploads never completed (S3_ABORT_INCOMPLETE_UPLOADS_HOURS). Queued blob deletions
 * are left to the worker.
 */
export const mediaCommands: CommandSpec<{ storage: MediaStorageService; keyRing: KeyRing }>[] = [
  {
    name: "keys rotate",
    usage: "[--json]   Add a new master key, make it active, re-wrap media data keys (blobs untouched)",
    async run({ storage, keyRing }, out) {
      let rotated = true;
      let kid: string;
      try {
        kid = keyRing.rotate();
      } catch {
        // A ring from FERRY_MASTER_KEY: the operator rotates by editing the variable.
        rotated = false;
        kid = keyRing.activeKid;
      }
      const rewrapped = await storage.rewrapDataKeys();
      out.print(
        { active_kid: kid, rotated, rewrapped_data_keys: rewrapped },
        [
          rotated
            ? `New active key: ${kid}`
            : `The key ring comes from FERRY_MASTER_KEY: no key added (put a new 'kid:key' first in it to rotate). Active key: ${kid}`,
          `Re-wrapped ${rewrapped} media data key(s) under ${kid}; no blob was rewritten.`,
          rotated
            ? "Running servers pick the new key up on restart; until then they keep wrapping new keys under the previous one, which stays in the ring."
            : "",
        ]
          .filter(Boolean)
          .join("\n"),
      );
      return 0;
    },
  },
  {
    name: "storage gc",
    usage:
      "[--json]   Remove stale incomplete uploads, orphan blobs, crash-left temporary files and S3 multipart uploads now",
    async run({ storage }, out) {
      const report = await storage.cleanup();
      out.print(
        {
          stale_uploads_removed: report.staleUploadsRemoved,
          orphan_blobs_deleted: report.orphanBlobsDeleted,
          blobs_checked: report.blobsChecked,
          temporary_files_removed: report.temporaryFilesRemoved,
          incomplete_multipart_uploads_aborted: report.incompleteUploadsAborted,
        },
        `Removed ${report.staleUploadsRemoved} stale upload(s); deleted ${report.orphanBlobsDeleted} orphan blob(s) of ${report.blobsChecked} checked; removed ${report.temporaryFilesRemoved} temporary file(s) left by interrupted writes; aborted ${report.incompleteUploadsAborted} incomplete S3 multipart upload(s).`,
      );
      return 0;
    },
  },
];
