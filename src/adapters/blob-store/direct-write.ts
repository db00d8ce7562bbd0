/**
 * Direct I/O (O_DIRECT) writes for the local blob store (ADR 0016). A blob is written once and
 * read rarely, so it gains nothing from the page cache; writing around it saves the kernel's copy
 * into cache pages, and on virtual machines whose free memory goes back to the host, the far larger
 * cost of faulting those pages in (about 4 ms per MiB of CPU on Ferry's CI machines).
 *
 * O_DIRECT wants the buffer's address, the file offset and the length aligned to the device's
 * block size. Node has no aligned allocation, but a WebAssembly memory's buffer starts on a page
 * boundary, so the pool below hands out 1 MiB buffers carved from one. The final, partial block
 * is written padded with zeros and the file is then truncated to its real length.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { Readable } from "node:stream";

/** Alignment of every direct write's address, offset and length (covers 512 and 4096-byte blocks). */
export const DIRECT_ALIGNMENT = 4096;
/** Bytes per write; each blob being written holds two (one filling while the other is written). */
const BUFFER_BYTES = 1024 * 1024;
/** Blobs written directly at once; further concurrent writes use the page cache. */
const POOL_WRITERS = 16;
const WASM_PAGE_BYTES = 64 * 1024;

/** The open(2) flags of a new temporary blob file written with direct I/O; undefined where unsupported. */
export const DIRECT_OPEN_FLAGS: number | undefined =
  constants.O_DIRECT === undefined
    ? undefined
    : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;

/** A pair of aligned write buffers lent to one blob write. */
export type DirectBuffers = readonly [Buffer, Buffer];

/**
 * Page-aligned buffers, two per writer, carved from one WebAssembly memory reserved on first use:
 * 32 MiB of address space and a block of zeros. Pages become resident only once a writer uses them,
 * and the most recently returned pair is lent first, so few ever do.
 */
export class AlignedBufferPool {
  #free: DirectBuffers[] | undefined;
  #zeros: Buffer | undefined;

  /** Two buffers for one blob write, or undefined when every pair is lent out. */
  acquire(): DirectBuffers | undefined {
    this.#allocate();
    return this.#free!.pop();
  }

  /** Returns a pair; no write may still be using it. */
  release(pair: DirectBuffers): void {
    this.#free?.push(pair);
  }

  /** One aligned block of zeros, never lent out and never written: for probing a file system. */
  zeroBlock(): Buffer {
    this.#allocate();
    return this.#zeros!;
  }

  #allocate(): void {
    if (this.#free) return;
    const pairBytes = 2 * BUFFER_BYTES;
    const pages = (POOL_WRITERS * pairBytes) / WASM_PAGE_BYTES + 1;
    const { buffer } = new WebAssembly.Memory({ initial: pages, maximum: pages });
    this.#free = [];
    for (let i = POOL_WRITERS - 1; i >= 0; i--) {
      const at = i * pairBytes;
      this.#free.push([
        Buffer.from(buffer, at, BUFFER_BYTES),
        Buffer.from(buffer, at + BUFFER_BYTES, BUFFER_BYTES),
      ]);
    }
    this.#zeros = Buffer.from(buffer, POOL_WRITERS * pairBytes, DIRECT_ALIGNMENT);
  }
}

/**
 * Writes all of `body` to `handle` (opened with DIRECT_OPEN_FLAGS, empty) through `buffers`: one
 * buffer is written while the next fills. Resolves with the byte count once every write has
 * completed and the file has its exact length; the caller still fsyncs (O_DIRECT does not flush
 * the device's cache, nor the file's size). On failure no write is left running on `buffers`.
 */
export async function writeDirect(
  handle: FileHandle,
  body: Readable,
  buffers: DirectBuffers,
): Promise<number> {
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
        if (filled === BUFFER_BYTES) await flush(BUFFER_BYTES);
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
