/** An incremental SHA-256: node:crypto on Node, @noble/hashes elsewhere (Web Crypto cannot hash incrementally). */
export interface Sha256 {
  update(bytes: Uint8Array): void;
  hex(): string;
  /** An independent hash of the bytes so far (to read a digest and go on hashing). */
  copy(): Sha256;
}

const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

/** A new incremental SHA-256. */
export async function createSha256(): Promise<Sha256> {
  if (isNode) {
    const { createHash } = await import("node:crypto");
    const wrap = (h: ReturnType<typeof createHash>): Sha256 => ({
      update: (b) => h.update(b),
      hex: () => h.digest("hex"),
      copy: () => wrap(h.copy()),
    });
    return wrap(createHash("sha256"));
  }
  const { sha256 } = await import("@noble/hashes/sha2.js");
  const wrap = (h: ReturnType<typeof sha256.create>): Sha256 => ({
    update: (b) => h.update(b),
    hex: () => Array.from(h.digest(), (x) => x.toString(16).padStart(2, "0")).join(""),
    copy: () => wrap(h.clone()),
  });
  return wrap(sha256.create());
}

/** SHA-256 hex of one buffer. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const h = await createSha256();
  h.update(bytes);
  return h.hex();
}
