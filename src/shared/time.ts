/**
 * Timestamps are stored and returned as fixed-width UTC ISO 8601 strings with microseconds
 * (`2026-01-15T10:00:00.123000Z`): sortable as text on SQLite and PostgreSQL alike.
 */

/** Formats a Date as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (JS dates carry milliseconds; the last 3 digits are 0). */
export function toTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}

/** Formats with milliseconds (`sent_at` of notifications): `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export function toMillisTimestamp(date: Date): string {
  return date.toISOString();
}

/** Parses a stored timestamp (or any ISO string) to a Date; throws RangeError on garbage. */
export function parseTimestamp(value: string): Date {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new RangeError(`Invalid timestamp: ${value}`);
  return d;
}

/** Adds seconds to a Date. */
export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}
