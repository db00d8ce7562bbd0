import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, type FileHandle, mkdir, open, opendir, rename, rm, rmdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type BlobConsumer, throughConsumer } from "./blob-consumer.js";
import type { BlobListEntry, BlobRange, BlobStore } from "./blob-store.js";
import {
  assertValidBlobKey,
  assertValidBlobPrefix,
  assertValidRange,
  BlobNotFoundError,
  BlobStoreUnavailableError,
  unsatisfiableRange,
} from "./blob-validation.js";
import {
  AlignedBufferPool,
  COPY_OUT,
  DIRECT_ALIGNMENT,
  DIRECT_READ_FLAGS,
  DIRECT_WRITE_BUFFER_BYTES,
  DIRECT_WRITE_FLAGS,
  directReadStream,
  writeDirect,
} from "./direct-io.js";

/** Directory the local blob store uses when config names none. */
export const DEFAULT_LOCAL_BLOB_DIR = "./data/blobs";

// Key "media/1/part-0" is the file "<dir>/media/1/part-0.blob". The suffix keeps a key and a
// deeper key ("media/1" and "media/1/x") from fighting over one path as file and directory.
const FILE_SUFFIX = ".blob";
// Through the page cache, reads of 256 KiB and writes gathered up to 1 MiB: far fewer system calls
// and thread-pool round trips than 64 KiB (each 4 MiB chunk was dozens of serial waits), still a
// small, bounded buffer.
const READ_CHUNK_BYTES = 256 * 1024;
const WRITE_BUFFER_BYTES = 1024 * 1024;
const OPEN_ATTEMPTS = 4;
// Aligned buffers for direct I/O, shared by every local store of the process: 32 of 512 KiB for
// writes, 48 of 1 MiB for reads (a slow download holds its buffers for as long as it lasts, so
// readers never take the writers' buffers). Beyond that, the page cache is used, at several times
// the CPU per byte on virtual machines (ADR 0016). A read waits for each block it reads, so reads
// keep the larger block.
const writeBuffers = new AlignedBufferPool(32, DIRECT_WRITE_BUFFER_BYTES);
const readBuffers = new AlignedBufferPool(48);

/**
 * Buffers for one direct write or read from `pool`: two while more than half the pool is free, else
 * one. With two, a write writes one while the other fills, and a read reads the next block while the
 * current one is handed over; with one, the body waits while its buffer is written, and a block is
 * read only once the last one is used. So of a pool of n buffers, n/4 transfers take two each and
 * n/2 more take one each: 24 writes (in 16 MiB) and 36 reads (in 48 MiB) at once stay direct.
 */
function takeDirectBuffers(pool: AlignedBufferPool): Buffer[] | undefined {
  return pool.available > pool.size / 2 ? pool.acquire(2) : pool.acquire(1);
}

/**
 * Blob store on the local file system under one directory. Writes go to a dot-named temporary
 * file in the target's directory, are fsynced, then renamed into place, so a crash never leaves a
 * partial blob under a key (only an unlisted temporary file, which `sweepTemporaryFiles` removes
 * later). Empty directories are pruned on delete. Folders are created 0700 and files 0600.
 */
export class LocalBlobStore implements BlobStore {
  readonly kind = "local";
  readonly #root: string;
  readonly #directIo: boolean;
  #directProbe: Promise<boolean> | undefined;

  /**
   * Stores blobs under `dir` (created on first write), resolved against the working directory.
   * With `directIo` (the default) blobs are written and read with O_DIRECT where the file system
   * allows it.
   */
  constructor(dir: string = DEFAULT_LOCAL_BLOB_DIR, options: { directIo?: boolean } = {}) {
    this.#root = resolve(dir);
    this.#directIo = options.directIo ?? true;
  }

  /** See BlobStore.check: the folder exists (or can be created) and is writable. */
  async check(): Promise<void> {
    try {
      await mkdir(this.#root, { recursive: true, mode: 0o700 });
      await access(this.#root, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      throw new BlobStoreUnavailableError(`The blob folder ${this.#root} is not writable (${code}).`, true);
    }
  }

  /** See BlobStore.put; the temporary file is removed if `body` or the write fails. */
  async put(key: string, body: Readable): Promise<{ bytes: number }> {
    assertValidBlobKey(key);
    const target = this.#pathOf(key);
    const dir = dirname(target);
    const temp = join(dir, `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
    const buffers = (await this.usesDirectIo()) ? takeDirectBuffers(writeBuffers) : undefined;
    try {
      const bytes = buffers
        ? await writeDirectFile(dir, temp, body, buffers)
        : await writeBufferedFile(dir, temp, body);
      await rename(temp, target).catch(async (error) => {
        await rm(temp, { force: true });
        throw error;
      });
      await syncDirectory(dir);
      return { bytes };
    } finally {
      if (buffers) writeBuffers.release(buffers);
    }
  }

  /**
   * Whether this store reads and writes with direct I/O: asked for, and the file system accepted a
   * direct write of one block on the first try (some network file systems refuse O_DIRECT).
   */
  usesDirectIo(): Promise<boolean> {
    if (!this.#directIo || DIRECT_WRITE_FLAGS === undefined) return Promise.resolve(false);
    this.#directProbe ??= probeDirectIo(this.#root);
    return this.#directProbe;
  }

  /** See BlobStore.get. */
  get(key: string, range?: BlobRange): Promise<Readable> {
    return this.#read(key, range, undefined);
  }

  /**
   * See BlobStore.getThrough. With direct I/O, `consumer` is handed views of the read's aligned
   * buffer (no copy); through the page cache, the stream's own buffers.
   */
  getThrough(key: string, range: BlobRange | undefined, consumer: BlobConsumer): Promise<Readable> {
    return this.#read(key, range, consumer);
  }

  async #read(key: string, range: BlobRange | undefined, consumer: BlobConsumer | undefined) {
    assertValidBlobKey(key);
    if (range) assertValidRange(range);
    const buffers = (await this.usesDirectIo()) ? takeDirectBuffers(readBuffers) : undefined;
    let handle: FileHandle;
    try {
      handle = await open(this.#pathOf(key), buffers ? DIRECT_READ_FLAGS! : "r");
    } catch (error) {
      if (buffers) readBuffers.release(buffers);
      if (isMissing(error)) throw new BlobNotFoundError(key);
      throw error;
    }
    try {
      const size = buffers || range ? (await handle.stat()).size : 0;
      if (range && range.start >= size) throw unsatisfiableRange(key, range.start, size);
      const start = range?.start ?? 0;
      const end = range ? Math.min(range.end + 1, size) : size;
      if (buffers)
        return directReadStream(handle, start, end, buffers, consumer ?? COPY_OUT, () =>
          readBuffers.release(buffers),
        );
      const stream = handle.createReadStream(
        range
          ? { start, end: end - 1, highWaterMark: READ_CHUNK_BYTES }
          : { highWaterMark: READ_CHUNK_BYTES },
      );
      return consumer ? throughConsumer(stream, consumer) : stream;
    } catch (error) {
      if (buffers) readBuffers.release(buffers);
      await handle.close();
      throw error;
    }
  }

  /** See BlobStore.delete; also removes directories the deletion left empty. */
  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    const path = this.#pathOf(key);
    await rm(path, { force: true });
    await this.#pruneFrom(dirname(path));
  }

  /**
   * See BlobStore.sweepTemporaryFiles: removes the dot-named `.tmp` files of writes (`put`, the
   * direct I/O probe) last modified before `olderThan` anywhere under the store's directory, and
   * the directories that leaves empty. A write in progress keeps its file's time fresh, and a
   * finished one has renamed it, so only a write a crash interrupted leaves one this old.
   */
  async sweepTemporaryFiles(olderThan: Date): Promise<number> {
    let removed = 0;
    const sweep = async (dir: string): Promise<void> => {
      let entries: Awaited<ReturnType<typeof opendir>>;
      try {
        entries = await opendir(dir);
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      let removedHere = false;
      for await (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await sweep(path);
        else if (entry.isFile() && entry.name.startsWith(".") && entry.name.endsWith(".tmp")) {
          const info = await stat(path).catch(() => undefined);
          if (!info || info.mtime.getTime() >= olderThan.getTime()) continue;
          await rm(path, { force: true });
          removed++;
          removedHere = true;
        }
      }
      if (removedHere) await this.#pruneFrom(dir);
    };
    await sweep(this.#root);
    return removed;
  }

  /** Removes `dir` and its parents up to the root while they are empty. */
  async #pruneFrom(dir: string): Promise<void> {
    for (; dir !== this.#root && dir.startsWith(this.#root); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        break; // not empty (or already gone): nothing further up can be empty because of us
      }
    }
  }

  /** See BlobStore.exists. */
  async exists(key: string): Promise<boolean> {
    assertValidBlobKey(key);
    try {
      return (await stat(this.#pathOf(key))).isFile();
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** See BlobStore.list; walks only the directory the prefix points into. */
  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    assertValidBlobPrefix(prefix);
    const slash = prefix.lastIndexOf("/");
    const baseKey = slash === -1 ? "" : prefix.slice(0, slash);
    yield* this.#walk(baseKey, prefix);
  }

  /** Nothing to release: every operation opens and closes its own handles. */
  async close(): Promise<void> {}

  async *#walk(dirKey: string, prefix: string): AsyncGenerator<BlobListEntry> {
    let dir: Awaited<ReturnType<typeof opendir>>;
    try {
      dir = await opendir(dirKey === "" ? this.#root : join(this.#root, ...dirKey.split("/")));
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    for await (const entry of dir) {
      if (entry.name.startsWith(".")) continue; // temporary files of writes in progress
      const childKey = dirKey === "" ? entry.name : `${dirKey}/${entry.name}`;
      if (entry.isDirectory()) {
        if (`${childKey}/`.startsWith(prefix) || prefix.startsWith(`${childKey}/`))
          yield* this.#walk(childKey, prefix);
      } else if (entry.isFile() && entry.name.endsWith(FILE_SUFFIX)) {
        const key = childKey.slice(0, -FILE_SUFFIX.length);
        if (!key.startsWith(prefix)) continue;
        try {
          const info = await stat(join(this.#root, ...childKey.split("/")));
          yield { key, bytes: info.size, modifiedAt: info.mtime };
        } catch (error) {
          if (!isMissing(error)) throw error; // deleted while listing
        }
      }
    }
  }

  #pathOf(key: string): string {
    return join(this.#root, ...key.split("/")) + FILE_SUFFIX;
  }
}

/** Writes `body` to the new file `temp` through the page cache, fsynced; resolves with its size. */
async function writeBufferedFile(dir: string, temp: string, body: Readable): Promise<number> {
  const handle = await openNewFile(dir, temp, "wx");
  // flush: fsync before close, so the rename never publishes unwritten data. While one write is
  // in flight the stream queues up to WRITE_BUFFER_BYTES and sends them as one writev.
  const out = handle.createWriteStream({ flush: true, highWaterMark: WRITE_BUFFER_BYTES });
  try {
    await pipeline(body, out);
    return out.bytesWritten;
  } catch (error) {
    out.destroy();
    await rm(temp, { force: true });
    throw error;
  }
}

/** Writes `body` to the new file `temp` with direct I/O, fsynced; resolves with its size. */
async function writeDirectFile(dir: string, temp: string, body: Readable, buffers: Buffer[]) {
  const handle = await openNewFile(dir, temp, DIRECT_WRITE_FLAGS!);
  try {
    const bytes = await writeDirect(handle, body, buffers);
    await handle.sync();
    return bytes;
  } catch (error) {
    body.destroy();
    await rm(temp, { force: true });
    throw error;
  } finally {
    await handle.close();
  }
}

/** Writes one aligned block with direct I/O to a scratch file under `root`; false if that fails. */
async function probeDirectIo(root: string): Promise<boolean> {
  const path = join(root, `.direct-io-probe.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await mkdir(root, { recursive: true, mode: 0o700 });
    const handle = await open(path, DIRECT_WRITE_FLAGS!, 0o600);
    try {
      await handle.write(writeBuffers.zeroBlock(), 0, DIRECT_ALIGNMENT, 0);
    } finally {
      await handle.close();
    }
    return true;
  } catch {
    return false;
  } finally {
    await rm(path, { force: true }).catch(() => {});
  }
}

async function openNewFile(dir: string, path: string, flags: string | number): Promise<FileHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await open(path, flags, 0o600);
    } catch (error) {
      // The directory is missing (first blob in it, or a concurrent delete pruned it): create it
      // and try again. Opening first saves a mkdir round trip on every other write.
      if (!isMissing(error) || attempt >= OPEN_ATTEMPTS) throw error;
    }
    const first = await mkdir(dir, { recursive: true, mode: 0o700 });
    // The new folders' own entries must survive a crash too (put syncs only the innermost one).
    if (first) {
      for (let created = dir; ; created = dirname(created)) {
        await syncDirectory(dirname(created));
        if (created === first || dirname(created) === created) break;
      }
    }
  }
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename durable; some platforms cannot fsync a directory, which only weakens that.
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // best effort
  } finally {
    await handle?.close();
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}
