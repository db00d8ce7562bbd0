/** Vitest global setup: runs once before all test files (see test/helpers/db.ts for per-file databases). */
export default function setup(): void {
  process.env.TZ = "UTC";
}
