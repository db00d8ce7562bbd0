import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LocalBlobStore } from "../../adapters/blob-store/local-blob-store.js";
import { createDecryptStream, createEncryptStream } from "../../crypto/segment-aead.js";
import { markOwned, releaseOwned } from "../../shared/owned-buffers.js";
import { storeEncryptedPart, UploadMeter } from "./media.streams.js";

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
