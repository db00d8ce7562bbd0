import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bytesOf } from "../../../test/helpers/media.js";
import { clientCatalogue } from "../../shared/i18n/i18n.js";
import { setPageMessages } from "./messages.js";
import { sha256Hex, sha256InScript } from "./sha256.js";
import {
  fingerprintOf,
  formatBytes,
  isUnfinishedUploadOf,
  refusal,
  type ServerUpload,
  unfinishedNotice,
} from "./upload-rules.js";

// Pages carry their messages in a data block; these tests run without a page, in English.
setPageMessages({ locale: "en", format: "en-GB", messages: clientCatalogue("en") });

const nodeSha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

describe("SHA-256 in script (pages without Web Crypto)", () => {
  // Around the padding edges (55, 56, 63, 64 bytes) and past one MiB.
  it.each([0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000, 1024 * 1024 + 3])(
    "matches SHA-256 for %i bytes",
    (n) => {
      const data = new Uint8Array(bytesOf(n, `sha-${n}`));
      expect(Buffer.from(sha256InScript(data)).toString("hex")).toBe(nodeSha256(data));
    },
  );

  it("gives the known digest of 'abc'", () => {
    expect(Buffer.from(sha256InScript(new TextEncoder().encode("abc"))).toString("hex")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("agrees with Web Crypto through sha256Hex", async () => {
    const data = new Uint8Array(bytesOf(70_000, "subtle"));
    expect(await sha256Hex(data)).toBe(nodeSha256(data));
  });
});

describe("a file's fingerprint", () => {
  const CHUNK = 64 * 1024;
  const bytes = bytesOf(3 * CHUNK + 10, "receipts");
  const file = (data: Buffer, name = "receipts-2025.zip", lastModified = 1_760_000_000_000) =>
    new File([new Uint8Array(data)], name, { lastModified });

  it("is the SHA-256 of the name, size, modification time and the first chunk's SHA-256", async () => {
    const head = nodeSha256(bytes.subarray(0, CHUNK));
    const expected = nodeSha256(
      `ferry-upload-v1\nreceipts-2025.zip\n${bytes.length}\n1760000000000\n${head}`,
    );
    expect(await fingerprintOf(file(bytes), CHUNK)).toBe(expected);
  });

  it("is the same for the same file chosen again, and differs for a change in any part of it", async () => {
    const print = await fingerprintOf(file(bytes), CHUNK);
    expect(await fingerprintOf(file(Buffer.from(bytes)), CHUNK)).toBe(print);
    const changedHead = Buffer.from(bytes);
    changedHead[CHUNK - 1] = (changedHead[CHUNK - 1]! + 1) % 256;
    const others = await Promise.all([
      fingerprintOf(file(changedHead), CHUNK),
      fingerprintOf(file(bytes.subarray(0, bytes.length - 1)), CHUNK),
      fingerprintOf(file(bytes, "receipts-2024.zip"), CHUNK),
      fingerprintOf(file(bytes, undefined, 1_760_000_000_001), CHUNK),
      fingerprintOf(file(bytes), CHUNK / 2),
    ]);
    expect(new Set([print, ...others]).size).toBe(6);
  });

  it("matches a server upload only when it is unfinished and has the file's fingerprint, size and chunk count", () => {
    const server: ServerUpload = {
      id: 7,
      name: "receipts-2025.zip",
      bytes: 2 * CHUNK,
      size: 300_000,
      fingerprint: "f".repeat(64),
      state: "uploading",
      total_chunks: 5,
      received_chunks: [1, 2],
    };
    const mine = { size: 300_000, totalChunks: 5, fingerprint: "f".repeat(64) };
    expect(isUnfinishedUploadOf(server, mine)).toBe(true);
    expect(isUnfinishedUploadOf(server, { ...mine, fingerprint: "e".repeat(64) })).toBe(false);
    expect(isUnfinishedUploadOf(server, { ...mine, size: 290_000 })).toBe(false);
    expect(isUnfinishedUploadOf(server, { ...mine, totalChunks: 4 })).toBe(false);
    expect(isUnfinishedUploadOf({ ...server, state: "available" }, mine)).toBe(false);
    expect(isUnfinishedUploadOf({ ...server, fingerprint: null }, mine)).toBe(false);
  });
});

describe("the notice about unfinished uploads", () => {
  const upload = (name: string, received: number[], total: number): ServerUpload => ({
    id: 1,
    name,
    bytes: 0,
    size: null,
    fingerprint: null,
    state: "uploading",
    total_chunks: total,
    received_chunks: received,
  });

  it("names each unfinished upload with the parts the server holds", () => {
    expect(unfinishedNotice([upload("a.zip", [1, 2], 5)])).toBe(
      "Unfinished earlier upload: a.zip (2 of 5 parts). Choose that same file again to finish it, or remove it, then submit.",
    );
    expect(unfinishedNotice([upload("a.zip", [1], 5), upload("b.pdf", [2, 3], 3)])).toBe(
      "Unfinished earlier uploads: a.zip (1 of 5 parts), b.pdf (2 of 3 parts). Choose those same files again to finish them, or remove them, then submit.",
    );
  });

  it("speaks the page's language, sizes included", () => {
    try {
      setPageMessages({ locale: "fr", format: "fr-FR", messages: clientCatalogue("fr") });
      expect(unfinishedNotice([upload("a.zip", [1, 2], 5)])).toBe(
        "Envoi précédent inachevé : a.zip (2 parties sur 5). Choisissez à nouveau ce même fichier pour le terminer, ou supprimez-le, puis validez.",
      );
      expect(formatBytes(1_500_000)).toBe("1,5 Mo");
      expect(
        refusal(
          { name: "x.exe", size: 10 },
          { base: "", csrf: "", chunkBytes: 1, maxFileBytes: 9, extensions: ["pdf"] },
        ),
      ).toBe("x.exe n’est pas accepté : les types acceptés sont pdf.");
    } finally {
      setPageMessages({ locale: "en", format: "en-GB", messages: clientCatalogue("en") });
    }
  });
});
