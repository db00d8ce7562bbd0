import { randomBytes, randomFillSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markOwned } from "../../shared/owned-buffers.js";
import { runBlobStoreContract } from "./blob-store.contract.js";
import { createBlobStore } from "./blob-store.js";
import { LocalBlobStore } from "./local-blob-store.js";

const MiB = 1024 * 1024;

for (const directIo of [true, false]) {
  runBlobStoreContract(directIo ? "local, direct I/O" : "local, page cache", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ferry-blobs-"));
    const store = new LocalBlobStore(dir, { directIo });
    expect(await store.usesDirectIo()).toBe(directIo);
    return {
      store,
      async cleanup() {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
}

describe("LocalBlobStore on disk", () => {
  let dir: string;
  let store: LocalBlobStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ferry-blobs-"));
    store = new LocalBlobStore(join(dir, "blobs"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates nested directories and prunes them when emptied", async () => {
    await store.put("media/7/part-0-a", Readable.from([Buffer.from("a")]));
    await store.put("media/7/part-1-b", Readable.from([Buffer.from("b")]));
    expect(await readdir(join(dir, "blobs", "media", "7"))).toEqual(["part-0-a.blob", "part-1-b.blob"]);
    await store.delete("media/7/part-0-a");
    await store.delete("media/7/part-1-b");
    expect(await readdir(join(dir, "blobs"))).toEqual([]);
  });

  it("never lists leftover temporary files of an interrupted write", async () => {
    await store.put("media/8/part-0-a", Readable.from([Buffer.from("a")]));
    await writeFile(join(dir, "blobs", "media", "8", ".part-1-b.blob.0123456789ab.tmp"), "partial");
    const keys: string[] = [];
    for await (const entry of store.list("media/")) keys.push(entry.key);
    expect(keys).toEqual(["media/8/part-0-a"]);
    expect(await store.exists("media/8/part-1-b")).toBe(false);
  });

  it("removes its temporary file when the source fails", async () => {
    await store.put("media/9/part-0-a", Readable.from([Buffer.from("a")]));
    const failing = Readable.from(
      (async function* () {
        yield Buffer.from("partial");
        throw new Error("boom");
      })(),
    );
    await expect(store.put("media/9/part-1-b", failing)).rejects.toThrow("boom");
    expect(await readdir(join(dir, "blobs", "media", "9"))).toEqual(["part-0-a.blob"]);
  });

  it.each([4096, MiB - 1, MiB, 2 * MiB, 2 * MiB + 4096, 3 * MiB + 1])(
    "writes a blob of %i bytes directly, at its exact length",
    async (size) => {
      expect(await store.usesDirectIo()).toBe(true);
      const data = randomBytes(size);
      // Pieces of odd sizes, so buffers fill across piece boundaries.
      const pieces = [];
      for (let at = 0; at < size; at += 100_003) pieces.push(data.subarray(at, at + 100_003));
      expect(await store.put("media/5/part-0-a", Readable.from(pieces))).toEqual({ bytes: size });
      const onDisk = await readFile(join(dir, "blobs", "media", "5", "part-0-a.blob"));
      expect(onDisk.length).toBe(size);
      expect(onDisk.equals(data)).toBe(true);
    },
  );

  it("writes pieces larger than both direct buffers, and many tiny ones, at their exact bytes", async () => {
    expect(await store.usesDirectIo()).toBe(true);
    // A 3.5 MiB piece fills both 1 MiB buffers while the first is still being written; the 16-byte
    // pieces (an encrypted segment's tags) follow, pushed while the body waits for a buffer.
    const big = randomBytes(3.5 * MiB);
    const tiny = Array.from({ length: 300 }, () => randomBytes(16));
    const last = randomBytes(MiB + 5);
    const body = new Readable({ read() {} });
    body.push(big);
    for (const piece of tiny) body.push(piece);
    body.push(last);
    body.push(null);
    const data = Buffer.concat([big, ...tiny, last]);
    expect(await store.put("media/5/part-1-a", body)).toEqual({ bytes: data.length });
    const onDisk = await readFile(join(dir, "blobs", "media", "5", "part-1-a.blob"));
    expect(onDisk.equals(data)).toBe(true);
  });

  it("frees each owned piece of a direct write once copied, and leaves other pieces alone", async () => {
    const owned = Array.from({ length: 48 }, () => markOwned(randomFillSync(Buffer.alloc(65_552))));
    const other = randomBytes(70_000);
    const data = Buffer.concat([...owned.slice(0, 24), other, ...owned.slice(24)]);
    const body = new Readable({ read() {} });
    for (const piece of [...owned.slice(0, 24), other, ...owned.slice(24)]) body.push(piece);
    body.push(null);
    expect(await store.put("media/6/part-1-a", body)).toEqual({ bytes: data.length });
    const onDisk = await readFile(join(dir, "blobs", "media", "6", "part-1-a.blob"));
    expect(onDisk.equals(data)).toBe(true);
    expect(owned.every((piece) => piece.length === 0)).toBe(true);
    expect(other.length).toBe(70_000);
  });

  it("fails a direct write with the body's error, part way or before it starts, leaving no file", async () => {
    expect(await store.usesDirectIo()).toBe(true);
    const partWay = Readable.from(
      (async function* () {
        yield randomBytes(2.5 * MiB);
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("cut part way");
      })(),
    );
    await expect(store.put("media/7/part-0-a", partWay)).rejects.toThrow("cut part way");
    // As a pipeline's last stream would be: its error is handled, and already emitted.
    const early = new Readable({ read() {} }).on("error", () => {});
    early.destroy(new Error("cut at once"));
    await expect(store.put("media/7/part-1-a", early)).rejects.toThrow("cut at once");
    expect(await readdir(join(dir, "blobs", "media", "7")).catch(() => [])).toEqual([]);
  });

  it("writes more blobs at once than it has direct buffers for, every one whole", async () => {
    // 8 writes take two buffers, 16 one (each waiting while it is written), and 6 go through the
    // page cache.
    const blobs = Array.from({ length: 30 }, (_, i) => randomBytes(2 * MiB + 1000 * i));
    // Each source yields over several turns of the event loop, so all 30 writes overlap.
    const slowly = (data: Buffer) =>
      Readable.from(
        (async function* () {
          for (let at = 0; at < data.length; at += 256 * 1024) {
            await new Promise((resolve) => setImmediate(resolve));
            yield data.subarray(at, at + 256 * 1024);
          }
        })(),
      );
    await Promise.all(blobs.map((data, i) => store.put(`media/6/part-${i}-x`, slowly(data))));
    for (const [i, data] of blobs.entries()) {
      const onDisk = await readFile(join(dir, "blobs", "media", "6", `part-${i}-x.blob`));
      expect(onDisk.equals(data)).toBe(true);
    }
  });

  it("reads any byte range of a direct-written blob, across block boundaries", async () => {
    const size = 3 * MiB + 1;
    const data = randomBytes(size);
    await store.put("media/7/part-0-a", Readable.from([data]));
    const ranges: Array<[number, number]> = [
      [0, size - 1],
      [0, 0],
      [4095, 4097],
      [MiB - 1, 2 * MiB + 5],
      [5000, MiB + 4096],
      [3 * MiB, 3 * MiB + 100],
    ];
    for (const [start, end] of ranges) {
      const read = await readAll(await store.get("media/7/part-0-a", { start, end }));
      expect(read.equals(data.subarray(start, end + 1))).toBe(true);
    }
    expect((await readAll(await store.get("media/7/part-0-a"))).equals(data)).toBe(true);
  });

  it("hands a consumer every byte of a range in order, however the stream is read", async () => {
    const size = 3 * MiB + 1;
    const data = randomBytes(size);
    await store.put("media/9/part-0-a", Readable.from([data]));
    // Several outputs per view, so a read() asked for from inside a push could reorder them.
    const splitting = {
      update: (bytes: Buffer) =>
        [100, 5000, bytes.length].map((to, i, ends) =>
          Buffer.from(
            bytes.subarray(i === 0 ? 0 : Math.min(ends[i - 1]!, bytes.length), Math.min(to, bytes.length)),
          ),
        ),
      final: () => [Buffer.from("!")],
    };
    for (const [start, end] of [
      [0, size - 1],
      [4095, 4097],
      [MiB - 1, 2 * MiB + 5],
      [5000, 3 * MiB - 3],
    ] as const) {
      const expected = Buffer.concat([data.subarray(start, end + 1), Buffer.from("!")]);
      const paused = await readAll(await store.getThrough("media/9/part-0-a", { start, end }, splitting));
      expect(paused.equals(expected)).toBe(true);
      // Flowing, with a reader that asks for more from inside each 'data' event.
      const stream = await store.getThrough("media/9/part-0-a", { start, end }, splitting);
      const flowing = await new Promise<Buffer>((resolve, reject) => {
        const pieces: Buffer[] = [];
        stream.on("data", (piece: Buffer) => {
          pieces.push(piece);
          stream.read(0);
        });
        stream.on("end", () => resolve(Buffer.concat(pieces)));
        stream.on("error", reject);
      });
      expect(flowing.equals(expected), `${start}-${end}`).toBe(true);
    }
  });

  it("calls no consumer once its stream is destroyed", async () => {
    await store.put("media/10/part-0-a", Readable.from([randomBytes(3 * MiB)]));
    let calls = 0;
    const counting = {
      update: (bytes: Buffer) => {
        calls++;
        return [Buffer.from(bytes)];
      },
      final: () => {
        calls++;
        return [];
      },
    };
    const stream = await store.getThrough("media/10/part-0-a", undefined, counting);
    for await (const _piece of stream) break;
    const after = calls;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stream.destroyed).toBe(true);
    expect(calls).toBe(after);
  });

  it("reads more blobs at once than it has direct buffers for, and closes every file", async () => {
    const data = randomBytes(MiB + 17);
    await store.put("media/8/part-0-a", Readable.from([data]));
    const openFiles = async () => (await readdir("/proc/self/fd")).length;
    const before = await openFiles();
    const streams = await Promise.all(Array.from({ length: 40 }, () => store.get("media/8/part-0-a")));
    // A third are read to the end, a third destroyed after their first piece, a third destroyed
    // before anything was read.
    const results = await Promise.all(
      streams.map(async (stream, i) => {
        if (i % 3 === 0) return readAll(stream);
        if (i % 3 === 1) for await (const _piece of stream) break;
        else stream.destroy();
        return undefined;
      }),
    );
    for (const read of results.filter((r) => r !== undefined)) expect(read.equals(data)).toBe(true);
    for (let i = 0; i < 100 && (await openFiles()) > before; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await openFiles()).toBe(before);
  });

  it("writes through the page cache when asked to, or when a direct write fails at first use", async () => {
    const buffered = new LocalBlobStore(join(dir, "buffered"), { directIo: false });
    expect(await buffered.usesDirectIo()).toBe(false);
    await buffered.put("a/b", Readable.from([Buffer.from("plain")]));
    expect(await readFile(join(dir, "buffered", "a", "b.blob"), "utf8")).toBe("plain");
    // The probe's write fails in a directory that cannot hold files (its path is a file).
    await writeFile(join(dir, "not-a-dir"), "x");
    expect(await new LocalBlobStore(join(dir, "not-a-dir")).usesDirectIo()).toBe(false);
  });

  it("is what createBlobStore builds for kind local", async () => {
    const built = await createBlobStore({ kind: "local", dir });
    expect(built).toBeInstanceOf(LocalBlobStore);
    expect(built.kind).toBe("local");
    expect(await (built as LocalBlobStore).usesDirectIo()).toBe(true);
    const buffered = await createBlobStore({ kind: "local", dir, directIo: false });
    expect(await (buffered as LocalBlobStore).usesDirectIo()).toBe(false);
    expect((await createBlobStore({ kind: "memory" })).kind).toBe("memory");
  });
});

async function readAll(stream: Readable): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of stream) pieces.push(piece as Buffer);
  return Buffer.concat(pieces);
}
