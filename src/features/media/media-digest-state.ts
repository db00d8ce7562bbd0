/**
 * The running digests of a chunked upload as saved in the database (ADR 0075): hash-wasm's MD5
 * and SHA-256 states after the first `chunks` chunks, and the SHA-256 of those chunks' blob keys,
 * so a state whose chunks were replaced since (a chunk sent again) is recognised and not used.
 */
import { createHash } from "node:crypto";
import type { Executor } from "../../db/database.js";
import type { MediaPartRow } from "./media.repository.js";
import { findDigestState, listParts, saveDigestState } from "./media.repository.js";
import type { SavedDigests } from "./media-digests.js";

/** Running digests covering chunks 1..`keys.length` of an upload, whose blobs are `keys`. */
export interface DigestSnapshot {
  keys: string[];
  saved: SavedDigests;
}

interface StoredState {
  keys: string;
  md5: string;
  sha256: string;
}

function keysHash(keys: string[]): string {
  return createHash("sha256").update(keys.join("\n")).digest("hex");
}

/** Saves `snapshot` as the upload's state unless one covering more chunks is saved already. */
export async function saveDigestSnapshot(
  ex: Executor,
  mediaId: number,
  snapshot: DigestSnapshot,
): Promise<void> {
  const state: StoredState = {
    keys: keysHash(snapshot.keys),
    md5: Buffer.from(snapshot.saved.md5).toString("base64"),
    sha256: Buffer.from(snapshot.saved.sha256).toString("base64"),
  };
  await saveDigestState(ex, mediaId, snapshot.keys.length, JSON.stringify(state));
}

/**
 * The upload's saved state when it still describes its stored chunks (`parts`, read when not
 * given): undefined when there is none, or a chunk it covers is missing or was replaced.
 */
export async function loadDigestSnapshot(
  ex: Executor,
  mediaId: number,
  parts?: MediaPartRow[],
): Promise<DigestSnapshot | undefined> {
  const found = await findDigestState(ex, mediaId);
  if (!found || found.chunks < 1) return undefined;
  const rows = parts ?? (await listParts(ex, mediaId));
  const keys: string[] = [];
  for (let i = 0; i < found.chunks; i++) {
    const part = rows[i];
    if (!part || part.part_index !== i + 1) return undefined;
    keys.push(part.blob_key);
  }
  let state: StoredState;
  try {
    state = JSON.parse(found.state) as StoredState;
  } catch {
    return undefined;
  }
  if (typeof state.md5 !== "string" || typeof state.sha256 !== "string" || state.keys !== keysHash(keys))
    return undefined;
  return {
    keys,
    saved: { md5: Buffer.from(state.md5, "base64"), sha256: Buffer.from(state.sha256, "base64") },
  };
}
