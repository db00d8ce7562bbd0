import { randomBytes } from "node:crypto";

/** A URL-safe random identifier of `bytes` random bytes (default 24 = 192 bits), base64url. */
export function randomId(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}

/** Largest row id: ids are 32-bit integer columns on PostgreSQL. */
export const MAX_ROW_ID = 2_147_483_647;

/**
 * Parses an id that may arrive as an integer or a numeric string (clients send foreign keys both ways). Returns undefined
 * unless it is a positive integer up to MAX_ROW_ID, so a huge id reads as "not found", never as a
 * database error.
 */
export function parseId(value: unknown): number | undefined {
  let n: number | undefined;
  if (typeof value === "number") n = value;
  else if (typeof value === "string" && /^\d{1,10}$/.test(value.trim())) n = Number(value.trim());
  return n !== undefined && Number.isSafeInteger(n) && n > 0 && n <= MAX_ROW_ID ? n : undefined;
}
