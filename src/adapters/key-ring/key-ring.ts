import { createHash, hkdfSync, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The master key ring. Each master key has a kid; purpose keys (JWT signing, KEKs that wrap media
 * data keys, secret encryption) are derived from a master key with HKDF, so one rotation rotates all.
 */
export type KeyPurpose = "jwt" | "kek" | "secrets" | "audit-anchor" | "fingerprint";

/** Read access to the ring, plus rotation when the ring is file-backed. */
export interface KeyRing {
  /** kid of the key used for new signatures and new wraps. */
  readonly activeKid: string;
  /** Every kid still in the ring (old ones verify and unwrap). */
  kids(): string[];
  /** A 32-byte key for `purpose` derived from master key `kid`; throws UnknownKeyError. */
  derive(kid: string, purpose: KeyPurpose): Buffer;
  /** Adds a new master key and makes it active; returns its kid. Throws when the ring comes from the environment. */
  rotate(): string;
}

/** A kid that the ring does not hold. */
export class UnknownKeyError extends Error {
  constructor(kid: string) {
    super(`Unknown key id ${JSON.stringify(kid)}`);
    this.name = "UnknownKeyError";
  }
}

interface KeyFile {
  active: string;
  keys: Record<string, string>;
}

const KID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/** How long a kid the ring did not hold stays known as unknown (no reload for it meanwhile). */
export const UNKNOWN_KID_TTL_MS = 30_000;
/** At most one reload of the key file per this interval, whatever kids are asked for. */
export const KEY_RELOAD_INTERVAL_MS = 5_000;
const MAX_UNKNOWN_KIDS = 1_000;

class MasterKeyRing implements KeyRing {
  private readonly cache = new Map<string, Buffer>();
  /** kid → until when it is answered as unknown without a reload. */
  private readonly unknown = new Map<string, number>();
  private lastReload = Number.NEGATIVE_INFINITY;
  constructor(
    private state: KeyFile,
    private readonly persist: ((state: KeyFile) => void) | undefined,
    private readonly reload: (() => KeyFile) | undefined = undefined,
    private readonly now: () => number = Date.now,
  ) {}

  get activeKid(): string {
    return this.state.active;
  }

  kids(): string[] {
    return Object.keys(this.state.keys);
  }

  derive(kid: string, purpose: KeyPurpose): Buffer {
    const cacheKey = `${kid}/${purpose}`;
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    const master = this.state.keys[kid] ?? this.reloadFor(kid);
    if (!master) throw new UnknownKeyError(kid);
    const key = Buffer.from(
      hkdfSync("sha256", Buffer.from(master, "base64"), Buffer.alloc(0), `ferry-${purpose}-v1`, 32),
    );
    this.cache.set(cacheKey, key);
    return key;
  }

  /**
   * Another process (`ferry keys rotate`) may have added `kid` since this one started: re-reads the
   * key file, unless the kid cannot be one, was looked up in vain lately, or the file was read
   * less than KEY_RELOAD_INTERVAL_MS ago. Forged tokens with random kids thus cost no file reads.
   */
  private reloadFor(kid: string): string | undefined {
    if (!this.reload || !KID_PATTERN.test(kid)) return undefined;
    const now = this.now();
    if ((this.unknown.get(kid) ?? 0) > now) return undefined;
    if (now - this.lastReload >= KEY_RELOAD_INTERVAL_MS) {
      this.lastReload = now;
      this.state = { ...this.reload(), active: this.state.active };
      const master = this.state.keys[kid];
      if (master) {
        this.unknown.delete(kid);
        return master;
      }
    }
    if (this.unknown.size >= MAX_UNKNOWN_KIDS) this.unknown.clear();
    this.unknown.set(kid, now + UNKNOWN_KID_TTL_MS);
    return undefined;
  }

  rotate(): string {
    if (!this.persist) {
      throw new Error(
        "The key ring comes from FERRY_MASTER_KEY: add a new 'kid:key' at the front of that variable instead.",
      );
    }
    const kid = `k${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
    const next: KeyFile = {
      active: kid,
      keys: { ...this.state.keys, [kid]: randomBytes(32).toString("base64") },
    };
    this.persist(next);
    this.state = next;
    return kid;
  }
}

/** Parses FERRY_MASTER_KEY ('kid:base64[,kid:base64...]', first active); throws Error on bad input. */
export function parseMasterKeyEnv(value: string): KeyFile {
  const keys: Record<string, string> = {};
  let active = "";
  for (const item of value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const idx = item.indexOf(":");
    const kid = idx > 0 ? item.slice(0, idx) : "";
    const b64 = item.slice(idx + 1);
    if (!KID_PATTERN.test(kid)) throw new Error("FERRY_MASTER_KEY entries must look like 'kid:base64key'");
    if (Buffer.from(b64, "base64").length !== 32)
      throw new Error(`FERRY_MASTER_KEY key ${kid} must be 32 bytes`);
    keys[kid] = b64;
    active ||= kid;
  }
  if (!active) throw new Error("FERRY_MASTER_KEY holds no key");
  return { active, keys };
}

/**
 * Opens the ring: from `masterKeyEnv` when given, else from `<dataDir>/master-keys.json`, created
 * with one fresh key and mode 0600 on first start.
 */
export function openKeyRing(options: {
  masterKeyEnv?: string | undefined;
  dataDir: string;
  /** Milliseconds clock of the unknown-kid cache (tests). */
  now?: () => number;
}): KeyRing {
  if (options.masterKeyEnv) return new MasterKeyRing(parseMasterKeyEnv(options.masterKeyEnv), undefined);
  const path = join(options.dataDir, "master-keys.json");
  const persist = (state: KeyFile): void => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  };
  if (!existsSync(path)) {
    const kid = `k${Date.now().toString(36)}`;
    const state = { active: kid, keys: { [kid]: randomBytes(32).toString("base64") } };
    try {
      // "wx": two processes starting at once must not both create a key file.
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  const read = (): KeyFile => {
    const state = JSON.parse(readFileSync(path, "utf8")) as KeyFile;
    if (!state.active || !state.keys?.[state.active]) throw new Error(`Key file ${path} is damaged`);
    return state;
  };
  return new MasterKeyRing(read(), persist, read, options.now);
}

/**
 * A one-way fingerprint of master key `kid` (hex SHA-256 of a key derived for this purpose only):
 * equal on two nodes exactly when they hold the same key under that kid, and useless to anyone
 * who reads it.
 */
export function keyFingerprint(ring: KeyRing, kid: string): string {
  return createHash("sha256").update(ring.derive(kid, "fingerprint")).digest("hex");
}
