/**
 * Direct I/O (O_DIRECT) for the local blob store (ADR 0016). A blob is written once and read
 * rarely, so it gains nothing from the page cache; going around it saves the kernel's copy into
 * cache pages, and on virtual machines whose free memory goes back to the host, the far larger
 * cost of faulting those pages in (about 4 ms per MiB of CPU on Ferry's CI machines).
 *
 * O_DIRECT wants the buffer's address, the file offset and the length aligned to the device's
 * block size. Node has no aligned allocation, but a WebAssembly memory's buffer starts on a page
 * boundary, so the pools below hand out 1 MiB buffers carved from one. A write's final, partial
 * block is written padded with zeros and the file is then truncated to its real length; reads
 * start at the aligned block holding their first byte and hand on only the bytes asked for.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { finished, Readable } from "node:stream";
import { releaseOwned } from "../../shared/owned-buffers.js";
import type { BlobConsumer } from "./blob-consumer.js";

/** Alignment of every direct write's address, offset and length (covers 512 and 4096-byte blocks). */
export const DIRECT_ALIGNMENT = 4096;
/** Bytes per direct read or write. */
const DIRECT_BUFFER_BYTES = 1024 * 1024;
/**
 * Bytes per buffer of a direct write. A write's two buffers take turns, so a block half the size of
 * a read's costs it no waiting, and the write pool holds 16 MiB, not 32.
 */
export const DIRECT_WRITE_BUFFER_BYTES = 512 * 1024;
const WASM_PAGE_BYTES = 64 * 1024;
// The most bytes of a read block handed to a consumer at once.
const PIECE_BYTES = 256 * 1024;

/** The open(2) flags of a new temporary blob file written with direct I/O; undefined where unsupported. */
export const DIRECT_WRITE_FLAGS: number | undefined =
  constants.O_DIRECT === undefined
    ? undefined
    : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;

/** The open(2) flags of a blob read with direct I/O; undefined where unsupported. */
export const DIRECT_READ_FLAGS: number | undefined =
  constants.O_DIRECT === undefined ? undefined : constants.O_RDONLY | constants.O_DIRECT;

/**
 * `size` page-aligned buffers of `bytes` each (1 MiB unless told; a multiple of 64 KiB), carved
 * from one WebAssembly memory reserved on first use, and a block of zeros. Pages become resident
 * only once a buffer is used, and the most recently returned buffers are lent first, so few ever do.
 */
export class AlignedBufferPool {
  #free: Buffer[] | undefined;
  #zeros: Buffer | undefined;

  constructor(
    readonly size: number,
    readonly bytes: number = DIRECT_BUFFER_BYTES,
  ) {
    if (bytes <= 0 || bytes % WASM_PAGE_BYTES !== 0)
      throw new RangeError(`aligned buffers must be a multiple of ${WASM_PAGE_BYTES} bytes`);
  }

  /** How many buffers are free. */
  get available(): number {
    return this.#free?.length ?? this.size;
  }

  /** `count` buffers, or undefined (and none taken) when fewer are free. */
  acquire(count: number): Buffer[] | undefined {
    this.#allocate();
    if (this.#free!.length < count) return undefined;
    return this.#free!.splice(-count);
  }

  /** Gives buffers back; no read or write may still be using them. */
  release(buffers: Buffer[]): void {
    this.#free?.push(...buffers);
  }

  /** One aligned block of zeros, never lent out and never written: for probing a file system. */
  zeroBlock(): Buffer {
    this.#allocate();
    return this.#zeros!;
  }

  #allocate(): void {
    if (this.#free) return;
    const pages = (this.size * this.bytes) / WASM_PAGE_BYTES + 1;
    const { buffer } = new WebAssembly.Memory({ initial: pages, maximum: pages });
    this.#free = [];
    for (let i = this.size - 1; i >= 0; i--) this.#free.push(Buffer.from(buffer, i * this.bytes, this.bytes));
    this.#zeros = Buffer.from(buffer, this.size * this.bytes, DIRECT_ALIGNMENT);
  }
}

/**
 * Writes all of `body` to `handle` (opened with DIRECT_WRITE_FLAGS, empty) through one or two aligned
 * `buffers` of the same size: with two, one is written while the other fills; with one, the body
 * waits while it is written. Resolves with the byte count once every write has completed and the
 * file has its exact length; the caller still fsyncs (O_DIRECT does not flush the device's cache,
 * nor the file's size). On failure no write is left running on `buffers`.
 *
 * The body is read piece by piece as it is pushed ('data' events, paused while both buffers are
 * taken), not through its async iterator: that reads whatever the stream has buffered as one
 * `Buffer.concat` of it, a copy of every byte into freshly allocated memory before the copy into
 * the aligned buffer. A piece marked owned (`markOwned`) is freed once copied: the body's
 * producer handed it over.
 */
export function writeDirect(handle: FileHandle, body: Readable, buffers: Buffer[]): Promise<number> {
  const block = buffers[0]!.length;
  return new Promise<number>((resolve, reject) => {
    let current = 0;
    let filled = 0;
    let position = 0;
    let writing: Promise<void> | undefined;
    // Pieces (the first from `offset`) that found every buffer taken; the body is paused meanwhile.
    const waiting: Buffer[] = [];
    let offset = 0;
    let ended = false;
    let settled = false;

    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      body.off("data", onData);
      body.off("end", onEnd);
      body.pause();
      // No write may still be using `buffers` once the caller hears of the failure.
      Promise.resolve(writing)
        .catch(() => {})
        .then(() => reject(error));
    };
    // Starts writing the current buffer's first `length` bytes (no other write is running).
    const startWrite = (length: number) => {
      const write = writeFully(handle, buffers[current]!, length, position);
      writing = write;
      position += length;
      current = (current + 1) % buffers.length;
      filled = 0;
      write.then(() => {
        writing = undefined;
        if (settled) return;
        if (waiting.length > 0) {
          if (!drain()) return;
          if (!ended) body.resume();
        }
        if (ended) finish();
      }, fail);
    };
    // Copies the waiting pieces into the buffers; false when every one is taken again.
    const drain = (): boolean => {
      while (waiting.length > 0) {
        const piece = waiting[0]!;
        while (offset < piece.length) {
          if (filled === block) {
            if (writing) {
              body.pause();
              return false;
            }
            startWrite(block);
          }
          // A single buffer is being written: the piece waits for it.
          if (writing && buffers.length === 1) {
            body.pause();
            return false;
          }
          const copied = piece.copy(buffers[current]!, filled, offset);
          filled += copied;
          offset += copied;
        }
        waiting.shift();
        offset = 0;
        // Copied out: an owned piece (the encryption's output) is freed now, not at V8's next
        // collection (ADR 0047).
        releaseOwned(piece);
      }
      if (filled === block && !writing) startWrite(block);
      return true;
    };
    // Once the body has ended and every piece is copied: the last, padded block and the length.
    const finish = () => {
      if (settled || writing || waiting.length > 0) return;
      settled = true;
      void (async () => {
        const total = position + filled;
        if (filled > 0) {
          const padded = Math.ceil(filled / DIRECT_ALIGNMENT) * DIRECT_ALIGNMENT;
          buffers[current]!.fill(0, filled, padded);
          const last = writeFully(handle, buffers[current]!, padded, position);
          writing = last;
          position += padded;
          await last;
        }
        if (position !== total) await handle.truncate(total);
        return total;
      })().then(resolve, (error: unknown) => {
        settled = false;
        fail(error);
      });
    };
    function onData(piece: Buffer) {
      if (settled) return;
      waiting.push(piece);
      // Only the piece just pushed waits, unless every buffer was already taken.
      if (waiting.length === 1) drain();
    }
    function onEnd() {
      ended = true;
      finish();
    }
    // Errors, including those of a body that failed before it was handed over.
    finished(body, { writable: false }, (error) => {
      if (error) fail(error);
    });
    body.on("data", onData);
    body.once("end", onEnd);
  });
}

async function writeFully(
  handle: FileHandle,
  buffer: Buffer,
  length: number,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await handle.write(buffer, done, length - done, position + done);
    if (bytesWritten <= 0) throw new Error("direct write made no progress");
    done += bytesWritten;
  }
}

/** A consumer that copies each piece out: what `get` streams, as buffers of their own. */
export const COPY_OUT: BlobConsumer = {
  update(bytes) {
    const piece = Buffer.allocUnsafe(bytes.length);
    bytes.copy(piece);
    return [piece];
  },
  final: () => [],
};

/** A block read into one of a read's buffers: its bytes `at`..`to` are still to be handed over. */
interface ReadBlock {
  buffer: Buffer;
  at: number;
  to: number;
}

/**
 * A stream of bytes `start` to `end` (exclusive) of the file `handle` (opened with
 * DIRECT_READ_FLAGS) run through `consumer` (see BlobConsumer): each block is read into a whole
 * aligned buffer of `buffers` and handed to `consumer.update` as views of up to 256 KiB, one view
 * per `read()` of the stream that yields output. With two buffers the next block is read while the
 * current one is handed over (a direct read has no read-ahead of the kernel's); with one, only once
 * all of the current one has been. Ends early if the file is shorter.
 *
 * A buffer is read into again only once every byte of its block has been handed over, and
 * `consumer` never keeps a view, so no byte still to be used is ever overwritten, whatever the
 * pace of the reader. One read at a time is in flight, and none is started once the stream is
 * destroyed. However the stream ends (read to the end, failed, or destroyed, even before its first
 * read), it waits for any read still in flight, then closes `handle` and calls `release`, once.
 */
export function directReadStream(
  handle: FileHandle,
  start: number,
  end: number,
  buffers: Buffer[],
  consumer: BlobConsumer,
  release: () => void,
): Readable {
  let block = start - (start % DIRECT_ALIGNMENT); // file offset of the next block to read
  let last = block >= end; // no block left to read
  const idle = [...buffers]; // buffers free to read into
  const ready: ReadBlock[] = []; // blocks read and not yet all handed over, in file order
  let reading: Promise<unknown> | undefined; // the read in flight, if any
  let ended = false;
  let pumping = false;
  let wanted = false;
  // Starts reading the next block into an idle buffer, unless a read is in flight or none is left.
  const readNext = (stream: Readable): void => {
    if (reading || last || idle.length === 0 || stream.destroyed) return;
    const buffer = idle.pop()!;
    const offset = block;
    reading = handle.read(buffer, 0, buffer.length, offset).then(
      ({ bytesRead }) => {
        reading = undefined;
        if (stream.destroyed) return;
        const at = Math.max(start - offset, 0);
        ready.push({ buffer, at, to: Math.max(Math.min(bytesRead, end - offset), at) });
        // Only the end of the file stops a read short of an aligned length; a short aligned read
        // (allowed, if unusual) continues where it stopped.
        block += bytesRead;
        last = block >= end || bytesRead === 0 || bytesRead % DIRECT_ALIGNMENT !== 0;
        readNext(stream);
        pull(stream);
      },
      (error: Error) => {
        reading = undefined;
        stream.destroy(error);
      },
    );
  };
  // Hands views to the consumer until one yields output; at the end of the blocks read, waits for
  // the read in flight, or ends.
  const pump = (stream: Readable): void => {
    for (let current = ready[0]; current; current = ready[0]) {
      while (current.at < current.to) {
        if (stream.destroyed) return;
        const view = current.buffer.subarray(current.at, Math.min(current.at + PIECE_BYTES, current.to));
        current.at += view.length;
        if (pushAll(stream, consumer.update(view))) return;
      }
      ready.shift();
      idle.push(current.buffer);
      readNext(stream);
    }
    if (reading) return;
    if (last) {
      ended = true;
      pushAll(stream, consumer.final());
      stream.push(null);
      return;
    }
    readNext(stream);
  };
  // A push can call read() again from inside pump (a reader in flowing mode): that call is only
  // noted, and served once the pushes before it are done, so output keeps its order.
  const pull = (stream: Readable): void => {
    if (pumping) {
      wanted = true;
      return;
    }
    pumping = true;
    try {
      do {
        wanted = false;
        if (ended || stream.destroyed) return;
        pump(stream);
      } while (wanted);
    } catch (error) {
      stream.destroy(error as Error);
    } finally {
      pumping = false;
    }
  };
  return new Readable({
    read() {
      pull(this);
    },
    destroy(error, callback) {
      Promise.resolve(reading)
        .then(() => handle.close())
        .catch(() => {}) // a close error changes nothing for the reader
        .finally(() => {
          release();
          callback(error);
        });
    },
  });
}

/** Pushes every non-empty buffer of `pieces`; whether there was one. */
function pushAll(stream: Readable, pieces: Buffer[]): boolean {
  let pushed = false;
  for (const piece of pieces) {
    if (piece.length === 0) continue;
    stream.push(piece);
    pushed = true;
  }
  return pushed;
}
