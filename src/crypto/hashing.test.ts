import { describe, expect, it } from "vitest";
import { constantTimeEqual, randomToken, sha256Hex } from "./hashing.js";

describe("hashing", () => {
  it("sha256Hex hashes strings as UTF-8 and buffers as bytes", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex(Buffer.from("abc"))).toBe(sha256Hex("abc"));
    expect(sha256Hex("é")).toBe(sha256Hex(Buffer.from([0xc3, 0xa9])));
  });

  it("constantTimeEqual compares values of any lengths", () => {
    expect(constantTimeEqual("secret", "secret")).toBe(true);
    expect(constantTimeEqual("secret", Buffer.from("secret"))).toBe(true);
    expect(constantTimeEqual("secret", "secreT")).toBe(false);
    expect(constantTimeEqual("secret", "secret-longer")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual("", "x")).toBe(false);
  });

  it("randomToken returns base64url of the requested size", () => {
    const token = randomToken(16);
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(token, "base64url").length).toBe(16);
    expect(randomToken()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomToken(16)).not.toBe(token);
    expect(() => randomToken(0)).toThrow(RangeError);
    expect(() => randomToken(1.5)).toThrow(RangeError);
  });
});
