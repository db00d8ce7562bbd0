import { randomBytes } from "node:crypto";
import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AlignedBufferPool,
  COPY_OUT,
  DIRECT_READ_FLAGS,
  DIRECT_WRITE_FLAGS,
  directReadStream,
  writeDirect,
} from "./direct-io.js";

const KiB = 1024;

describe("a direct write", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ferry-direct-"));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /** Writes `pieces` through `count` aligned buffers of 64 KiB and returns what is on disk. */
  async function write(name: string, pieces: Buffer[], count: number): Promise<Buffer> {
    const pool = new AlignedBufferPool(count, 64 * KiB);
    const buffers = pool.acquire(count)!;
    expect(buffers).toHaveLength(count);
    expect(pool.available).toBe(0);
    const path = join(dir, name);
    const handle = await open(path, DIRECT_WRITE_FLAGS!, 0o600);
    try {
      const body = new Readable({ read() {} });
      // Pushed over several turns, so pieces arrive while a buffer is being written.
      void (async () => {
        for (const piece of pieces) {
          body.push(piece);
          await new Promise((resolve) => setImmediate(resolve));
        }
        body.push(null);
      })();
      const total = pieces.reduce((sum, piece) => sum + piece.length, 0);
      expect(await writeDirect(handle, body, buffers)).toBe(total);
    } finally {
      await handle.close();
      pool.release(buffers);
    }
    return readFile(path);
  }

  // Pieces larger than a buffer, odd sizes across block boundaries, and 16-byte tags.
  const pieces = () => [
    randomBytes(150 * KiB + 7),
    ...Array.from({ length: 40 }, () => randomBytes(16)),
    randomBytes(64 * KiB),
    randomBytes(3 * KiB + 1),
    randomBytes(200 * KiB),
    randomBytes(1),
  ];

  it.each([1, 2])("with %i buffer(s) writes every byte in order, at the exact length", async (count) => {
    expect(DIRECT_WRITE_FLAGS).toBeDefined();
    const data = pieces();
    const onDisk = await write(`blob-${count}`, data, count);
    expect(onDisk.equals(Buffer.concat(data))).toBe(true);
  });
});

describe("a direct read", () => {
  const BLOCK = 64 * KiB;
  let dir: string;
  let path: string;
  const data = randomBytes(5 * BLOCK + 4097);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ferry-direct-read-"));
    path = join(dir, "blob");
    await writeFile(path, data);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /**
   * Reads bytes start..end (exclusive) through `count` aligned buffers of 64 KiB. Notes, for each
   * block read, how many blocks the consumer had been handed when the read was asked for.
   */
  async function read(start: number, end: number, count: number) {
    const pool = new AlignedBufferPool(count, BLOCK);
    const handle = await open(path, DIRECT_READ_FLAGS!);
    const readsAsked: Array<{ offset: number; handedBefore: number }> = [];
    let handed = 0;
    const readBlock = handle.read.bind(handle);
    handle.read = ((buffer: Buffer, offset: number, length: number, position: number) => {
      readsAsked.push({ offset: position, handedBefore: handed });
      return readBlock(buffer, offset, length, position);
    }) as typeof handle.read;
    let releases = 0;
    const consumer = {
      update(bytes: Buffer) {
        handed++;
        return [Buffer.from(bytes)];
      },
      final: () => [],
    };
    const stream = directReadStream(handle, start, end, pool.acquire(count)!, consumer, () => releases++);
    const pieces: Buffer[] = [];
    for await (const piece of stream) {
      pieces.push(piece);
      // A slow reader: the next read() comes a turn later.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { bytes: Buffer.concat(pieces), readsAsked, releases };
  }

  it.each([1, 2])("with %i buffer(s) gives exactly the bytes of any range", async (count) => {
    for (const [start, end] of [
      [0, data.length],
      [1, 2],
      [BLOCK - 1, BLOCK + 1],
      [4095, 3 * BLOCK + 5],
      [2 * BLOCK, data.length],
      [data.length - 1, data.length],
    ] as const) {
      const { bytes, releases } = await read(start, end, count);
      expect(bytes.equals(data.subarray(start, end)), `${start}-${end}`).toBe(true);
      expect(releases).toBe(1);
    }
  });

  it("with two buffers reads each block while the one before it is handed over", async () => {
    const two = await read(0, data.length, 2);
    const one = await read(0, data.length, 1);
    const offsets = [0, 1, 2, 3, 4, 5].map((block) => block * BLOCK);
    expect(two.readsAsked.map((r) => r.offset)).toEqual(offsets);
    expect(one.readsAsked.map((r) => r.offset)).toEqual(offsets);
    // Each block is one view: one buffer waits for it to be handed over before the next read, two
    // read the next block before it is.
    expect(one.readsAsked.map((r) => r.handedBefore)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(two.readsAsked.map((r) => r.handedBefore)).toEqual([0, 0, 1, 2, 3, 4]);
  });

  it("destroyed while a block is being read, waits for it, then closes the file and releases once", async () => {
    const pool = new AlignedBufferPool(2, BLOCK);
    const handle = await open(path, DIRECT_READ_FLAGS!);
    let releases = 0;
    const closed = new Promise<void>((resolve) => {
      const close = handle.close.bind(handle);
      handle.close = async () => {
        await close();
        resolve();
      };
    });
    const stream = directReadStream(handle, 0, data.length, pool.acquire(2)!, COPY_OUT, () => releases++);
    for await (const _piece of stream) break; // the second block's read is in flight by now
    await closed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.destroyed).toBe(true);
    expect(releases).toBe(1);
  });
});
