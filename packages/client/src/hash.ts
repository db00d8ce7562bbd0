/** An incremental SHA-256: node:crypto on Node, @noble/hashes elsewhere (Web Crypto cannot hash incrementally). */
export interface Sha256 {
  update(bytes: Uint8Array): void;
  hex(): string;
}

const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

/** A new incremental SHA-256. */
export async function createSha256(): Promise<Sha256> {
  if (isNode) {
    const { createHash } = await import("node:crypto");
    const h = createHash("sha256");
    return { update: (b) => h.update(b), hex: () => h.digest("hex") };
  }
  const { sha256 } = await import("@noble/hashes/sha2.js");
  const h = sha256.create();
  return {
    update: (b) => h.update(b),
    hex: () => Array.from(h.digest(), (x) => x.toString(16).padStart(2, "0")).join(""),
  };
}

/** SHA-256 hex of one buffer. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const h = await createSha256();
  h.update(bytes);
  return h.hex();
}
