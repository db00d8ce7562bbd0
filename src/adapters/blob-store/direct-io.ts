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
 * start at the aligned block holding their first byte and copy out only the bytes asked for.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";

/** Alignment of every direct write's address, offset and length (covers 512 and 4096-byte blocks). */
export const DIRECT_ALIGNMENT = 4096;
/** Bytes per direct read or write. */
const DIRECT_BUFFER_BYTES = 1024 * 1024;
const WASM_PAGE_BYTES = 64 * 1024;
const PIECE_BYTES = DIRECT_BUFFER_BYTES / 4;

/** The open(2) flags of a new temporary blob file written with direct I/O; undefined where unsupported. */
export const DIRECT_WRITE_FLAGS: number | undefined =
  constants.O_DIRECT === undefined
    ? undefined
    : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;

/** The open(2) flags of a blob read with direct I/O; undefined where unsupported. */
export const DIRECT_READ_FLAGS: number | undefined =
  constants.O_DIRECT === undefined ? undefined : constants.O_RDONLY | constants.O_DIRECT;

/**
 * `size` page-aligned buffers of DIRECT_BUFFER_BYTES, carved from one WebAssembly memory reserved
 * on first use, and a block of zeros. Pages become resident only once a buffer is used, and the
 * most recently returned buffers are lent first, so few ever do.
 */
export class AlignedBufferPool {
  #free: Buffer[] | undefined;
  #zeros: Buffer | undefined;

  constructor(readonly size: number) {}

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
    const pages = (this.size * DIRECT_BUFFER_BYTES) / WASM_PAGE_BYTES + 1;
    const { buffer } = new WebAssembly.Memory({ initial: pages, maximum: pages });
    this.#free = [];
    for (let i = this.size - 1; i >= 0; i--)
      this.#free.push(Buffer.from(buffer, i * DIRECT_BUFFER_BYTES, DIRECT_BUFFER_BYTES));
    this.#zeros = Buffer.from(buffer, this.size * DIRECT_BUFFER_BYTES, DIRECT_ALIGNMENT);
  }
}

/**
 * Writes all of `body` to `handle` (opened with DIRECT_WRITE_FLAGS, empty) through two aligned
 * `buffers`: one is written while the other fills. Resolves with the byte count once every write has
 * completed and the file has its exact length; the caller still fsyncs (O_DIRECT does not flush
 * the device's cache, nor the file's size). On failure no write is left running on `buffers`.
 */
export async function writeDirect(handle: FileHandle, body: Readable, buffers: Buffer[]): Promise<number> {
  let current = 0;
  let filled = 0;
  let position = 0;
  let writing: Promise<void> | undefined;
  // Starts writing the current buffer's first `length` bytes once the other buffer's write is done.
  const flush = async (length: number) => {
    await writing;
    writing = writeFully(handle, buffers[current]!, length, position);
    writing.catch(() => {}); // awaited at the next flush or below; never left unhandled meanwhile
    position += length;
    current ^= 1;
    filled = 0;
  };
  try {
    for await (const piece of body as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < piece.length) {
        const copied = piece.copy(buffers[current]!, filled, offset);
        filled += copied;
        offset += copied;
        if (filled === DIRECT_BUFFER_BYTES) await flush(DIRECT_BUFFER_BYTES);
      }
    }
    const total = position + filled;
    if (filled > 0) {
      const padded = Math.ceil(filled / DIRECT_ALIGNMENT) * DIRECT_ALIGNMENT;
      buffers[current]!.fill(0, filled, padded);
      await flush(padded);
    }
    await writing;
    if (position !== total) await handle.truncate(total);
    return total;
  } finally {
    await writing?.catch(() => {});
  }
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

/**
 * Bytes `start` to `end` (exclusive) of the file `handle` (opened with DIRECT_READ_FLAGS), read
 * through the aligned `buffer` in DIRECT_BUFFER_BYTES blocks, as copied pieces of up to 256 KiB
 * (the buffer is free again once the generator has finished). Ends early if the file is shorter.
 */
async function* readDirect(
  handle: FileHandle,
  start: number,
  end: number,
  buffer: Buffer,
): AsyncGenerator<Buffer> {
  let block = start - (start % DIRECT_ALIGNMENT);
  while (block < end) {
    const { bytesRead } = await handle.read(buffer, 0, DIRECT_BUFFER_BYTES, block);
    const from = Math.max(start - block, 0);
    const to = Math.min(bytesRead, end - block);
    // Copied out in pieces of at most a quarter of the block, so streams downstream hold less.
    for (let at = from; at < to; at += PIECE_BYTES) {
      const piece = Buffer.allocUnsafe(Math.min(PIECE_BYTES, to - at));
      buffer.copy(piece, 0, at, at + piece.length);
      yield piece;
    }
    // Only the end of the file stops a read short of an aligned length; a short aligned read
    // (allowed, if unusual) continues where it stopped.
    if (bytesRead === 0 || bytesRead % DIRECT_ALIGNMENT !== 0) return;
    block += bytesRead;
  }
}

/**
 * A stream of `readDirect(handle, start, end, buffer)`. However it ends (read to the end, failed,
 * or destroyed, even before its first read), it waits for any read still filling `buffer`, then
 * closes `handle` and calls `release`, once.
 */
export function directReadStream(
  handle: FileHandle,
  start: number,
  end: number,
  buffer: Buffer,
  release: () => void,
): Readable {
  const pieces = readDirect(handle, start, end, buffer);
  let reading: Promise<unknown> | undefined;
  return new Readable({
    read() {
      reading = pieces.next().then(
        (next) => this.push(next.done ? null : next.value),
        (error: Error) => this.destroy(error),
      );
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
