import { randomBytes } from "node:crypto";

/** A URL-safe random identifier of `bytes` random bytes (default 24 = 192 bits), base64url. */
export function randomId(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}

/**
 * Parses an id that may arrive as an integer or a numeric string (compat item 6).
 * Returns undefined when the value is not a positive safe integer.
 */
export function parseId(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value === "string" && /^\d{1,15}$/.test(value.trim())) {
    const n = Number(value.trim());
    return n > 0 ? n : undefined;
  }
  return undefined;
}

/** Shows only the start of a secret or identifier, for logs: `abcd…`. */
export function maskSecret(value: string, keep = 4): string {
  return value.length <= keep ? "…" : `${value.slice(0, keep)}…`;
}
