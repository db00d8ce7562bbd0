/**
 * SHA-256 and MD5 of an upload's plaintext (docs/internals/media.md, "Performance"), computed on a worker
 * thread so the request thread only copies bytes into batches: MD5 alone costs about 1.3 s per GiB
 * here, more than encrypting and writing the same bytes. One worker serves every upload of the
 * process; it is started on first use and holds the running hash state of each `Digests` by id.
 * The hashes are hash-wasm's, so a running state can be saved and continued elsewhere (ADR 0075).
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Final digests of a plaintext, lowercase hex. */
export interface PlaintextDigest {
  sha256: string;
  md5: string;
}

// Bytes copied into one message to the worker. A batch is shared by every upload of the process:
// it carries the pieces of several uploads one after another, each tagged with its upload, so 20
// uploads at once fill one batch rather than keeping 20 partly filled ones (10 MiB) between them.
const BATCH_BYTES = 512 * 1024;
// Bytes of one upload, and batches of all uploads together, that may be at the worker before
// `update` asks its caller to wait (back pressure, so memory stays bounded). The worker is one
// thread: a longer queue does not make it hash faster.
const MAX_BYTES_IN_FLIGHT = 4 * BATCH_BYTES;
const MAX_BATCHES_IN_FLIGHT_IN_ALL = 16;
// Batches handed back by the worker and kept for reuse, at most this many; with at most
// MAX_BATCHES_IN_FLIGHT_IN_ALL at the worker and one filling, few are ever allocated afresh.
const MAX_POOLED_BATCHES = 8;

// Eval'd CommonJS, so the worker needs no TypeScript loader (the server runs through tsx). The
// hashes are hash-wasm's, whose running state can be saved and loaded (ADR 0075): one MD5 and one
// SHA-256 hasher serve every upload, each upload's state loaded before its bytes and saved after.
// Messages are handled one after another (the hashers are created asynchronously at start).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const states = new Map();
let handle;
if (!workerData.resumable) {
  // Native hashes: the fastest, but their running state cannot leave the process.
  const { createHash } = require("node:crypto");
  const fresh = () => ({ sha256: createHash("sha256"), md5: createHash("md5"), mark: undefined });
  handle = (m) => {
    if (m.op === "update") {
      // m.pieces: upload id and byte count of each piece, in the order they fill m.buf.
      for (let i = 0, at = 0; i < m.pieces.length; i += 2) {
        const id = m.pieces[i];
        const len = m.pieces[i + 1];
        let s = states.get(id);
        if (!s) states.set(id, (s = fresh()));
        const bytes = Buffer.from(m.buf, at, len);
        at += len;
        if (s.broken) continue;
        s.sha256.update(bytes);
        s.md5.update(bytes);
      }
      parentPort.postMessage({ op: "ack", buf: m.buf }, [m.buf]);
    } else if (m.op === "load") {
      states.set(m.id, { ...fresh(), broken: "this process keeps no resumable digest state" });
    } else if (m.op === "save") {
      parentPort.postMessage({ op: "saved", id: m.id, error: "this process keeps no resumable digest state" });
    } else if (m.op === "mark") {
      let s = states.get(m.id);
      if (!s) states.set(m.id, (s = fresh()));
      if (!s.broken) s.mark = { sha256: s.sha256.copy(), md5: s.md5.copy() };
    } else if (m.op === "rewind") {
      const s = states.get(m.id);
      if (s?.mark) {
        s.sha256 = s.mark.sha256.copy();
        s.md5 = s.mark.md5.copy();
      } else if (!s?.broken) states.set(m.id, fresh());
    } else if (m.op === "digest") {
      const s = states.get(m.id) ?? fresh();
      states.delete(m.id);
      if (s.broken) return parentPort.postMessage({ op: "digest", id: m.id, error: s.broken });
      parentPort.postMessage({ op: "digest", id: m.id, sha256: s.sha256.digest("hex"), md5: s.md5.digest("hex") });
    } else if (m.op === "drop") {
      states.delete(m.id);
    }
  };
  parentPort.on("message", (m) => handle(m));
} else {
  const { createMD5, createSHA256 } = require(workerData.hashWasm);
  let md5, sha256, empty;
  const fresh = () => ({ md5: empty.md5, sha256: empty.sha256, mark: undefined });
  handle = (m) => {
    if (m.op === "update") {
      for (let i = 0, at = 0; i < m.pieces.length; i += 2) {
        const id = m.pieces[i];
        const len = m.pieces[i + 1];
        let s = states.get(id);
        if (!s) states.set(id, (s = fresh()));
        const bytes = new Uint8Array(m.buf, at, len);
        at += len;
        if (s.broken) continue;
        s.md5 = md5.load(s.md5).update(bytes).save();
        s.sha256 = sha256.load(s.sha256).update(bytes).save();
      }
      parentPort.postMessage({ op: "ack", buf: m.buf }, [m.buf]);
    } else if (m.op === "load") {
      // A saved state from another process: one of another hash-wasm build does not load, and the
      // digests of this upload then fail (their caller starts again from the first byte).
      try {
        md5.load(m.md5);
        sha256.load(m.sha256);
        states.set(m.id, { md5: m.md5, sha256: m.sha256, mark: undefined });
      } catch (error) {
        states.set(m.id, { ...fresh(), broken: String(error?.message ?? error) });
      }
    } else if (m.op === "save") {
      const s = states.get(m.id) ?? fresh();
      if (s.broken) parentPort.postMessage({ op: "saved", id: m.id, error: s.broken });
      else parentPort.postMessage({ op: "saved", id: m.id, md5: s.md5, sha256: s.sha256 });
    } else if (m.op === "mark") {
      let s = states.get(m.id);
      if (!s) states.set(m.id, (s = fresh()));
      s.mark = { md5: s.md5, sha256: s.sha256 };
    } else if (m.op === "rewind") {
      const s = states.get(m.id);
      if (s?.mark) {
        s.md5 = s.mark.md5;
        s.sha256 = s.mark.sha256;
      } else states.set(m.id, fresh());
    } else if (m.op === "digest") {
      const s = states.get(m.id) ?? fresh();
      states.delete(m.id);
      if (s.broken) return parentPort.postMessage({ op: "digest", id: m.id, error: s.broken });
      const reply = {
        op: "digest",
        id: m.id,
        md5: md5.load(s.md5).digest("hex"),
        sha256: sha256.load(s.sha256).digest("hex"),
      };
      md5.init();
      sha256.init();
      parentPort.postMessage(reply);
    } else if (m.op === "drop") {
      states.delete(m.id);
    }
  };
  // Messages are handled one after another (the hashers are created asynchronously at start).
  let queue = Promise.all([createMD5(), createSHA256()]).then(([m, s]) => {
    md5 = m;
    sha256 = s;
    empty = { md5: md5.init().save(), sha256: sha256.init().save() };
  });
  parentPort.on("message", (m) => {
    queue = queue.then(() => handle(m));
    queue.catch((error) => { throw error; });
  });
}
`;

/** The running state of a `Digests`, saved to be continued by another process (ADR 0075). */
export interface SavedDigests {
  md5: Uint8Array;
  sha256: Uint8Array;
}

const HASH_WASM = createRequire(import.meta.url).resolve("hash-wasm");

/** Whether the worker hashes with resumable (hash-wasm) or native hashes; see useResumableDigests. */
let resumable = false;

/**
 * Chooses the process's hashes before the first upload (the media feature does, from
 * UPLOAD_DIGEST_STATE): resumable ones can `save()` their state for another node (ADR 0075) at
 * about 5x the CPU of native SHA-256; native ones cannot, and `save()` then rejects.
 */
export function useResumableDigests(on: boolean): void {
  // A worker already running keeps its hashes (several Ferry instances in one process, as tests
  // run them, share it); either kind gives the same digests, only `save()` differs.
  if (!host?.started) resumable = on;
}

type WorkerReply =
  | { op: "ack"; buf: ArrayBuffer }
  | { op: "digest"; id: number; sha256: string; md5: string; error?: undefined }
  | { op: "digest"; id: number; error: string }
  | { op: "saved"; id: number; md5: Uint8Array; sha256: Uint8Array; error?: undefined }
  | { op: "saved"; id: number; error: string };

/** What the host tracks for one live `Digests`. */
interface Route {
  /** Bytes of this upload sent to the worker and not yet acknowledged. */
  inFlight: number;
  /** Resolve the callers of `update` waiting for room. */
  wakers: (() => void)[];
  /** Settles `digest()`. */
  done: { resolve(d: PlaintextDigest): void; reject(e: Error): void } | undefined;
  /** Settle the `save()` calls awaiting the worker's answer, in the order they were sent. */
  saves: { resolve(d: SavedDigests): void; reject(e: Error): void }[];
  error: Error | undefined;
}

/** The process's digest worker: started lazily, replaced after a crash, kept alive only while awaited. */
class DigestWorkerHost {
  #worker: Worker | undefined;

  /** True once the worker runs (its hashes are chosen). */
  get started(): boolean {
    return this.#worker !== undefined;
  }
  #nextId = 1;
  readonly #routes = new Map<number, Route>();
  readonly #pool: ArrayBuffer[] = [];
  // The batch being filled, its bytes used, and the id and byte count of each piece in it.
  #batch: ArrayBuffer | undefined;
  #fill = 0;
  #pieces: number[] = [];
  // For each batch at the worker, in the order sent (the worker answers in order), its pieces.
  readonly #sent: number[][] = [];
  // Batches at the worker, of every upload; and the routes whose `update` waits for room, in the
  // order they began to wait.
  #inFlight = 0;
  readonly #waiting: Route[] = [];
  // Replies still expected; the worker keeps the process alive only while this is above zero.
  #awaited = 0;
  readonly #finalizer = new FinalizationRegistry<number>((id) => this.drop(id));

  open(owner: object): { id: number; route: Route } {
    const id = this.#nextId++;
    const route: Route = { inFlight: 0, wakers: [], done: undefined, saves: [], error: undefined };
    this.#routes.set(id, route);
    // An abandoned Digests (a failed upload nobody disposed) still frees its worker-side state.
    this.#finalizer.register(owner, id, owner);
    return { id, route };
  }

  /** Copies `chunk` into the shared batch as bytes of upload `id`, sending each batch it fills. */
  append(id: number, chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length) {
      this.#batch ??= this.#pool.pop() ?? new ArrayBuffer(BATCH_BYTES);
      const n = Math.min(chunk.length - offset, BATCH_BYTES - this.#fill);
      new Uint8Array(this.#batch, this.#fill, n).set(chunk.subarray(offset, offset + n));
      this.#fill += n;
      offset += n;
      const last = this.#pieces.length - 2;
      if (last >= 0 && this.#pieces[last] === id) this.#pieces[last + 1]! += n;
      else this.#pieces.push(id, n);
      if (this.#fill === BATCH_BYTES) this.flush();
    }
  }

  /** Sends the batch being filled, if it holds anything (before a message that must follow its bytes). */
  flush(): void {
    if (this.#fill === 0) return;
    const buf = this.#batch!;
    const pieces = this.#pieces;
    this.#batch = undefined;
    this.#fill = 0;
    this.#pieces = [];
    for (let i = 0; i < pieces.length; i += 2) {
      const route = this.#routes.get(pieces[i]!);
      if (route) route.inFlight += pieces[i + 1]!;
    }
    this.#sent.push(pieces);
    this.#inFlight++;
    const worker = this.#ensure();
    this.#expect(1);
    worker.postMessage({ op: "update", buf, pieces }, [buf]);
  }

  digest(id: number, owner: object): Promise<PlaintextDigest> {
    const route = this.#routes.get(id)!;
    this.#finalizer.unregister(owner);
    if (route.error) {
      this.#routes.delete(id);
      return Promise.reject(route.error);
    }
    return new Promise((resolve, reject) => {
      route.done = { resolve, reject };
      this.flush();
      const worker = this.#ensure();
      this.#expect(1);
      worker.postMessage({ op: "digest", id });
    });
  }

  /** The running state of upload `id` after every byte fed so far. */
  save(id: number): Promise<SavedDigests> {
    const route = this.#routes.get(id)!;
    if (route.error) return Promise.reject(route.error);
    return new Promise((resolve, reject) => {
      route.saves.push({ resolve, reject });
      this.flush();
      const worker = this.#ensure();
      this.#expect(1);
      worker.postMessage({ op: "save", id });
    });
  }

  /** Replaces the running state of upload `id` by a saved one (before any byte is fed). */
  load(id: number, saved: SavedDigests): void {
    this.flush();
    this.#ensure().postMessage({ op: "load", id, md5: saved.md5, sha256: saved.sha256 });
  }

  drop(id: number): void {
    const route = this.#routes.get(id);
    if (!route) return;
    this.#routes.delete(id);
    // A `save` still awaiting the worker gets no answer once the route is gone.
    for (const save of route.saves.splice(0)) save.reject(new Error("digests dropped"));
    // A caller of `update` waiting for room goes on (its later updates are no-ops); no ack would
    // wake it once the route is gone, and it would hold what it was feeding for good.
    this.#wake(route);
    // Its bytes still in the batch go first, so the worker's state for it is created before the drop.
    this.flush();
    this.#worker?.postMessage({ op: "drop", id });
  }

  /** Whether a caller that has just fed bytes on `route` should wait for room. */
  full(route: Route): boolean {
    return route.inFlight >= MAX_BYTES_IN_FLIGHT || this.#inFlight >= MAX_BATCHES_IN_FLIGHT_IN_ALL;
  }

  /** Waits until `route` has room again (or is dropped, or the worker fails). */
  wait(route: Route): Promise<void> {
    return new Promise((resolve) => {
      if (route.wakers.push(resolve) === 1) this.#waiting.push(route);
    });
  }

  #wake(route: Route): void {
    const at = this.#waiting.indexOf(route);
    if (at >= 0) this.#waiting.splice(at, 1);
    for (const wake of route.wakers.splice(0)) wake();
  }

  /**
   * Wakes waiting routes in the order they began to wait, one per batch of room in all, skipping
   * those still at their own cap; once the worker has nothing left, every one that may go on.
   */
  #wakeWaiting(): void {
    let room =
      this.#inFlight === 0 ? Number.POSITIVE_INFINITY : MAX_BATCHES_IN_FLIGHT_IN_ALL - this.#inFlight;
    for (let i = 0; i < this.#waiting.length && room > 0; ) {
      const route = this.#waiting[i]!;
      if (route.inFlight >= MAX_BYTES_IN_FLIGHT) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      for (const wake of route.wakers.splice(0)) wake();
      room--;
    }
  }

  /** Sends a message that has no reply (`mark`, `rewind`); ordered after the updates sent before it. */
  notify(id: number, op: "mark" | "rewind"): void {
    this.flush();
    this.#ensure().postMessage({ op, id });
  }

  unregister(owner: object): void {
    this.#finalizer.unregister(owner);
  }

  #ensure(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      name: "ferry-digests",
      workerData: { hashWasm: HASH_WASM, resumable },
    });
    worker.on("message", (reply: WorkerReply) => this.#onReply(reply));
    const fail = (error: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#awaited = 0;
      this.#inFlight = 0;
      this.#sent.length = 0;
      // Bytes not sent yet belong to the failed uploads: none of them reaches a new worker.
      this.#fill = 0;
      this.#pieces = [];
      for (const route of this.#routes.values()) {
        route.error ??= error;
        route.inFlight = 0;
        this.#wake(route);
        route.done?.reject(error);
        route.done = undefined;
        for (const save of route.saves.splice(0)) save.reject(error);
      }
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`digest worker exited with code ${code}`)));
    worker.unref(); // until a reply is awaited (see #expect)
    this.#worker = worker;
    return worker;
  }

  #expect(n: number): void {
    const before = this.#awaited;
    this.#awaited += n;
    if (before === 0 && this.#awaited > 0) this.#worker?.ref();
    if (before > 0 && this.#awaited === 0) this.#worker?.unref();
  }

  #onReply(reply: WorkerReply): void {
    this.#expect(-1);
    if (reply.op === "ack") {
      if (this.#pool.length < MAX_POOLED_BATCHES) this.#pool.push(reply.buf);
      this.#inFlight--;
      const pieces = this.#sent.shift() ?? [];
      for (let i = 0; i < pieces.length; i += 2) {
        const route = this.#routes.get(pieces[i]!);
        if (route) route.inFlight -= pieces[i + 1]!;
      }
      this.#wakeWaiting();
      return;
    }
    if (reply.op === "saved") {
      const save = this.#routes.get(reply.id)?.saves.shift();
      if (reply.error !== undefined)
        save?.reject(new Error(`saved digest state did not load: ${reply.error}`));
      else save?.resolve({ md5: reply.md5, sha256: reply.sha256 });
      return;
    }
    const route = this.#routes.get(reply.id);
    this.#routes.delete(reply.id);
    if (reply.error !== undefined)
      route?.done?.reject(new Error(`saved digest state did not load: ${reply.error}`));
    else route?.done?.resolve({ sha256: reply.sha256, md5: reply.md5 });
  }
}

let host: DigestWorkerHost | undefined;

/**
 * Running SHA-256 and MD5 of one plaintext, fed in order. `update` copies the bytes (the caller
 * may reuse its buffer at once) and returns a promise when the caller should wait before feeding
 * more. `digest` finishes once; `dispose` abandons without a result. Both make later updates no-ops.
 */
export class Digests {
  readonly #id: number;
  readonly #route: Route;
  #closed = false;

  /** Digests of an empty plaintext, or continuing from `saved` (see `save`). */
  constructor(saved?: SavedDigests) {
    host ??= new DigestWorkerHost();
    const { id, route } = host.open(this);
    this.#id = id;
    this.#route = route;
    if (saved) host.load(id, saved);
  }

  /**
   * The running state after every byte fed so far, to be continued by `new Digests(state)`
   * here or in another process of the same build. Rejects if the worker failed.
   */
  save(): Promise<SavedDigests> {
    if (this.#closed) return Promise.reject(new Error("digests already finished"));
    return host!.save(this.#id);
  }

  /**
   * Adds `chunk`; when this upload's bytes at the worker, or all uploads' batches there, are at
   * their cap, returns a promise that resolves once there is room again.
   */
  update(chunk: Uint8Array): Promise<void> | undefined {
    if (this.#closed || this.#route.error) return undefined;
    host!.append(this.#id, chunk);
    return host!.full(this.#route) ? host!.wait(this.#route) : undefined;
  }

  /**
   * Remembers the running state (one checkpoint; a new one replaces it), so `rewind` can forget
   * whatever is fed after this point: the bytes of a chunk that failed, or a chunk sent again.
   */
  checkpoint(): void {
    if (this.#closed || this.#route.error) return;
    host!.notify(this.#id, "mark");
  }

  /** Returns to the last checkpoint (to the empty state when there is none); the checkpoint stays. */
  rewind(): void {
    if (this.#closed || this.#route.error) return;
    host!.notify(this.#id, "rewind");
  }

  /** The digests of everything fed so far. Rejects if the worker failed; call at most once. */
  digest(): Promise<PlaintextDigest> {
    if (this.#closed) return Promise.reject(new Error("digests already finished"));
    this.#closed = true;
    return host!.digest(this.#id, this);
  }

  /** Drops the running state without a result (a failed or superseded upload). */
  dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    host!.unregister(this);
    host!.drop(this.#id);
  }
}

/** Fresh digests of an empty plaintext, or continuing from a saved state. */
export function newDigests(saved?: SavedDigests): Digests {
  return new Digests(saved);
}
