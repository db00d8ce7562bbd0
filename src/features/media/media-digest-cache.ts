import { type Digests, newDigests, type PlaintextDigest } from "./media-digests.js";

/** Where a chunk's bytes go while it is stored: `update` may ask the caller to wait (back pressure). */
export interface DigestSink {
  update(chunk: Uint8Array): Promise<void> | undefined;
}

/** Reads a stored chunk's plaintext back (decrypting and verifying it). */
export type ReadBack = () => AsyncIterable<Uint8Array>;

/** A chunk that arrived ahead of the hashed prefix (ADR 0038): its bytes, or how to read them back. */
interface Held {
  /** Copies of the chunk's bytes while they fit the process's budget; undefined once over it. */
  pieces: Buffer[] | undefined;
  /** Bytes used in the last block of `pieces`. */
  fill: number;
  bytes: number;
  /** Set when the chunk is stored and recorded; until then it may still fail. */
  committed: { key: string; readBack: ReadBack | undefined } | undefined;
  /** Its bytes are being fed to the digests (its blocks must not go back to the pool yet). */
  feeding: boolean;
}

interface Entry {
  /** The chunk number the digests expect next. */
  next: number;
  digests: Digests;
  /** Blob key whose plaintext each hashed chunk number contributed. */
  keys: Map<number, string>;
  /** The chunk being streamed straight into the digests right now (always `next`), if any. */
  streaming: number | undefined;
  /** The chunk whose start the digests' checkpoint marks (they can rewind to before it). */
  checkpointAt: number | undefined;
  /** Chunks past `next`, in flight or stored, not hashed yet. */
  held: Map<number, Held>;
  /** Set while committed held chunks are fed to the digests; settles when caught up. */
  advancing: Promise<void> | undefined;
  /** The entry was dropped (out of the map): leases and the advance loop stop touching it. */
  dropped: boolean;
}

/** A lease on a cache entry for hashing one chunk; `commit` records it, `abandon` forgets its bytes. */
export interface DigestLease {
  digests: DigestSink;
  /**
   * The chunk is stored as `blobKey` and recorded. `readBack` reads its plaintext again, for a
   * chunk that arrived ahead of the hashed prefix while the memory budget was spent.
   */
  commit(blobKey: string, readBack?: ReadBack): void;
  abandon(): void;
}

/** Size of the blocks a held chunk's bytes are copied into. */
const HELD_BLOCK_BYTES = 1024 * 1024;

/** Default bytes of chunks held in memory ahead of their prefix, for the whole process. */
export const DEFAULT_HELD_BUDGET = 32 * 1024 * 1024;

/** How long blocks stay pooled once no chunk is held (then they are left to the collector). */
const POOL_IDLE_MS = 5000;

/**
 * The blocks held chunks are copied into, reused from one chunk to the next. A fresh 1 MiB block
 * per piece of every held chunk made the garbage collector track (and, once promoted, run a full
 * collection to free) up to three quarters of an upload's bytes with 4 chunks in flight; pooled,
 * a block is allocated once and its pages stay mapped. Free blocks are dropped after
 * POOL_IDLE_MS without a held chunk, so an idle server does not keep them.
 */
class BlockPool {
  readonly #free: Buffer[] = [];
  #inUse = 0;
  #trim: NodeJS.Timeout | undefined;

  constructor(private readonly max: number) {}

  take(): Buffer {
    this.#inUse++;
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(HELD_BLOCK_BYTES);
  }

  give(blocks: Buffer[]): void {
    this.#inUse -= blocks.length;
    for (const block of blocks) if (this.#free.length < this.max) this.#free.push(block);
    if (this.#inUse === 0 && this.#free.length > 0 && !this.#trim) {
      this.#trim = setTimeout(() => {
        this.#trim = undefined;
        if (this.#inUse === 0) this.#free.length = 0;
      }, POOL_IDLE_MS);
      this.#trim.unref();
    }
  }

  /** Free blocks kept for reuse (for tests and diagnostics). */
  get pooled(): number {
    return this.#free.length;
  }
}

/**
 * Per-process running digests of chunked uploads (docs/adr/0038), so completing a media needs no
 * second read of its blobs. The digests cover the contiguous prefix of stored chunks: the chunk
 * that continues the prefix is hashed as it streams in; a chunk that arrives ahead of it (several
 * chunks in flight) is held — its bytes copied in memory while the process's budget allows, else
 * read back from its blob later — and hashed once every chunk before it is stored. A chunk that
 * fails part way, and the last hashed chunk sent again (a client that lost the answer, or a resumed
 * upload), rewind the digests to a checkpoint taken before that chunk. Anything else unusual (a
 * chunk sent again while a copy is in flight, an earlier chunk replaced, another node, a restart)
 * drops the entry and completion falls back to decrypting the parts.
 */
export class DigestCache {
  readonly #entries = new Map<number, Entry>();
  /** The loops feeding held chunks to the digests, of every entry (dropped ones' too) until they end. */
  readonly #advancing = new Set<Promise<void>>();
  #heldBytes = 0;
  readonly #blocks: BlockPool;

  constructor(
    private readonly maxEntries = 512,
    private readonly heldBudget = DEFAULT_HELD_BUDGET,
  ) {
    this.#blocks = new BlockPool(Math.ceil(heldBudget / HELD_BLOCK_BYTES));
  }

  /** Bytes of held chunks now in memory (for tests and diagnostics). */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Free blocks kept for the next held chunks (for tests and diagnostics). */
  get pooledBlocks(): number {
    return this.#blocks.pooled;
  }

  /** Loops feeding held chunks to the digests off the callers' paths, now (for tests and diagnostics). */
  get hashingInBackground(): number {
    return this.#advancing.size;
  }

  /** Resolves once no held chunk is being fed to the digests off the callers' paths (for tests). */
  async settled(): Promise<void> {
    while (this.#advancing.size > 0) await Promise.all(this.#advancing);
  }

  /** A lease to hash chunk `chunk` of `mediaId`, or undefined when it cannot be part of the digests. */
  lease(mediaId: number, chunk: number): DigestLease | undefined {
    let entry = this.#entries.get(mediaId);
    if (entry) {
      this.#touch(mediaId, entry);
      const idle = entry.streaming === undefined && entry.advancing === undefined;
      if (idle && entry.next - 1 === chunk && entry.checkpointAt === chunk && !entry.held.has(chunk)) {
        // The chunk hashed last comes again: forget it and hash the new copy in its place.
        entry.digests.rewind();
        entry.keys.delete(chunk);
        entry.next = chunk;
        return this.#streamLease(mediaId, entry, chunk);
      }
      if (idle && entry.next === chunk && !entry.held.has(chunk)) {
        entry.digests.checkpoint();
        entry.checkpointAt = chunk;
        return this.#streamLease(mediaId, entry, chunk);
      }
      if (chunk >= entry.next && chunk !== entry.streaming && !entry.held.has(chunk)) {
        return this.#heldLease(mediaId, entry, chunk);
      }
      // A chunk already hashed, or sent again while a copy of it is in flight or held.
      this.#drop(mediaId);
      return undefined;
    }
    if (chunk !== 1) return undefined;
    entry = {
      next: 1,
      digests: newDigests(),
      keys: new Map(),
      streaming: undefined,
      checkpointAt: 1,
      held: new Map(),
      advancing: undefined,
      dropped: false,
    };
    this.#add(mediaId, entry);
    return this.#streamLease(mediaId, entry, 1);
  }

  /** Moves a fresh entry to `mediaId` (the first chunk was hashed before the media row existed). */
  adopt(mediaId: number, digests: Digests, blobKey: string): void {
    this.#drop(mediaId);
    this.#add(mediaId, {
      next: 2,
      digests,
      keys: new Map([[1, blobKey]]),
      streaming: undefined,
      checkpointAt: undefined,
      held: new Map(),
      advancing: undefined,
      dropped: false,
    });
  }

  /**
   * Final digests when the cached ones cover exactly `partKeys` (blob key of chunk 1..n, in
   * order), once the held chunks before it are hashed; removes the entry either way. Resolves
   * undefined (never rejects) when they do not, or when the digest worker failed, so the caller
   * falls back to reading the parts.
   */
  async take(mediaId: number, partKeys: string[]): Promise<PlaintextDigest | undefined> {
    const entry = this.#entries.get(mediaId);
    if (!entry) return undefined;
    while (entry.advancing && !entry.dropped) await entry.advancing;
    if (this.#entries.get(mediaId) !== entry) return undefined;
    const usable =
      entry.streaming === undefined &&
      entry.next === partKeys.length + 1 &&
      partKeys.every((key, i) => entry.keys.get(i + 1) === key);
    if (!usable) {
      this.#drop(mediaId);
      return undefined;
    }
    this.#entries.delete(mediaId);
    entry.dropped = true;
    this.#release(entry);
    return entry.digests.digest().catch(() => undefined);
  }

  /** Forgets a media (deleted or removed). */
  forget(mediaId: number): void {
    this.#drop(mediaId);
  }

  #streamLease(mediaId: number, entry: Entry, chunk: number): DigestLease {
    entry.streaming = chunk;
    return {
      digests: entry.digests,
      commit: (blobKey) => {
        if (entry.dropped) return;
        entry.streaming = undefined;
        entry.keys.set(chunk, blobKey);
        entry.next = chunk + 1;
        this.#advance(mediaId, entry);
      },
      abandon: () => {
        if (entry.dropped) return;
        // The chunk was not stored: forget its bytes, so sending it again continues in order.
        entry.digests.rewind();
        entry.streaming = undefined;
      },
    };
  }

  #heldLease(mediaId: number, entry: Entry, chunk: number): DigestLease {
    const held: Held = { pieces: [], fill: 0, bytes: 0, committed: undefined, feeding: false };
    entry.held.set(chunk, held);
    const sink: DigestSink = {
      update: (piece) => {
        if (entry.dropped || !held.pieces) return undefined;
        if (this.#heldBytes + piece.length > this.heldBudget) this.#spill(entry, piece.length);
        if (this.#heldBytes + piece.length > this.heldBudget) {
          // Over the budget: keep nothing, read the stored chunk back when its turn comes.
          this.#unhold(held);
          return undefined;
        }
        // Copied into blocks of HELD_BLOCK_BYTES: a few large allocations per chunk, not one per
        // piece of the body (each its own external buffer for the garbage collector to track).
        let offset = 0;
        while (offset < piece.length) {
          let block = held.pieces.at(-1);
          if (!block || held.fill === block.length) {
            block = this.#blocks.take();
            held.pieces.push(block);
            held.fill = 0;
          }
          const n = Math.min(piece.length - offset, block.length - held.fill);
          block.set(piece.subarray(offset, offset + n), held.fill);
          held.fill += n;
          offset += n;
        }
        held.bytes += piece.length;
        this.#heldBytes += piece.length;
        return undefined;
      },
    };
    return {
      digests: sink,
      commit: (blobKey, readBack) => {
        if (entry.dropped || entry.held.get(chunk) !== held) return;
        held.committed = { key: blobKey, readBack };
        this.#advance(mediaId, entry);
      },
      abandon: () => {
        if (entry.dropped || entry.held.get(chunk) !== held) return;
        entry.held.delete(chunk);
        this.#unhold(held);
      },
    };
  }

  /** Feeds the committed held chunks that continue the prefix, one after another, off the caller's path. */
  #advance(mediaId: number, entry: Entry): void {
    if (entry.advancing || entry.streaming !== undefined || entry.dropped) return;
    if (!entry.held.get(entry.next)?.committed) return;
    entry.advancing = (async () => {
      try {
        for (;;) {
          const held = entry.held.get(entry.next);
          if (entry.dropped || !held?.committed) return;
          const chunk = entry.next;
          const { key, readBack } = held.committed;
          entry.digests.checkpoint();
          entry.checkpointAt = chunk;
          if (held.pieces) {
            const pieces = held.pieces;
            held.feeding = true;
            // `update` copies what it is given before it returns; a dropped entry has given its
            // blocks back, so nothing more is read from them.
            for (const [i, block] of pieces.entries()) {
              if (entry.dropped) return;
              await entry.digests.update(i === pieces.length - 1 ? block.subarray(0, held.fill) : block);
            }
            this.#unhold(held);
          } else if (readBack) {
            for await (const piece of readBack()) await entry.digests.update(piece);
          } else {
            throw new Error("a held chunk has neither bytes nor a way to read them back");
          }
          if (entry.dropped) return;
          entry.held.delete(chunk);
          entry.keys.set(chunk, key);
          entry.next = chunk + 1;
        }
      } catch {
        // A chunk that cannot be read back: completion reads the parts and reports the failure.
        this.#drop(mediaId);
      } finally {
        entry.advancing = undefined;
      }
    })();
    const running = entry.advancing;
    this.#advancing.add(running);
    void running.finally(() => this.#advancing.delete(running));
  }

  /**
   * Frees held bytes for `needed` more: stored chunks of other uploads, least recently active
   * first (an upload abandoned half way holds its chunks until it is removed), will be read back
   * from their blobs instead.
   */
  #spill(except: Entry, needed: number): void {
    for (const entry of this.#entries.values()) {
      if (entry === except) continue;
      for (const held of entry.held.values()) {
        if (!held.pieces || !held.committed?.readBack || held.bytes === 0) continue;
        if (held.feeding) continue; // its blocks are being read
        this.#unhold(held);
        if (this.#heldBytes + needed <= this.heldBudget) return;
      }
    }
  }

  /** Moves `mediaId` to the end of the map: the map's order is least recently active first. */
  #touch(mediaId: number, entry: Entry): void {
    this.#entries.delete(mediaId);
    this.#entries.set(mediaId, entry);
  }

  #add(mediaId: number, entry: Entry): void {
    this.#entries.set(mediaId, entry);
    while (this.#entries.size > this.maxEntries) {
      this.#drop(this.#entries.keys().next().value as number);
    }
  }

  #release(entry: Entry): void {
    for (const held of entry.held.values()) this.#unhold(held);
    entry.held.clear();
  }

  /** Frees a held chunk's bytes (its blocks back to the pool); safe to call more than once. */
  #unhold(held: Held): void {
    this.#heldBytes -= held.bytes;
    if (held.pieces) this.#blocks.give(held.pieces);
    held.pieces = undefined;
    held.bytes = 0;
    held.fill = 0;
  }

  #drop(mediaId: number): void {
    const entry = this.#entries.get(mediaId);
    if (!entry) return;
    this.#entries.delete(mediaId);
    entry.dropped = true;
    this.#release(entry);
    entry.digests.dispose();
  }
}
