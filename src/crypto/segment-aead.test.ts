import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { Readable, type Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { markOwned, releaseOwned } from "../shared/owned-buffers.js";
import { IntegrityError } from "./integrity-error.js";
import {
  BLOB_HEADER_BYTES,
  createDecryptStream,
  createEncryptStream,
  createRangeDecryptor,
  createRangeDecryptStream,
  decryptedSize,
  encryptedSize,
  parseBlobHeader,
  SEGMENT_BLOB_BYTES,
  SEGMENT_PLAINTEXT_BYTES,
  SEGMENT_TAG_BYTES,
  segmentSpan,
} from "./segment-aead.js";

const S = SEGMENT_PLAINTEXT_BYTES;
const SB = SEGMENT_BLOB_BYTES;
const H = BLOB_HEADER_BYTES;
const dek = randomBytes(32);

function* pieces(data: Buffer, size: number): Generator<Buffer> {
  if (data.length === 0) return;
  for (let offset = 0; offset < data.length; offset += size) yield data.subarray(offset, offset + size);
}

async function encrypt(plain: Buffer, partIndex = 0, pieceSize = 65_536, key = dek): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(pieces(plain, pieceSize)), createEncryptStream(key, partIndex), collect(out));
  return Buffer.concat(out);
}

/** Runs `input` through a decrypt stream; returns what came out before any error, and the error. */
async function run(stream: Transform, input: Buffer, pieceSize = 65_536) {
  const out: Buffer[] = [];
  let error: unknown;
  try {
    await pipeline(Readable.from(pieces(input, pieceSize)), stream, collect(out));
  } catch (caught) {
    error = caught;
  }
  return { output: Buffer.concat(out), error };
}

function collect(into: Buffer[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      into.push(chunk);
      callback();
    },
  });
}

/** Asserts a failed decryption: IntegrityError, and only whole verified segments of `plain` came out. */
function expectRejected(result: { output: Buffer; error: unknown }, plain: Buffer): void {
  expect(result.error).toBeInstanceOf(IntegrityError);
  expect(result.output.length % S).toBe(0);
  expect(result.output.length).toBeLessThan(Math.max(plain.length, 1));
  expect(result.output.equals(plain.subarray(0, result.output.length))).toBe(true);
}

function flip(blob: Buffer, offset: number): Buffer {
  const copy = Buffer.from(blob);
  copy[offset]! ^= 0x01;
  return copy;
}

describe("sizes", () => {
  it.each([0, 1, S - 1, S, S + 1, 3 * S, 3 * S + 100])("encryptedSize(%i) matches the blob", async (n) => {
    const blob = await encrypt(randomBytes(n));
    expect(blob.length).toBe(encryptedSize(n));
    expect(decryptedSize(blob.length)).toBe(n);
  });

  it("rejects impossible sizes", () => {
    expect(() => encryptedSize(-1)).toThrow(RangeError);
    expect(() => encryptedSize(1.5)).toThrow(RangeError);
    expect(() => decryptedSize(H + SEGMENT_TAG_BYTES - 1)).toThrow(IntegrityError);
    // A non-final segment is never followed by an empty final one.
    expect(() => decryptedSize(H + SB + SEGMENT_TAG_BYTES)).toThrow(IntegrityError);
  });
});

describe("round trips", () => {
  const cases: Array<[number, number]> = [
    [0, 1],
    [1, 1],
    [S - 1, 7],
    [S, 1000],
    [S + 1, 7],
    [3 * S + 123, 12_345],
    [3 * 1024 * 1024 + 17, 4 * 1024 * 1024],
  ];
  it.each(cases)("%i bytes fed in %i-byte pieces", async (size, pieceSize) => {
    const plain = randomBytes(size);
    const blob = await encrypt(plain, 3, pieceSize);
    expect(blob.subarray(0, 4).toString("ascii")).toBe("FRY1");
    expect(blob[4]).toBe(1);
    for (const decryptPiece of [13, 99_991]) {
      const result = await run(createDecryptStream(dek, 3), blob, decryptPiece);
      expect(result.error).toBeUndefined();
      expect(result.output.equals(plain)).toBe(true);
    }
  });

  it("streams a larger file through with back pressure", async () => {
    const size = 24 * 1024 * 1024 + 5;
    const source = randomBytes(1024 * 1024);
    const plainHash = createHash("sha256");
    const outHash = createHash("sha256");
    let produced = 0;
    let outBytes = 0;
    const plainSource = new Readable({
      read() {
        if (produced >= size) return void this.push(null);
        const piece = source.subarray(0, Math.min(source.length, size - produced));
        produced += piece.length;
        plainHash.update(piece);
        this.push(piece);
      },
    });
    await pipeline(
      plainSource,
      createEncryptStream(dek, 7),
      createDecryptStream(dek, 7),
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          outBytes += chunk.length;
          outHash.update(chunk);
          // Asynchronous sink so the chain actually has to wait on back pressure.
          setImmediate(callback);
        },
      }),
    );
    expect(outBytes).toBe(size);
    expect(outHash.digest("hex")).toBe(plainHash.digest("hex"));
  });

  it("frees each owned input piece once every byte of it is sealed, and no other input", async () => {
    const K = 40 * 1024;
    const plain = randomBytes(3 * S + 1000);
    // Owned copies of 40 KiB each, straddling the segments' ends; then a view of `plain`, not owned.
    const owned = [0, 1, 2, 3].map((k) => markOwned(Buffer.from(plain.subarray(k * K, (k + 1) * K))));
    const tail = plain.subarray(4 * K);
    const encrypt = createEncryptStream(dek, 0);
    const blob: Buffer[] = [];
    encrypt.on("data", (b: Buffer) => blob.push(Buffer.from(b)));
    // The lengths once the stream has taken in everything written so far.
    const lengths = async () => {
      await new Promise(setImmediate);
      return owned.map((b) => b.length);
    };

    encrypt.write(owned[0]);
    encrypt.write(owned[1]);
    // The first segment is sealed once a byte beyond it has arrived: all of the first piece is in
    // it, the second only in part.
    expect(await lengths()).toEqual([0, K, K, K]);
    encrypt.write(owned[2]);
    encrypt.write(owned[3]);
    expect(await lengths()).toEqual([0, 0, 0, K]);
    encrypt.write(tail);
    expect(await lengths()).toEqual([0, 0, 0, 0]);
    encrypt.end();
    await once(encrypt, "end");
    expect(tail.equals(plain.subarray(4 * K))).toBe(true);
    const { output, error } = await run(createDecryptStream(dek, 0), Buffer.concat(blob));
    expect(error).toBeUndefined();
    expect(output.equals(plain)).toBe(true);
  });

  it("fails the stream, and counts nothing more, when a piece it holds is freed by someone else", async () => {
    const first = markOwned(Buffer.from(randomBytes(S)));
    const encrypt = createEncryptStream(dek, 0);
    encrypt.resume();
    const failed = once(encrypt, "error");
    encrypt.write(first); // held: a segment is sealed only once a byte beyond it arrives
    await new Promise(setImmediate);
    releaseOwned(first); // a wrong ownership rule frees it while the encryptor still needs it
    encrypt.write(Buffer.from(randomBytes(10)));
    const [error] = (await failed) as [Error];
    expect(error.message).toBe("a queued buffer was freed before it was read");
    expect(encrypt.plainBytes).toBe(0);
  });

  it("counts the plaintext bytes it sealed", async () => {
    const encrypt = createEncryptStream(dek, 0);
    encrypt.resume();
    encrypt.end(randomBytes(2 * S + 7));
    await once(encrypt, "end");
    expect(encrypt.plainBytes).toBe(2 * S + 7);
  });

  it("uses a fresh salt per blob, so re-encrypting a part never reuses a key", async () => {
    const plain = randomBytes(1000);
    const a = await encrypt(plain, 1);
    const b = await encrypt(plain, 1);
    expect(parseBlobHeader(a.subarray(0, H)).salt.equals(parseBlobHeader(b.subarray(0, H)).salt)).toBe(false);
    expect(a.subarray(H).equals(b.subarray(H))).toBe(false);
    for (const blob of [a, b])
      expect((await run(createDecryptStream(dek, 1), blob)).output.equals(plain)).toBe(true);
  });

  it("exposes the header it writes, and can insist on it when decrypting", async () => {
    const plain = randomBytes(S + 10);
    const stream = createEncryptStream(dek, 1);
    const out: Buffer[] = [];
    await pipeline(Readable.from([plain]), stream, collect(out));
    const blob = Buffer.concat(out);
    expect(stream.header.equals(blob.subarray(0, H))).toBe(true);
    const ok = await run(createDecryptStream(dek, 1, { expectedHeader: stream.header }), blob);
    expect(ok.error).toBeUndefined();
    expect(ok.output.equals(plain)).toBe(true);
    // An older, equally valid blob of the same part put back in place of the recorded one.
    const older = await encrypt(plain, 1);
    expectRejected(await run(createDecryptStream(dek, 1, { expectedHeader: stream.header }), older), plain);
  });

  it("refuses bad arguments synchronously", () => {
    expect(() => createEncryptStream(randomBytes(16), 0)).toThrow(TypeError);
    expect(() => createEncryptStream(dek, -1)).toThrow(RangeError);
    expect(() => createEncryptStream(dek, 2 ** 32)).toThrow(RangeError);
    expect(() => createDecryptStream(randomBytes(16), 0)).toThrow(TypeError);
    expect(() => createDecryptStream(dek, -1)).toThrow(RangeError);
  });
});

describe("tampering", () => {
  const plain = randomBytes(3 * S + 100);
  const exact = randomBytes(2 * S);
  let blob: Buffer;
  let exactBlob: Buffer;
  const ready = (async () => {
    blob = await encrypt(plain, 2);
    exactBlob = await encrypt(exact, 2);
  })();

  const tampers: Array<[string, () => Buffer]> = [
    ["a flipped magic byte", () => flip(blob, 0)],
    ["a flipped version byte", () => flip(blob, 4)],
    ["a flipped salt byte", () => flip(blob, 10)],
    ["a flipped byte in the first segment", () => flip(blob, H + 5)],
    ["a flipped byte in a middle segment", () => flip(blob, H + SB + 1000)],
    ["a flipped tag byte", () => flip(blob, H + SB - 1)],
    ["a flipped last byte", () => flip(blob, blob.length - 1)],
    [
      "two segments swapped",
      () =>
        Buffer.concat([
          blob.subarray(0, H),
          blob.subarray(H + SB, H + 2 * SB),
          blob.subarray(H, H + SB),
          blob.subarray(H + 2 * SB),
        ]),
    ],
    ["the final segment dropped", () => blob.subarray(0, H + 3 * SB)],
    ["the tail cut mid-segment", () => blob.subarray(0, H + 2 * SB + 500)],
    ["the tail cut inside the final tag", () => blob.subarray(0, blob.length - 3)],
    ["one byte appended", () => Buffer.concat([blob, Buffer.from([0])])],
    ["a whole segment appended", () => Buffer.concat([blob, blob.subarray(H, H + SB)])],
    ["only the header", () => blob.subarray(0, H)],
    ["half a header", () => blob.subarray(0, 10)],
    ["nothing at all", () => Buffer.alloc(0)],
  ];

  it.each(tampers)("%s is an IntegrityError with only verified output", async (_name, make) => {
    await ready;
    expectRejected(await run(createDecryptStream(dek, 2), make(), 7777), plain);
  });

  it("a blob whose size is a multiple of 64 KiB cannot lose its last segment", async () => {
    await ready;
    expectRejected(await run(createDecryptStream(dek, 2), exactBlob.subarray(0, H + SB)), exact);
    expectRejected(
      await run(createDecryptStream(dek, 2), Buffer.concat([exactBlob, Buffer.alloc(5)])),
      exact,
    );
  });

  it("an empty part cannot lose its only segment", async () => {
    const empty = await encrypt(Buffer.alloc(0), 2);
    expect(empty.length).toBe(H + SEGMENT_TAG_BYTES);
    expectRejected(await run(createDecryptStream(dek, 2), empty.subarray(0, H)), Buffer.alloc(0));
    expect((await run(createDecryptStream(dek, 2), empty)).output.length).toBe(0);
  });

  it("another part index or another data key fails", async () => {
    await ready;
    expectRejected(await run(createDecryptStream(dek, 3), blob), plain);
    expectRejected(await run(createDecryptStream(randomBytes(32), 2), blob), plain);
  });

  it("a segment from another blob of the same part fails", async () => {
    await ready;
    const other = await encrypt(plain, 2);
    const spliced = Buffer.concat([blob.subarray(0, H + SB), other.subarray(H + SB)]);
    expectRejected(await run(createDecryptStream(dek, 2), spliced), plain);
  });

  it("stops at the first bad segment without emitting anything after it", async () => {
    await ready;
    const result = await run(createDecryptStream(dek, 2), flip(blob, H + SB + 1), 1_000_000);
    expect(result.error).toBeInstanceOf(IntegrityError);
    expect(result.output.length).toBeLessThanOrEqual(S);
  });
});

describe("ranges", () => {
  it("segmentSpan locates segments and trims", () => {
    expect(segmentSpan(0, 0, 10)).toEqual({
      firstSegment: 0,
      lastSegment: 0,
      blobStart: H,
      blobEndInclusive: H + 10 + SEGMENT_TAG_BYTES - 1,
      skipBytes: 0,
      takeBytes: 1,
      includesFinalSegment: true,
    });
    expect(segmentSpan(S - 1, S, 3 * S)).toEqual({
      firstSegment: 0,
      lastSegment: 1,
      blobStart: H,
      blobEndInclusive: H + 2 * SB - 1,
      skipBytes: S - 1,
      takeBytes: 2,
      includesFinalSegment: false,
    });
    expect(segmentSpan(2 * S + 5, 2 * S + 9, 2 * S + 10).includesFinalSegment).toBe(true);
    expect(segmentSpan(2 * S + 5, 2 * S + 9, 2 * S + 10).blobEndInclusive).toBe(
      encryptedSize(2 * S + 10) - 1,
    );
  });

  it("segmentSpan refuses ranges outside the plaintext", () => {
    expect(() => segmentSpan(5, 4, 10)).toThrow(RangeError);
    expect(() => segmentSpan(0, 10, 10)).toThrow(RangeError);
    expect(() => segmentSpan(0, 0, 0)).toThrow(RangeError);
    expect(() => segmentSpan(-1, 0, 10)).toThrow(RangeError);
  });

  const size = 3 * S + 100;
  const plain = randomBytes(size);
  const exact = randomBytes(2 * S);
  const blobs = Promise.all([encrypt(plain, 4), encrypt(exact, 4)]);

  const ranges: Array<[string, number, number, "plain" | "exact"]> = [
    ["first byte", 0, 0, "plain"],
    ["across the first boundary", S - 1, S, "plain"],
    ["across two boundaries", S - 5, 2 * S + 5, "plain"],
    ["one whole middle segment", S, 2 * S - 1, "plain"],
    ["the short final segment", 3 * S, size - 1, "plain"],
    ["the last byte", size - 1, size - 1, "plain"],
    ["everything", 0, size - 1, "plain"],
    ["the last byte of a full final segment", 2 * S - 1, 2 * S - 1, "exact"],
  ];

  it.each(ranges)("decrypts %s", async (_name, start, end, which) => {
    const [plainBlob, exactBlob] = await blobs;
    const [data, blob] = which === "plain" ? [plain, plainBlob] : [exact, exactBlob];
    const span = segmentSpan(start, end, data.length);
    const body = blob.subarray(span.blobStart, span.blobEndInclusive + 1);
    const result = await run(createRangeDecryptStream(dek, 4, blob.subarray(0, H), span), body, 5000);
    expect(result.error).toBeUndefined();
    expect(result.output.equals(data.subarray(start, end + 1))).toBe(true);
  });

  it("decrypts a range fed through one buffer the caller refills after each update", async () => {
    const [blob] = await blobs;
    const span = segmentSpan(S - 5, 3 * S + 7, size);
    const body = blob.subarray(span.blobStart, span.blobEndInclusive + 1);
    const decryptor = createRangeDecryptor(dek, 4, blob.subarray(0, H), span);
    const reused = Buffer.alloc(5000);
    const out: Buffer[] = [];
    for (let at = 0; at < body.length; at += reused.length) {
      const n = body.copy(reused, 0, at, at + reused.length);
      out.push(...decryptor.update(reused.subarray(0, n)));
      reused.fill(0xee);
    }
    out.push(...decryptor.final());
    expect(Buffer.concat(out).equals(plain.subarray(S - 5, 3 * S + 8))).toBe(true);
  });

  it("refuses a span that does not match its segments synchronously", () => {
    const span = segmentSpan(S - 5, 2 * S + 5, size);
    const header = Buffer.alloc(H);
    expect(() => createRangeDecryptor(dek, 4, header, { ...span, lastSegment: -1 })).toThrow(RangeError);
    expect(() =>
      createRangeDecryptor(dek, 4, header, { ...span, lastSegment: span.firstSegment - 1 }),
    ).toThrow(RangeError);
    expect(() =>
      createRangeDecryptor(dek, 4, header, { ...span, blobEndInclusive: span.blobEndInclusive + 1 }),
    ).toThrow(RangeError);
    expect(() => createRangeDecryptor(randomBytes(16), 4, header, span)).toThrow(TypeError);
  });

  it("rejects a tampered, short or long range", async () => {
    const [blob] = await blobs;
    const header = blob.subarray(0, H);
    const span = segmentSpan(S - 5, 2 * S + 5, size);
    const body = blob.subarray(span.blobStart, span.blobEndInclusive + 1);
    const expected = plain.subarray(S - 5, 2 * S + 6);
    // Tampered or short input: part of the range is missing. Long input: every byte of the range
    // may have been verified before the surplus shows up, but the stream still fails.
    const cases: Array<[Buffer, Buffer, "short" | "long"]> = [
      [header, flip(body, 100), "short"],
      [flip(header, 8), body, "short"],
      [header, body.subarray(0, body.length - 1), "short"],
      [header, body.subarray(0, SB), "short"],
      [header, Buffer.concat([body, Buffer.alloc(1)]), "long"],
      [header, blob.subarray(span.blobStart, span.blobEndInclusive + 1 + SB), "long"],
    ];
    for (const [h, b, kind] of cases) {
      const result = await run(createRangeDecryptStream(dek, 4, h, span), b);
      expect(result.error).toBeInstanceOf(IntegrityError);
      expect(result.output.equals(expected.subarray(0, result.output.length))).toBe(true);
      if (kind === "short") expect(result.output.length).toBeLessThan(expected.length);
    }
  });

  it("checks the final flag when the range includes the final segment", async () => {
    const [, exactBlob] = await blobs;
    // Pretend the part ended after segment 0: segment 0 is not final, so this must fail.
    const span = segmentSpan(S - 1, S - 1, S);
    const body = exactBlob.subarray(span.blobStart, span.blobEndInclusive + 1);
    const result = await run(createRangeDecryptStream(dek, 4, exactBlob.subarray(0, H), span), body);
    expect(result.error).toBeInstanceOf(IntegrityError);
    expect(result.output.length).toBe(0);
  });

  it("rejects a header that is not a blob header", async () => {
    const [blob] = await blobs;
    const span = segmentSpan(0, 10, size);
    const body = blob.subarray(span.blobStart, span.blobEndInclusive + 1);
    for (const header of [Buffer.alloc(H), blob.subarray(0, H - 1)]) {
      const result = await run(createRangeDecryptStream(dek, 4, header, span), body);
      expect(result.error).toBeInstanceOf(IntegrityError);
      expect(result.output.length).toBe(0);
    }
    expect(() => parseBlobHeader(Buffer.alloc(H))).toThrow(IntegrityError);
  });
});
