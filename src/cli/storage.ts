import type { Container } from "../app/container.js";
import type { Output } from "./admin.js";
import type { CommandFlags } from "./commands.js";

/**
 * `ferry storage gc`: runs the storage cleanup once, now: removes uploads incomplete for
 * UPLOAD_STALE_HOURS and deletes blobs no media part references (older than that same grace
 * period). Queued blob deletions are left to the worker. Exit code 0.
 */
export async function storageGcCommand(
  container: Container,
  out: Output,
  _flags: CommandFlags,
): Promise<number> {
  const report = await container.media.storage.cleanup();
  out.print(
    {
      stale_uploads_removed: report.staleUploadsRemoved,
      orphan_blobs_deleted: report.orphanBlobsDeleted,
      blobs_checked: report.blobsChecked,
    },
    `Removed ${report.staleUploadsRemoved} stale upload(s); deleted ${report.orphanBlobsDeleted} orphan blob(s) of ${report.blobsChecked} checked.`,
  );
  return 0;
}
