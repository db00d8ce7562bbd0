/**
 * The behaviour every BlobStore implementation must show, as a vitest suite. Each implementation's
 * test file calls `runBlobStoreContract` with a factory for a fresh, empty store.
 */
import { createHash, randomBytes } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobNotFoundError, type BlobStore, InvalidBlobKeyError } from "./blob-store.js";

/** What a contract factory returns: an empty store and a way to dispose of it and its data. */
export interface BlobStoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

const MiB = 1024 * 1024;

/** Registers the shared blob store suite under `name`; `make` is called before every test. */
export function runBlobStoreContract(name: string, make: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let fixture: BlobStoreFixture;
    let store: BlobStore;

    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    it.each([0, 1, 1000])("round-trips %i bytes", async (size) => {
      const data = randomBytes(size);
      expect(await store.put("media/1/part-0-a", Readable.from([data]))).toEqual({ bytes: size });
      expect((await readAll(await store.get("media/1/part-0-a"))).equals(data)).toBe(true);
    });

    it("streams a multi-megabyte blob in and out", async () => {
      // Just over 5 MiB so S3 implementations go through more than one multipart part.
      const size = 5 * MiB + 7;
      const source = generated(size, 64 * 1024);
      const { bytes } = await store.put("media/2/part-0-big", source.stream);
      expect(bytes).toBe(size);
      const hash = createHash("sha256");
      let read = 0;
      for await (const chunk of await store.get("media/2/part-0-big")) {
        hash.update(chunk as Buffer);
        read += (chunk as Buffer).length;
      }
      expect(read).toBe(size);
      expect(hash.digest("hex")).toBe(source.sha256());
    });

    it("replaces a blob on overwrite", async () => {
      await store.put("media/3/part-0-a", Readable.from([randomBytes(5000)]));
      const shorter = randomBytes(10);
      await store.put("media/3/part-0-a", Readable.from([shorter]));
      expect((await readAll(await store.get("media/3/part-0-a"))).equals(shorter)).toBe(true);
      expect(await collectList(store, "media/3/")).toEqual([{ key: "media/3/part-0-a", bytes: 10 }]);
    });

    it("reads byte ranges, inclusive, clamping an end past the blob", async () => {
      const data = randomBytes(1000);
      await store.put("r/blob", Readable.from([data.subarray(0, 300), data.subarray(300)]));
      const cases: Array<[number, number, Buffer]> = [
        [0, 0, data.subarray(0, 1)],
        [10, 500, data.subarray(10, 501)],
        [999, 999, data.subarray(999)],
        [0, 999, data],
        [990, 5000, data.subarray(990)],
      ];
      for (const [start, end, expected] of cases) {
        const got = await readAll(await store.get("r/blob", { start, end }));
        expect(got.equals(expected), `${start}-${end}`).toBe(true);
      }
    });

    it("reads through a consumer: every byte once, in order, then final; its error fails the read", async () => {
      const size = 3 * MiB + 5;
      const source = generated(size, 64 * 1024);
      await store.put("t/blob", source.stream);
      const data = await readAll(await store.get("t/blob"));
      const copying = () => {
        let finals = 0;
        return {
          finals: () => finals,
          update: (bytes: Buffer) => [Buffer.from(bytes), Buffer.alloc(0)],
          final: () => {
            finals++;
            return [Buffer.from("end")];
          },
        };
      };
      for (const range of [
        undefined,
        { start: 4097, end: 2 * MiB + 3 },
        { start: size - 1, end: size + 10 },
      ]) {
        const consumer = copying();
        const got = await readAll(await store.getThrough("t/blob", range, consumer));
        const expected = range ? data.subarray(range.start, range.end + 1) : data;
        expect(got.equals(Buffer.concat([expected, Buffer.from("end")])), JSON.stringify(range)).toBe(true);
        expect(consumer.finals()).toBe(1);
      }
      const failing = {
        update: () => {
          throw new Error("consumer refused");
        },
        final: () => [],
      };
      await expect(readAll(await store.getThrough("t/blob", undefined, failing))).rejects.toThrow(
        "consumer refused",
      );
      await expect(store.getThrough("t/none", undefined, failing)).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    it("refuses ranges that are malformed or start past the end", async () => {
      await store.put("r/blob", Readable.from([randomBytes(100)]));
      await store.put("r/empty", Readable.from([]));
      for (const range of [
        { start: 100, end: 200 },
        { start: 5, end: 4 },
        { start: -1, end: 4 },
        { start: 0.5, end: 4 },
      ]) {
        await expect(store.get("r/blob", range), JSON.stringify(range)).rejects.toThrow(RangeError);
      }
      await expect(store.get("r/empty", { start: 0, end: 0 })).rejects.toThrow(RangeError);
    });

    it("rejects BlobNotFoundError for a missing key", async () => {
      await expect(store.get("media/404/part-0")).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.get("media/404/part-0", { start: 0, end: 10 })).rejects.toBeInstanceOf(
        BlobNotFoundError,
      );
    });

    it("answers exists and deletes idempotently", async () => {
      expect(await store.exists("d/one")).toBe(false);
      await store.delete("d/one");
      await store.put("d/one", Readable.from([Buffer.from("x")]));
      await store.put("d/two", Readable.from([Buffer.from("y")]));
      expect(await store.exists("d/one")).toBe(true);
      await store.delete("d/one");
      await store.delete("d/one");
      expect(await store.exists("d/one")).toBe(false);
      await expect(store.get("d/one")).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.exists("d/two")).toBe(true);
      expect(await store.exists("d")).toBe(false);
    });

    it("lets a key and a deeper key coexist", async () => {
      await store.put("nest", Readable.from([Buffer.from("outer")]));
      await store.put("nest/inner", Readable.from([Buffer.from("inner!")]));
      expect((await readAll(await store.get("nest"))).toString()).toBe("outer");
      expect((await readAll(await store.get("nest/inner"))).toString()).toBe("inner!");
      await store.delete("nest");
      expect(await store.exists("nest/inner")).toBe(true);
    });

    it("lists by prefix with sizes and modification times", async () => {
      const before = Date.now();
      const blobs: Record<string, number> = {
        "media/1/part-0-a": 3,
        "media/1/part-1-b": 4,
        "media/12/part-0-c": 5,
        "other/x": 6,
        top: 7,
      };
      for (const [key, size] of Object.entries(blobs))
        await store.put(key, Readable.from([randomBytes(size)]));
      expect(await collectList(store, "media/1/")).toEqual([
        { key: "media/1/part-0-a", bytes: 3 },
        { key: "media/1/part-1-b", bytes: 4 },
      ]);
      expect((await collectList(store, "media/1")).map((e) => e.key)).toEqual([
        "media/1/part-0-a",
        "media/1/part-1-b",
        "media/12/part-0-c",
      ]);
      expect((await collectList(store, "")).map((e) => e.key)).toEqual(Object.keys(blobs).sort());
      expect(await collectList(store, "none/")).toEqual([]);
      expect(await collectList(store, "media/1/part-1")).toEqual([{ key: "media/1/part-1-b", bytes: 4 }]);
      for await (const entry of store.list("top")) {
        expect(entry.modifiedAt).toBeInstanceOf(Date);
        // Second precision on some stores, and clocks may differ slightly from the server's.
        expect(entry.modifiedAt.getTime()).toBeGreaterThan(before - 60_000);
      }
    });

    it("refuses invalid keys and prefixes", async () => {
      const invalid = [
        "",
        "/abs",
        "../x",
        "a/../b",
        "a/./b",
        "..",
        "a//b",
        "a/",
        "a\\b",
        "a b",
        ".hidden",
        "a/.tmp",
        "é",
        "a\0b",
        "x".repeat(600),
      ];
      for (const key of invalid) {
        await expect(store.put(key, Readable.from([Buffer.from("x")])), key).rejects.toBeInstanceOf(
          InvalidBlobKeyError,
        );
        await expect(store.get(key), key).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.exists(key), key).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.delete(key), key).rejects.toBeInstanceOf(InvalidBlobKeyError);
      }
      for (const prefix of ["/", "../", "a//", "a/../"]) {
        await expect(collectList(store, prefix), prefix).rejects.toBeInstanceOf(InvalidBlobKeyError);
      }
    });

    it("leaves nothing under the key when the source stream fails", async () => {
      const failing = Readable.from(
        (async function* () {
          yield randomBytes(1000);
          throw new Error("client went away");
        })(),
      );
      await expect(store.put("f/new", failing)).rejects.toThrow("client went away");
      expect(await store.exists("f/new")).toBe(false);
      expect(await collectList(store, "f/")).toEqual([]);
    });

    it("keeps the previous blob when a large overwrite fails midway", async () => {
      const original = randomBytes(2000);
      await store.put("f/old", Readable.from([original]));
      const failing = Readable.from(
        (async function* () {
          for (let i = 0; i < 12; i++) yield randomBytes(MiB);
          throw new Error("disk on fire");
        })(),
      );
      await expect(store.put("f/old", failing)).rejects.toThrow("disk on fire");
      expect((await readAll(await store.get("f/old"))).equals(original)).toBe(true);
      expect(await collectList(store, "f/")).toEqual([{ key: "f/old", bytes: 2000 }]);
    });

    it("makes a blob visible only when its put completes", async () => {
      const body = new PassThrough();
      const putting = store.put("v/slow", body);
      body.write(randomBytes(10_000));
      await drained(body);
      expect(await store.exists("v/slow")).toBe(false);
      expect(await collectList(store, "v/")).toEqual([]);
      body.end(randomBytes(10));
      expect(await putting).toEqual({ bytes: 10_010 });
      expect(await store.exists("v/slow")).toBe(true);
    });

    it("serves concurrent puts to different keys", async () => {
      const blobs = Array.from({ length: 6 }, (_, i) => [`c/part-${i}`, randomBytes(1000 + i)] as const);
      await Promise.all(blobs.map(([key, data]) => store.put(key, Readable.from([data]))));
      for (const [key, data] of blobs) expect((await readAll(await store.get(key))).equals(data)).toBe(true);
    });
  });
}

/**
 * Resolves once the store has pulled everything written to `body` so far. No count of event-loop
 * turns bounds the wait (a loaded machine may need more of them, as direct I/O writes are slow);
 * the test's own timeout does.
 */
async function drained(body: PassThrough): Promise<void> {
  while (body.readableLength > 0 || body.writableLength > 0) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function collectList(store: BlobStore, prefix: string): Promise<Array<{ key: string; bytes: number }>> {
  const entries: Array<{ key: string; bytes: number }> = [];
  for await (const { key, bytes } of store.list(prefix)) entries.push({ key, bytes });
  return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A lazily generated stream of `size` pseudo-random bytes, and the SHA-256 of what it produced. */
function generated(size: number, chunkBytes: number) {
  const block = randomBytes(chunkBytes);
  const hash = createHash("sha256");
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced >= size) {
        this.push(null);
        return;
      }
      const chunk = Buffer.from(block.subarray(0, Math.min(chunkBytes, size - produced)));
      if (chunk.length >= 4) chunk.writeUInt32BE(produced >>> 0, 0); // no two chunks alike
      produced += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, sha256: () => hash.digest("hex") };
}
