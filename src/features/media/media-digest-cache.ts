import type { DigestSnapshot } from "./media-digest-state.js";
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

/** A chunk ahead of the prefix waiting for room in the budget before its next piece. */
interface Waiter {
  entry: Entry;
  chunk: number;
  held: Held;
  resolve: () => void;
  timer: NodeJS.Timeout;
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
  /** When a chunk of it was last leased or stored (`performance.now()`). */
  activeAt: number;
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
export const DEFAULT_HELD_BUDGET = 16 * 1024 * 1024;

/**
 * Room a held chunk waits for before taking its next piece: a body piece is at most the socket's
 * 64 KiB read, so a piece that arrives after the wait fits.
 */
const HOLD_HEADROOM_BYTES = 64 * 1024;

/** Default longest wait for room before a chunk ahead gives up holding its bytes. */
export const DEFAULT_HOLD_WAIT_MS = 2000;

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
 * read back from its blob later — and hashed once every chunk before it is stored. With the budget
 * spent, a chunk ahead waits (its body is read no further) while the chunks before it are hashed,
 * rather than being read back; it gives up holding after `holdWaitMs` without room. A chunk that
 * fails part way, and the last hashed chunk sent again (a client that lost the answer, or a resumed
 * upload), rewind the digests to a checkpoint taken before that chunk. A chunk this process cannot
 * continue (the chunks before it went to another node, or it restarted) continues the state saved
 * in the database with the chunk before it (ADR 0075), when there is one. Anything else unusual (a
 * chunk sent again while a copy is in flight, an earlier chunk replaced) drops the entry and
 * completion continues from the saved state, decrypting the parts after it.
 */
export class DigestCache {
  readonly #entries = new Map<number, Entry>();
  /** The loops feeding held chunks to the digests, of every entry (dropped ones' too) until they end. */
  readonly #advancing = new Set<Promise<void>>();
  #heldBytes = 0;
  readonly #blocks: BlockPool;
  /** Chunks ahead waiting for room, first come first served. */
  #waiters: Waiter[] = [];

  constructor(
    private readonly maxEntries = 512,
    private readonly heldBudget = DEFAULT_HELD_BUDGET,
    private readonly holdWaitMs = DEFAULT_HOLD_WAIT_MS,
    /** Where `persist` saves a snapshot (the database, ADR 0075); none: nothing is saved. */
    private readonly persistSnapshot?: (mediaId: number, snapshot: DigestSnapshot) => Promise<void>,
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

  /** Chunks ahead waiting for room in the budget, now (for tests and diagnostics). */
  get waitingForRoom(): number {
    return this.#waiters.length;
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
      activeAt: performance.now(),
    };
    this.#add(mediaId, entry);
    return this.#streamLease(mediaId, entry, 1);
  }

  /**
   * As `lease`, but when this process cannot continue the digests with chunk `chunk` (it has no
   * entry, or its entry expects another chunk: the chunks before came to other nodes), asks
   * `loadSaved` for the state saved in the database (ADR 0075); one covering exactly the chunks
   * before `chunk` replaces the entry, and the chunk streams into the digests continued from it.
   */
  async leaseOrResume(
    mediaId: number,
    chunk: number,
    loadSaved: () => Promise<DigestSnapshot | undefined>,
  ): Promise<DigestLease | undefined> {
    const before = this.#entries.get(mediaId);
    const local =
      before !== undefined &&
      (before.next === chunk || (before.next - 1 === chunk && before.checkpointAt === chunk));
    if (chunk === 1 || local) return this.lease(mediaId, chunk);
    const saved = await loadSaved().catch(() => undefined);
    const entry = this.#entries.get(mediaId);
    const idle = entry === undefined || (entry.streaming === undefined && entry.advancing === undefined);
    if (saved?.keys.length !== chunk - 1 || entry !== before || !idle || (entry && entry.next > chunk)) {
      return this.lease(mediaId, chunk);
    }
    this.#drop(mediaId);
    const resumed: Entry = {
      next: chunk,
      digests: newDigests(saved.saved),
      keys: new Map(saved.keys.map((key, i) => [i + 1, key])),
      streaming: undefined,
      checkpointAt: chunk,
      held: new Map(),
      advancing: undefined,
      dropped: false,
      activeAt: performance.now(),
    };
    resumed.digests.checkpoint();
    this.#add(mediaId, resumed);
    return this.#streamLease(mediaId, resumed, chunk);
  }

  /**
   * The running digests of `mediaId` and the chunks they cover, when some are hashed and no chunk
   * is being fed to them now; undefined otherwise (held chunks being fed save at the end).
   */
  async snapshot(mediaId: number): Promise<DigestSnapshot | undefined> {
    const entry = this.#entries.get(mediaId);
    if (!entry || entry.streaming !== undefined || entry.advancing !== undefined || entry.next < 2)
      return undefined;
    const keys: string[] = [];
    for (let i = 1; i < entry.next; i++) {
      const key = entry.keys.get(i);
      if (key === undefined) return undefined;
      keys.push(key);
    }
    // The worker answers after every byte sent before this call, and before any sent after it.
    const saved = await entry.digests.save().catch(() => undefined);
    return saved && !entry.dropped ? { keys, saved } : undefined;
  }

  /**
   * Saves the running digests of `mediaId` through the cache's `persist` (see `snapshot`); never
   * rejects: a state not saved only makes another node read parts back.
   */
  async persist(mediaId: number): Promise<void> {
    if (!this.persistSnapshot) return;
    const snapshot = await this.snapshot(mediaId);
    if (snapshot) await this.persistSnapshot(mediaId, snapshot).catch(() => undefined);
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
      activeAt: performance.now(),
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
        entry.activeAt = performance.now();
        entry.streaming = undefined;
        entry.keys.set(chunk, blobKey);
        entry.next = chunk + 1;
        this.#advance(mediaId, entry);
        this.#wake();
      },
      abandon: () => {
        if (entry.dropped) return;
        // The chunk was not stored: forget its bytes, so sending it again continues in order.
        entry.digests.rewind();
        entry.streaming = undefined;
        this.#wake();
      },
    };
  }

  #heldLease(mediaId: number, entry: Entry, chunk: number): DigestLease {
    const held: Held = { pieces: [], fill: 0, bytes: 0, committed: undefined, feeding: false };
    entry.held.set(chunk, held);
    const sink: DigestSink = {
      update: (piece) => {
        if (entry.dropped || !held.pieces) return undefined;
        // The chunk the digests expect next is fed as soon as it is stored, so it may go over the
        // budget (by up to the budget again) rather than be read back. A chunk further ahead
        // whose prefix is growing keeps a body piece past the budget and waits before the next.
        const next = chunk === entry.next;
        const limit = next ? 2 * this.heldBudget : this.heldBudget;
        if (this.#heldBytes + piece.length > limit) this.#spill(entry, piece.length);
        const wait = !next && this.#mustWait(entry, chunk);
        if (this.#heldBytes + piece.length > limit && !(wait && piece.length <= HOLD_HEADROOM_BYTES)) {
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
        // Room for the next piece: from idle uploads' chunks, else by waiting.
        if (wait && this.#heldBytes + HOLD_HEADROOM_BYTES > this.heldBudget)
          this.#spill(entry, HOLD_HEADROOM_BYTES);
        if (wait && this.#heldBytes + HOLD_HEADROOM_BYTES > this.heldBudget) {
          return new Promise<void>((resolve) => {
            const waiter: Waiter = {
              entry,
              chunk,
              held,
              resolve,
              // No room in time (the chunks before it are slow to come): keep nothing more of
              // this chunk; it is read back from its blob when its turn comes.
              timer: setTimeout(() => {
                this.#letGo(waiter);
                this.#unhold(held);
              }, this.holdWaitMs),
            };
            this.#waiters.push(waiter);
          });
        }
        return undefined;
      },
    };
    return {
      digests: sink,
      commit: (blobKey, readBack) => {
        if (entry.dropped || entry.held.get(chunk) !== held) return;
        entry.activeAt = performance.now();
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
            held.feeding = true;
            // `update` copies what it is given before it returns, so each block goes back to the
            // pool, and its bytes out of the budget (room for the chunks waiting), once fed. A
            // dropped entry has given the rest back, so nothing more is read from them.
            while (held.pieces && held.pieces.length > 0) {
              if (entry.dropped) return;
              const block = held.pieces.shift()!;
              const used = held.pieces.length === 0 ? held.fill : block.length;
              const room = entry.digests.update(block.subarray(0, used));
              held.bytes -= used;
              this.#heldBytes -= used;
              this.#blocks.give([block]);
              this.#wake();
              await room;
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
          this.#wake();
        }
      } catch {
        // A chunk that cannot be read back: completion reads the parts and reports the failure.
        this.#drop(mediaId);
      } finally {
        entry.advancing = undefined;
        this.#wake();
        // The prefix grew off the callers' paths: save it for the other nodes.
        if (!entry.dropped) void this.persist(mediaId);
      }
    })();
    const running = entry.advancing;
    this.#advancing.add(running);
    void running.finally(() => this.#advancing.delete(running));
  }

  /**
   * Whether chunk `chunk` of `entry`, ahead of the prefix, should wait for room before its next
   * piece: only while the chunks before it are being hashed, which frees held bytes soon.
   */
  #mustWait(entry: Entry, chunk: number): boolean {
    return !entry.dropped && chunk > entry.next && this.#moving(entry);
  }

  /**
   * The entry's prefix is growing: the chunk it expects next streams into its digests or is held
   * (in flight or stored), or held chunks are being fed to the digests.
   */
  #moving(entry: Entry): boolean {
    return entry.streaming !== undefined || entry.advancing !== undefined || entry.held.has(entry.next);
  }

  /**
   * Lets waiting chunks go on, in arrival order: those with room for their next piece, and those
   * that no longer need to wait (now next in line, or their prefix stopped moving).
   */
  #wake(): void {
    if (this.#waiters.length === 0) return;
    let reserved = 0;
    for (const waiter of [...this.#waiters]) {
      if (!waiter.held.pieces || !this.#mustWait(waiter.entry, waiter.chunk)) {
        this.#letGo(waiter);
      } else if (this.#heldBytes + reserved + HOLD_HEADROOM_BYTES <= this.heldBudget) {
        reserved += HOLD_HEADROOM_BYTES;
        this.#letGo(waiter);
      }
    }
  }

  #letGo(waiter: Waiter): void {
    const at = this.#waiters.indexOf(waiter);
    if (at < 0) return;
    this.#waiters.splice(at, 1);
    clearTimeout(waiter.timer);
    waiter.resolve();
  }

  /**
   * Frees held bytes for `needed` more: stored chunks of other uploads, least recently active
   * first (an upload abandoned half way holds its chunks until it is removed), will be read back
   * from their blobs instead. Uploads whose prefix grows, and that were active within
   * `holdWaitMs`, are left alone: they free their held bytes soon by themselves.
   */
  #spill(except: Entry, needed: number): void {
    const stale = performance.now() - this.holdWaitMs;
    for (const entry of this.#entries.values()) {
      if (entry === except || (this.#moving(entry) && entry.activeAt > stale)) continue;
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
    entry.activeAt = performance.now();
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
    this.#wake();
  }

  #drop(mediaId: number): void {
    const entry = this.#entries.get(mediaId);
    if (!entry) return;
    this.#entries.delete(mediaId);
    entry.dropped = true;
    this.#release(entry);
    entry.digests.dispose();
    this.#wake();
  }
}
