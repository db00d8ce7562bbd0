import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/** scrypt cost: N = 2^15, r = 8, p = 1 (32 MiB, about 100 ms per hash on one core). */
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_BYTES,
      { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

/** Hashes a password with scrypt and a random salt: `scrypt$N$r$p$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** True when `password` matches a hash from hashPassword (constant-time compare; false on a bad hash). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const key = await derive(password, Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of a random password: verified against when the email is unknown, so timing tells nothing. */
let decoy: Promise<string> | undefined;
/** Spends the same time as a real verification and returns false. */
export async function verifyDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(16).toString("hex"));
  await verifyPassword(password, await decoy);
  return false;
}

/** The password rule of the setup and change forms; the problem in words, or undefined when good. */
export function passwordProblem(password: string, email: string): string | undefined {
  if (password.length < 12) return "Use at least 12 characters.";
  if (password.length > 512) return "Use at most 512 characters.";
  if (password.toLowerCase() === email.toLowerCase()) return "Do not use your email address as the password.";
  return undefined;
}
