import { type Digests, newDigests, type PlaintextDigest } from "./media-digests.js";

interface Entry {
  /** The chunk number the digests expect next. */
  next: number;
  digests: Digests;
  /** Blob key whose plaintext each hashed chunk number contributed. */
  keys: Map<number, string>;
  /** A chunk is being hashed right now. */
  busy: boolean;
  /** The chunk whose start the digests' checkpoint marks (they can rewind to before it). */
  checkpointAt: number | undefined;
}

/** A lease on a cache entry for hashing one chunk; `commit` records it, `abandon` forgets its bytes. */
export interface DigestLease {
  digests: Digests;
  commit(blobKey: string): void;
  abandon(): void;
}

/**
 * Per-process running digests of chunked uploads whose chunks arrive in order, so completing a
 * media needs no second read of its blobs. A chunk that fails part way, and the last stored chunk
 * sent again (a client that lost the answer, or a resumed upload), rewind the digests to a
 * checkpoint taken before that chunk. Anything else unusual (out of order, concurrent, another
 * node) drops the entry and completion falls back to decrypting the parts.
 */
export class DigestCache {
  readonly #entries = new Map<number, Entry>();

  constructor(private readonly maxEntries = 512) {}

  /** A lease to hash chunk `chunk` of `mediaId`, or undefined when it cannot continue the digests in order. */
  lease(mediaId: number, chunk: number): DigestLease | undefined {
    let entry = this.#entries.get(mediaId);
    if (entry && !entry.busy && entry.next - 1 === chunk && entry.checkpointAt === chunk) {
      // The chunk hashed last comes again: forget it and hash the new copy in its place.
      entry.digests.rewind();
      entry.keys.delete(chunk);
      entry.next = chunk;
    } else if (entry && (entry.busy || entry.next !== chunk)) {
      this.#drop(mediaId);
      entry = undefined;
    } else if (entry) {
      entry.digests.checkpoint();
      entry.checkpointAt = chunk;
    }
    if (!entry) {
      if (chunk !== 1) return undefined;
      entry = { next: 1, digests: newDigests(), keys: new Map(), busy: false, checkpointAt: 1 };
      this.#entries.set(mediaId, entry);
      while (this.#entries.size > this.maxEntries) {
        this.#drop(this.#entries.keys().next().value as number);
      }
    }
    const held = entry;
    held.busy = true;
    return {
      digests: held.digests,
      commit: (blobKey) => {
        held.busy = false;
        held.keys.set(held.next, blobKey);
        held.next += 1;
      },
      abandon: () => {
        if (this.#entries.get(mediaId) !== held) return;
        // The chunk was not stored: forget its bytes, so sending it again continues in order.
        held.digests.rewind();
        held.busy = false;
      },
    };
  }

  /** Moves a fresh entry to `mediaId` (the first chunk was hashed before the media row existed). */
  adopt(mediaId: number, digests: Digests, blobKey: string): void {
    this.#drop(mediaId);
    this.#entries.set(mediaId, {
      next: 2,
      digests,
      keys: new Map([[1, blobKey]]),
      busy: false,
      checkpointAt: undefined,
    });
  }

  /**
   * Final digests when the cached ones cover exactly `partKeys` (blob key of chunk 1..n, in
   * order); removes the entry either way. Resolves undefined (never rejects) when they do not,
   * or when the digest worker failed, so the caller falls back to reading the parts.
   */
  async take(mediaId: number, partKeys: string[]): Promise<PlaintextDigest | undefined> {
    const entry = this.#entries.get(mediaId);
    this.#entries.delete(mediaId);
    if (!entry) return undefined;
    const usable =
      !entry.busy &&
      entry.next === partKeys.length + 1 &&
      partKeys.every((key, i) => entry.keys.get(i + 1) === key);
    if (!usable) {
      entry.digests.dispose();
      return undefined;
    }
    return entry.digests.digest().catch(() => undefined);
  }

  /** Forgets a media (deleted or removed). */
  forget(mediaId: number): void {
    this.#drop(mediaId);
  }

  #drop(mediaId: number): void {
    this.#entries.get(mediaId)?.digests.dispose();
    this.#entries.delete(mediaId);
  }
}
