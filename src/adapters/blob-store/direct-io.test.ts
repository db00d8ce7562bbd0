import { randomBytes } from "node:crypto";
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AlignedBufferPool, DIRECT_WRITE_FLAGS, writeDirect } from "./direct-io.js";

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
