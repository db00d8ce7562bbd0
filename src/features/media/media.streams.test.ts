import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { createDecryptStream, createEncryptStream } from "../../crypto/segment-aead.js";
import { markOwned } from "../../shared/owned-buffers.js";
import { UploadMeter } from "./media.streams.js";

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
