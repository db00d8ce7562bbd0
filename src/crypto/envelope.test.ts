import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateDataKey, unwrapDataKey, wrapDataKey, wrappedKeyKid } from "./envelope.js";
import { IntegrityError } from "./integrity-error.js";

const keks = new Map([
  ["k2026-01", randomBytes(32)],
  ["k2026-02", randomBytes(32)],
]);
const getKek = (kid: string) => keks.get(kid);

describe("envelope keys", () => {
  it("generates distinct 32-byte data keys", () => {
    const a = generateDataKey();
    expect(a.length).toBe(32);
    expect(a.equals(generateDataKey())).toBe(false);
  });

  it("wraps and unwraps a data key", () => {
    const dek = generateDataKey();
    const wrapped = wrapDataKey(dek, keks.get("k2026-01")!, "k2026-01");
    expect(wrapped).toMatch(/^v1\.k2026-01\.[A-Za-z0-9_-]{80}$/);
    expect(wrappedKeyKid(wrapped)).toBe("k2026-01");
    expect(unwrapDataKey(wrapped, getKek).equals(dek)).toBe(true);
    // A random nonce per wrap: the same key never wraps to the same string twice.
    expect(wrapDataKey(dek, keks.get("k2026-01")!, "k2026-01")).not.toBe(wrapped);
  });

  it("re-wraps under a new kid (rotation) without changing the data key", () => {
    const dek = generateDataKey();
    const old = wrapDataKey(dek, keks.get("k2026-01")!, "k2026-01");
    const rotated = wrapDataKey(unwrapDataKey(old, getKek), keks.get("k2026-02")!, "k2026-02");
    expect(wrappedKeyKid(rotated)).toBe("k2026-02");
    expect(unwrapDataKey(rotated, getKek).equals(dek)).toBe(true);
  });

  it("rejects tampering, relabelling, unknown kids and malformed strings", () => {
    const wrapped = wrapDataKey(generateDataKey(), keks.get("k2026-01")!, "k2026-01");
    const [version, kid, payload] = wrapped.split(".") as [string, string, string];
    const bytes = Buffer.from(payload, "base64url");
    const flipped = (offset: number) => {
      const copy = Buffer.from(bytes);
      copy[offset]! ^= 1;
      return `${version}.${kid}.${copy.toString("base64url")}`;
    };
    const bad = [
      flipped(0), // nonce
      flipped(20), // ciphertext
      flipped(bytes.length - 1), // tag
      // Same KEK registered under another name: the kid is authenticated, so this still fails.
      `${version}.k2026-02.${payload}`,
      `v2.${kid}.${payload}`,
      `${version}.unknown.${payload}`,
      `${version}.${kid}.${payload.slice(0, -2)}`,
      `${version}.${kid}.${payload}!`,
      `${version}.${kid}`,
      "",
      `${wrapped}.extra`,
    ];
    const sameKekTwice = (k: string) => (k === "k2026-02" ? keks.get("k2026-01") : keks.get(k));
    for (const value of bad) {
      expect(() => unwrapDataKey(value, sameKekTwice), value).toThrow(IntegrityError);
    }
    expect(() =>
      unwrapDataKey(wrapped, () => {
        throw new Error("key ring not loaded");
      }),
    ).toThrow(IntegrityError);
    expect(() => unwrapDataKey(wrapped, () => keks.get("k2026-02"))).toThrow(IntegrityError);
    expect(() => wrappedKeyKid("garbage")).toThrow(IntegrityError);
  });

  it("refuses bad inputs when wrapping", () => {
    const kek = keks.get("k2026-01")!;
    expect(() => wrapDataKey(randomBytes(16), kek, "k1")).toThrow(TypeError);
    expect(() => wrapDataKey(generateDataKey(), randomBytes(31), "k1")).toThrow(TypeError);
    for (const kid of ["", "a.b", "x".repeat(65), "é"]) {
      expect(() => wrapDataKey(generateDataKey(), kek, kid)).toThrow(RangeError);
    }
  });
});
