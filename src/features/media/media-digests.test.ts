import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newDigests, useResumableDigests } from "./media-digests.js";

// The saved-state cases need the resumable hashes (UPLOAD_DIGEST_STATE=on does this for a server).
useResumableDigests(true);

function expected(data: Buffer) {
  return {
    sha256: createHash("sha256").update(data).digest("hex"),
    md5: createHash("md5").update(data).digest("hex"),
  };
}

describe("Digests (worker thread)", () => {
  it.each([0, 1, 512 * 1024 - 1, 512 * 1024, 512 * 1024 + 1, 5 * 1024 * 1024 + 7])(
    "matches node:crypto for %i bytes fed in uneven pieces",
    async (size) => {
      const data = randomBytes(size);
      const digests = newDigests();
      for (let offset = 0, n = 1; offset < size; offset += n, n = (n * 7 + 3) % 200_000) {
        await digests.update(data.subarray(offset, offset + n));
      }
      expect(await digests.digest()).toEqual(expected(data));
    },
  );

  it("copies the bytes, so the caller may reuse its buffer at once", async () => {
    const buffer = Buffer.alloc(1000, 1);
    const digests = newDigests();
    await digests.update(buffer);
    buffer.fill(2);
    await digests.update(buffer);
    expect(await digests.digest()).toEqual(
      expected(Buffer.concat([Buffer.alloc(1000, 1), Buffer.alloc(1000, 2)])),
    );
  });

  it("asks the caller to wait once several batches are in flight", async () => {
    const digests = newDigests();
    const waits: (Promise<void> | undefined)[] = [];
    for (let i = 0; i < 16; i++) waits.push(digests.update(Buffer.alloc(512 * 1024, i)));
    expect(waits.some((w) => w !== undefined)).toBe(true);
    await Promise.all(waits);
    await digests.digest();
  });

  it("asks uploads to wait once all of them together have filled the worker's queue", async () => {
    // The worker answers in order: once an empty digest is back, every earlier batch is acknowledged.
    await newDigests().digest();
    const uploads = Array.from({ length: 6 }, () => newDigests());
    const bytes = uploads.map((_, i) => Buffer.alloc(3 * 512 * 1024, i + 1));
    // Three batches each: none is at its own cap (four), but the sixth brings the queue past 16.
    const waits = uploads.map((d, i) => d.update(bytes[i]!));
    expect(waits.slice(0, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(waits[5]).toBeInstanceOf(Promise);
    await waits[5];
    const results = await Promise.all(uploads.map((d) => d.digest()));
    expect(results).toEqual(bytes.map((b) => expected(b)));
  });

  it("goes on for every waiting upload once the worker has caught up", async () => {
    await newDigests().digest();
    const uploads = Array.from({ length: 12 }, () => newDigests());
    const fed = uploads.map(() => [] as Buffer[]);
    // Each upload feeds whole batches and waits whenever it is asked to, all at once.
    await Promise.all(
      uploads.map(async (d, i) => {
        for (let n = 0; n < 6; n++) {
          const piece = Buffer.alloc(512 * 1024, i * 6 + n);
          fed[i]!.push(piece);
          await d.update(piece);
        }
      }),
    );
    const results = await Promise.all(uploads.map((d) => d.digest()));
    expect(results).toEqual(fed.map((pieces) => expected(Buffer.concat(pieces))));
  });

  it("keeps concurrent plaintexts apart, also from one disposed meanwhile", async () => {
    const a = newDigests();
    const b = newDigests();
    const dropped = newDigests();
    await Promise.all([a.update(Buffer.from("first")), b.update(Buffer.from("second"))]);
    dropped.update(Buffer.from("x"));
    dropped.dispose();
    expect(await b.digest()).toEqual(expected(Buffer.from("second")));
    expect(await a.digest()).toEqual(expected(Buffer.from("first")));
  });

  it("keeps apart uploads whose pieces share batches, through checkpoints, rewinds and a dispose", async () => {
    const uploads = Array.from({ length: 5 }, () => newDigests());
    const kept = uploads.map(() => [] as Buffer[]);
    const abandoned = newDigests();
    // Uneven pieces, taken from each upload in turn, so every batch carries several uploads.
    for (let round = 0; round < 40; round++) {
      for (const [i, d] of uploads.entries()) {
        const piece = randomBytes(((round * 31 + i * 17) % 23) * 4099 + 1);
        if (round === 20 && i === 2) d.checkpoint();
        if (round >= 20 && round < 25 && i === 2) {
          await d.update(piece); // fed after the checkpoint, then forgotten below
          continue;
        }
        if (round === 25 && i === 2) d.rewind();
        kept[i]!.push(piece);
        await d.update(piece);
      }
      if (round === 10) abandoned.update(randomBytes(70_000));
      if (round === 12) abandoned.dispose();
    }
    const results = await Promise.all(uploads.map((d) => d.digest()));
    expect(results).toEqual(kept.map((pieces) => expected(Buffer.concat(pieces))));
  });

  it("ignores bytes fed after dispose", () => {
    const dropped = newDigests();
    dropped.update(Buffer.from("x"));
    dropped.dispose();
    expect(dropped.update(Buffer.from("y"))).toBeUndefined();
  });

  it("refuses a second digest", async () => {
    const a = newDigests();
    await a.update(Buffer.from("first"));
    await a.digest();
    await expect(a.digest()).rejects.toThrow("already finished");
  });

  it("rewinds to its checkpoint, forgetting bytes fed and bytes not yet sent to the worker", async () => {
    const a = randomBytes(700 * 1024);
    const b = randomBytes(900 * 1024);
    const digests = newDigests();
    await digests.update(a);
    digests.checkpoint();
    await digests.update(randomBytes(600 * 1024)); // one batch sent, the rest still held here
    digests.rewind();
    await digests.update(randomBytes(10)); // and once more, from the same checkpoint
    digests.rewind();
    await digests.update(b);
    expect(await digests.digest()).toEqual(expected(Buffer.concat([a, b])));
  });

  it("rewinds to the empty state when no checkpoint was taken", async () => {
    const digests = newDigests();
    await digests.update(randomBytes(1000));
    digests.rewind();
    await digests.update(Buffer.from("only this"));
    expect(await digests.digest()).toEqual(expected(Buffer.from("only this")));
  });

  it("continues from a saved state to the digests of the whole plaintext", async () => {
    const data = randomBytes(3 * 1024 * 1024 + 11);
    const first = newDigests();
    await first.update(data.subarray(0, 1_000_003));
    const saved = await first.save();
    first.dispose();
    const second = newDigests(saved);
    await second.update(data.subarray(1_000_003));
    expect(await second.digest()).toEqual(expected(data));
  });

  it("fails, without stalling, the digests continued from a state that does not load", async () => {
    const broken = newDigests({ md5: new Uint8Array(10), sha256: new Uint8Array(10) });
    await broken.update(Buffer.from("bytes"));
    await expect(broken.save()).rejects.toThrow("saved digest state did not load");
    await expect(broken.digest()).rejects.toThrow("saved digest state did not load");
  });

  it("settles a save still awaiting the worker when the digests are dropped", async () => {
    const digests = newDigests();
    await digests.update(randomBytes(1024 * 1024));
    const saving = digests.save();
    digests.dispose();
    await expect(saving).rejects.toThrow("digests dropped");
  });
});
