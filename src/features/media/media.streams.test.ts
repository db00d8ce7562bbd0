import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { flipByte } from "../../../test/helpers/media.js";
import { LocalBlobStore } from "../../adapters/blob-store/local-blob-store.js";
import { IntegrityError } from "../../crypto/integrity-error.js";
import { createDecryptStream, createEncryptStream } from "../../crypto/segment-aead.js";
import { markOwned, releaseOwned } from "../../shared/owned-buffers.js";
import type { MediaPartRow } from "./media.repository.js";
import { readPlaintext, storeEncryptedPart, UploadMeter } from "./media.streams.js";

const MiB = 1024 * 1024;

describe("upload meter", () => {
  it("hands the digests every byte of a piece before the encryptor frees it", async () => {
    const dek = randomBytes(32);
    const plain = randomBytes(5 * 64 * 1024 + 333);
    const hashed = createHash("sha256");
    const meter = new UploadMeter(plain.length, () => new Error("over the limit"), {
      update(chunk) {
        hashed.update(chunk);
        return undefined;
      },
    });
    const encrypt = createEncryptStream(dek, 0);
    const blob: Buffer[] = [];
    encrypt.on("data", (piece: Buffer) => blob.push(Buffer.from(piece)));
    meter.pipe(encrypt);
    const pieces: Buffer[] = [];
    for (let at = 0; at < plain.length; at += 50_000) {
      pieces.push(markOwned(Buffer.from(plain.subarray(at, at + 50_000))));
      meter.write(pieces.at(-1));
      // The streams flowing and idle, as between a request's body pieces.
      await new Promise(setImmediate);
    }
    meter.end();
    await once(encrypt, "end");

    expect(pieces.every((piece) => piece.length === 0)).toBe(true);
    expect(meter.bytes).toBe(plain.length);
    expect(hashed.digest("hex")).toBe(createHash("sha256").update(plain).digest("hex"));
    const decrypt = createDecryptStream(dek, 0);
    const out: Buffer[] = [];
    decrypt.on("data", (piece: Buffer) => out.push(piece));
    decrypt.end(Buffer.concat(blob));
    await once(decrypt, "end");
    expect(Buffer.concat(out).equals(plain)).toBe(true);
  });
});

describe("storing a part", () => {
  /** Stores `plain` in four owned pieces; `free` may free one of them the way a wrong ownership rule would. */
  async function storeWithFreed(free: (piece: Buffer, pieces: Buffer[]) => void) {
    const dir = await mkdtemp(join(tmpdir(), "ferry-part-"));
    try {
      const store = new LocalBlobStore(dir);
      const plain = randomBytes(3 * 64 * 1024 + 10);
      const pieces = [0, 1, 2, 3].map((i) => {
        // Each piece the only view of its memory, as the HTTP parser makes them (never Node's pool).
        const bytes = plain.subarray(i * 64 * 1024, (i + 1) * 64 * 1024);
        const piece = Buffer.allocUnsafeSlow(bytes.length);
        bytes.copy(piece);
        return markOwned(piece);
      });
      const meter = new UploadMeter(plain.length, () => new Error("over the limit"), {
        update(chunk) {
          free(chunk as Buffer, pieces);
          return undefined;
        },
      });
      const source = Readable.from(pieces, { objectMode: false });
      const stored = storeEncryptedPart(store, "media/aa/part", randomBytes(32), 0, source, meter);
      const outcome = await stored.then(
        () => "stored",
        (error: Error) => error.message,
      );
      return { outcome, counted: meter.bytes, left: await readdir(join(dir, "media", "aa")).catch(() => []) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it("refuses a part whose bytes were counted but freed before they were encrypted, and leaves no blob", async () => {
    const result = await storeWithFreed((chunk, pieces) => {
      if (chunk === pieces[2]) releaseOwned(chunk);
    });
    expect(result).toEqual({
      outcome: "stored 131082 of the 196618 bytes received for part 0",
      counted: 196618,
      left: [],
    });
  });

  it("stores every byte when nothing is freed before its time", async () => {
    const result = await storeWithFreed(() => {});
    expect(result).toEqual({ outcome: "stored", counted: 196618, left: ["part.blob"] });
  });
});

describe("reading a media's plaintext", () => {
  const PART = 3 * MiB + 5;

  /** Stores `parts` as parts 1.. of a media; returns the store (each getThrough's consumer counted) and rows. */
  async function storeParts(dir: string, dek: Buffer, parts: Buffer[]) {
    const store = new LocalBlobStore(dir);
    const rows: MediaPartRow[] = [];
    for (const [i, plain] of parts.entries()) {
      const meter = new UploadMeter(plain.length, () => new Error("over the limit"), undefined);
      const key = `media/bb/part-${i + 1}`;
      const stored = await storeEncryptedPart(store, key, dek, i + 1, Readable.from([plain]), meter);
      rows.push({
        media_id: 1,
        part_index: i + 1,
        plain_bytes: plain.length,
        blob_key: key,
        blob_store: stored.store,
        header: stored.header,
        created: "2026-01-01T00:00:00Z",
      });
    }
    // The blocks handed to each part's decryptor so far, by key: a part's block has been read.
    const handed = new Map<string, number>();
    const counting = Object.create(store) as LocalBlobStore;
    counting.getThrough = (key, range, consumer) =>
      store.getThrough(key, range, {
        update(bytes) {
          handed.set(key, (handed.get(key) ?? 0) + 1);
          return consumer.update(bytes);
        },
        final: () => consumer.final(),
      });
    return { store: counting, rows, handed };
  }

  it("reads the next part's first block while the current part streams, every byte in order", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ferry-plain-"));
    try {
      const dek = randomBytes(32);
      const parts = [randomBytes(PART), randomBytes(PART), randomBytes(1000)];
      const { store, rows, handed } = await storeParts(dir, dek, parts);
      const stream = readPlaintext(store, dek, rows);
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.done).toBe(false);
      // The reader has taken one piece of part 1; part 2 is opened and its first block read.
      for (let i = 0; i < 200 && !handed.get("media/bb/part-2"); i++)
        await new Promise((resolve) => setTimeout(resolve, 5));
      expect(handed.get("media/bb/part-2")).toBeGreaterThan(0);
      expect(handed.get("media/bb/part-3")).toBeUndefined();
      const pieces = [first.value as Buffer];
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        pieces.push(next.value as Buffer);
      expect(Buffer.concat(pieces).equals(Buffer.concat(parts))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fails a part read ahead only once the parts before it have been streamed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ferry-plain-"));
    try {
      const dek = randomBytes(32);
      const parts = [randomBytes(PART), randomBytes(PART)];
      const { store, rows } = await storeParts(dir, dek, parts);
      // Part 2's first segment tampered with: its first block, read ahead, fails to decrypt.
      await flipByte(join(dir, "media", "bb", "part-2.blob"), 100);
      const pieces: Buffer[] = [];
      const failure = await (async () => {
        for await (const piece of readPlaintext(store, dek, rows)) {
          pieces.push(piece as Buffer);
          await new Promise(setImmediate); // a slow reader: part 2 is read ahead long before it is reached
        }
      })().then(
        () => undefined,
        (error: Error) => error,
      );
      expect(failure).toBeInstanceOf(IntegrityError);
      expect(Buffer.concat(pieces).equals(parts[0]!)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
