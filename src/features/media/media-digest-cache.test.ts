import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DigestCache, type DigestLease } from "./media-digest-cache.js";

function expected(...pieces: Buffer[]) {
  const data = Buffer.concat(pieces);
  return {
    sha256: createHash("sha256").update(data).digest("hex"),
    md5: createHash("md5").update(data).digest("hex"),
  };
}

/**
 * Feeds a chunk through a lease the way an upload does, in uneven pieces (100,003 bytes unless
 * told; an HTTP body's pieces are at most 64 KiB), waiting whenever the lease asks.
 */
async function feed(lease: DigestLease | undefined, data: Buffer, pieceBytes = 100_003): Promise<void> {
  if (!lease) throw new Error("no lease");
  for (let offset = 0; offset < data.length; offset += pieceBytes) {
    await lease.digests.update(data.subarray(offset, offset + pieceBytes));
  }
}

/** A read-back that records which chunk was read again. */
function readBackOf(reads: string[], name: string, data: Buffer) {
  return async function* () {
    reads.push(name);
    yield data;
  };
}

/** Whether `promise` has settled after the callbacks queued now have run. */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setImmediate(r));
  return settled;
}

/** Hashes and commits `chunks` as chunks 1..n of `mediaId`, stored under keys k1..kn. */
async function storeInOrder(cache: DigestCache, mediaId: number, chunks: Buffer[]): Promise<void> {
  for (const [i, data] of chunks.entries()) {
    const lease = cache.lease(mediaId, i + 1);
    await feed(lease, data);
    lease!.commit(`k${i + 1}`);
  }
}

describe("DigestCache", () => {
  const c1 = randomBytes(1024 * 1024 + 5);
  const c2 = randomBytes(1024 * 1024);
  const c3 = randomBytes(333);

  it("gives the digests of chunks stored in order", async () => {
    const cache = new DigestCache();
    await storeInOrder(cache, 7, [c1, c2, c3]);
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c2, c3));
  });

  it("forgets the bytes of a chunk that failed part way, so sending it again continues in order", async () => {
    const cache = new DigestCache();
    const first = cache.lease(7, 1);
    await feed(first, c1);
    first!.commit("k1");
    const failed = cache.lease(7, 2);
    await feed(failed, c2.subarray(0, 700_000));
    failed!.abandon();
    const again = cache.lease(7, 2);
    await feed(again, c2);
    again!.commit("k2");
    const last = cache.lease(7, 3);
    await feed(last, c3);
    last!.commit("k3");
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c2, c3));
  });

  it("replaces the last stored chunk when it is sent again", async () => {
    const cache = new DigestCache();
    const other = randomBytes(2000);
    await storeInOrder(cache, 7, [c1, c2]);
    const resent = cache.lease(7, 2);
    await feed(resent, other);
    resent!.commit("k2-again");
    expect(await cache.take(7, ["k1", "k2-again"])).toEqual(expected(c1, other));
  });

  it("a failed first chunk starts over from nothing", async () => {
    const cache = new DigestCache();
    const failed = cache.lease(7, 1);
    await feed(failed, c2);
    failed!.abandon();
    const again = cache.lease(7, 1);
    await feed(again, c1);
    again!.commit("k1");
    expect(await cache.take(7, ["k1"])).toEqual(expected(c1));
  });

  it("hashes chunks that arrive ahead of the prefix once the chunks before them are stored", async () => {
    const cache = new DigestCache();
    const c4 = randomBytes(70_000);
    const one = cache.lease(7, 1);
    await feed(one, c1);
    one!.commit("k1");
    // Chunks 2, 3 and 4 in flight together; 4 and 3 finish before 2.
    const two = cache.lease(7, 2);
    const three = cache.lease(7, 3);
    const four = cache.lease(7, 4);
    await feed(four, c4);
    four!.commit("k4");
    await feed(three, c3);
    three!.commit("k3");
    expect(cache.heldBytes).toBe(c3.length + c4.length);
    await feed(two, c2);
    two!.commit("k2");
    expect(await cache.take(7, ["k1", "k2", "k3", "k4"])).toEqual(expected(c1, c2, c3, c4));
    expect(cache.heldBytes).toBe(0);
  });

  it("reuses the blocks of held chunks for the next ones, with exact digests", async () => {
    const cache = new DigestCache();
    const big = randomBytes(2 * 1024 * 1024 + 17);
    for (const [id, ahead] of [
      [7, big],
      [8, c3],
    ] as const) {
      const one = cache.lease(id, 1);
      await feed(one, c1);
      one!.commit("k1");
      const two = cache.lease(id, 2);
      const three = cache.lease(id, 3);
      await feed(three, ahead);
      three!.commit("k3");
      await feed(two, c2);
      two!.commit("k2");
      expect(await cache.take(id, ["k1", "k2", "k3"])).toEqual(expected(c1, c2, ahead));
      expect(cache.heldBytes).toBe(0);
      // Chunk 3 of upload 7 filled three blocks; upload 8's took one of them back.
      expect(cache.pooledBlocks).toBe(3);
    }
  });

  it("frees the held chunks of an upload forgotten while they are being hashed", async () => {
    const cache = new DigestCache();
    const one = cache.lease(7, 1);
    await feed(one, c1);
    one!.commit("k1");
    const two = cache.lease(7, 2);
    const three = cache.lease(7, 3);
    const four = cache.lease(7, 4);
    await feed(three, c2);
    three!.commit("k3");
    await feed(four, c1);
    four!.commit("k4");
    await feed(two, c3);
    two!.commit("k2"); // chunks 3 and 4 are now fed to the digests, off this path
    expect(cache.hashingInBackground).toBe(1);
    cache.forget(7);
    await cache.settled();
    expect(cache.hashingInBackground).toBe(0);
    expect(cache.heldBytes).toBe(0);
    // Every block went back to the pool once: chunk 3 filled one, chunk 4 two.
    expect(cache.pooledBlocks).toBe(3);
    expect(await cache.take(7, ["k1", "k2", "k3", "k4"])).toBeUndefined();
  });

  it("reads a held chunk back when its bytes did not fit the memory budget", async () => {
    const cache = new DigestCache(512, 500_000);
    const one = cache.lease(7, 1);
    await feed(one, c1);
    one!.commit("k1");
    const two = cache.lease(7, 2);
    const three = cache.lease(7, 3);
    await feed(three, c2); // over the budget: nothing kept
    expect(cache.heldBytes).toBe(0);
    three!.commit("k3", async function* () {
      yield c2.subarray(0, 1000);
      yield c2.subarray(1000);
    });
    await feed(two, c3);
    two!.commit("k2");
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c3, c2));
  });

  it("spills the held chunks of an idle upload for an active one, reading them back later", async () => {
    const cache = new DigestCache(512, 1_500_000, 50);
    const reads: string[] = [];
    const readBack = (name: string, data: Buffer) =>
      async function* () {
        reads.push(name);
        yield data;
      };
    for (const id of [7, 8]) {
      const one = cache.lease(id, 1);
      await feed(one, c1);
      one!.commit("k1");
    }
    // Upload 7 stores chunk 3 ahead of chunk 2, then goes quiet.
    const idleTwo = cache.lease(7, 2);
    const idleThree = cache.lease(7, 3);
    await feed(idleThree, c2);
    idleThree!.commit("k3", readBack("7/3", c2));
    expect(cache.heldBytes).toBe(c2.length);
    // Quiet for longer than a chunk ahead waits for room: an upload left half way.
    await new Promise((r) => setTimeout(r, 80));
    // Upload 8 needs the room: 7's stored chunk is spilled, 8's stays in memory.
    const two = cache.lease(8, 2);
    const three = cache.lease(8, 3);
    await feed(three, c2);
    three!.commit("k3", readBack("8/3", c2));
    expect(cache.heldBytes).toBe(c2.length);
    await feed(two, c3);
    two!.commit("k2");
    expect(await cache.take(8, ["k1", "k2", "k3"])).toEqual(expected(c1, c3, c2));
    await feed(idleTwo, c3);
    idleTwo!.commit("k2");
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c3, c2));
    expect(reads).toEqual(["7/3"]);
  });

  it("makes a chunk ahead wait for room while the chunks before it are hashed, not read it back", async () => {
    const cache = new DigestCache(512, 1_500_000);
    const c4 = randomBytes(1024 * 1024 + 9);
    const reads: string[] = [];
    await storeInOrder(cache, 7, [c1]);
    // Chunks 2, 3 and 4 in flight: 3 fits the budget, 4 runs out of room part way.
    const two = cache.lease(7, 2);
    const three = cache.lease(7, 3);
    const four = cache.lease(7, 4);
    await feed(three, c2, 65_536);
    three!.commit("k3", readBackOf(reads, "3", c2));
    const fourFed = feed(four, c4, 65_536);
    expect(await settledSoon(fourFed)).toBe(false);
    expect(cache.waitingForRoom).toBe(1);
    expect(cache.heldBytes).toBeLessThanOrEqual(1_500_000);
    // Chunk 2 is stored: chunk 3's bytes go to the digests, which makes room for chunk 4's.
    await feed(two, c3, 65_536);
    two!.commit("k2");
    await fourFed;
    four!.commit("k4", readBackOf(reads, "4", c4));
    expect(await cache.take(7, ["k1", "k2", "k3", "k4"])).toEqual(expected(c1, c3, c2, c4));
    expect(reads).toEqual([]);
    expect(cache.waitingForRoom).toBe(0);
    expect(cache.heldBytes).toBe(0);
  });

  it("lets a waiting chunk go on, past the budget, once it is the next one to hash", async () => {
    const cache = new DigestCache(512, 1_500_000);
    const big = randomBytes(2 * 1024 * 1024 + 3);
    const reads: string[] = [];
    await storeInOrder(cache, 7, [c1]);
    const two = cache.lease(7, 2);
    const three = cache.lease(7, 3);
    const threeFed = feed(three, big, 65_536);
    expect(await settledSoon(threeFed)).toBe(false);
    await feed(two, c3, 65_536);
    two!.commit("k2");
    await threeFed;
    expect(cache.heldBytes).toBe(big.length);
    three!.commit("k3", readBackOf(reads, "3", big));
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c3, big));
    expect(reads).toEqual([]);
  });

  it("gives up holding a waiting chunk after the longest wait, and reads it back instead", async () => {
    const cache = new DigestCache(512, 1_500_000, 30);
    const big = randomBytes(2 * 1024 * 1024 + 3);
    const reads: string[] = [];
    await storeInOrder(cache, 7, [c1]);
    // Chunk 2 has started (its client is slow) while chunk 3 arrives whole.
    const two = cache.lease(7, 2);
    const three = cache.lease(7, 3);
    await feed(three, big, 65_536);
    expect(cache.heldBytes).toBe(0);
    expect(cache.waitingForRoom).toBe(0);
    three!.commit("k3", readBackOf(reads, "3", big));
    await feed(two, c3);
    two!.commit("k2");
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c3, big));
    expect(reads).toEqual(["3"]);
  });

  it("forgets a held chunk that failed, and hashes the copy sent again", async () => {
    const cache = new DigestCache();
    const one = cache.lease(7, 1);
    await feed(one, c1);
    one!.commit("k1");
    const two = cache.lease(7, 2);
    const failed = cache.lease(7, 3);
    await feed(failed, c1.subarray(0, 5000));
    failed!.abandon();
    expect(cache.heldBytes).toBe(0);
    const again = cache.lease(7, 3);
    await feed(again, c3);
    again!.commit("k3");
    await feed(two, c2);
    two!.commit("k2");
    expect(await cache.take(7, ["k1", "k2", "k3"])).toEqual(expected(c1, c2, c3));
  });

  // Giving up means the caller reads the parts back instead.
  it("gives up when the parts are not the chunks it hashed (a chunk missing from the prefix)", async () => {
    const cache = new DigestCache();
    const one = cache.lease(7, 1);
    await feed(one, c1);
    one!.commit("k1");
    const three = cache.lease(7, 3);
    await feed(three, c3);
    three!.commit("k3");
    expect(await cache.take(7, ["k1", "k2", "k3"])).toBeUndefined();
    expect(cache.heldBytes).toBe(0);
  });

  it("gives up without a first chunk (another node or a restart stored it)", async () => {
    const cache = new DigestCache();
    expect(cache.lease(7, 3)).toBeUndefined();
    expect(await cache.take(7, ["k1", "k2", "k3"])).toBeUndefined();
  });

  it("gives up on the same chunk sent again while its first copy is in progress", async () => {
    const cache = new DigestCache();
    const first = cache.lease(8, 1);
    await feed(first, c1);
    first!.commit("k1");
    const a = cache.lease(8, 2);
    expect(a).toBeDefined();
    expect(cache.lease(8, 2)).toBeUndefined(); // the same chunk while the first copy is in progress
    await feed(a, c2);
    a!.commit("k2");
    expect(await cache.take(8, ["k1", "k2"])).toBeUndefined();
  });

  it("gives up when the parts are other blobs than the ones it hashed", async () => {
    const cache = new DigestCache();
    const b = cache.lease(9, 1);
    await feed(b, c1);
    b!.commit("k1");
    expect(await cache.take(9, ["another blob"])).toBeUndefined();
  });

  it("cannot rewind past one chunk: a chunk before the last stored one drops the digests", async () => {
    const cache = new DigestCache();
    await storeInOrder(cache, 7, [c1, c2, c3]);
    expect(cache.lease(7, 2)).toBeUndefined();
    expect(await cache.take(7, ["k1", "k2", "k3"])).toBeUndefined();
  });
});
