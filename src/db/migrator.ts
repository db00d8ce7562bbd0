import { type Kysely, type MigrationResultSet, Migrator } from "kysely";
import { migrations } from "./migrations/index.js";
import type { DB } from "./schema.js";

/** Applies every pending migration; throws with the failing migration's name on error. */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Numbers are handed out ahead of merging, so a lower one can land after a higher one ran;
    // each migration stands alone, and a database at 0028 still takes a later-merged 0023.
    allowUnorderedMigrations: true,
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`Migration ${failed} failed: ${String(result.error)}`, { cause: result.error });
  }
  return (result.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
