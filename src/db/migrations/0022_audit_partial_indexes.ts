import { type Kysely, sql } from "kysely";

/**
 * The audit search's filter indexes hold only the entries whose filtered value is set. An empty
 * value is never searched (an empty filter filters nothing), yet every entry paid an index insert
 * and, at its commit, a written page for it: an API call's AAA-0010 entry has no related model, and
 * a GET none of a content type; an entry written by a job has no path, address or method. Queries
 * that use these indexes carry the same `<> ''` term, so both databases match it to the index.
 */
const PARTIAL: [name: string, columns: string[]][] = [
  ["audit_entries_account_path_seq_idx", ["account_id", "path", "seq"]],
  ["audit_entries_account_model_seq_idx", ["account_id", "related_model", "seq"]],
  ["audit_entries_account_from_seq_idx", ["account_id", "from_address", "seq"]],
  ["audit_entries_account_method_seq_idx", ["account_id", "method", "seq"]],
  ["audit_entries_account_ctype_seq_idx", ["account_id", "content_type", "seq"]],
  ["audit_entries_account_relation_seq_idx", ["account_id", "related_model", "relation_key", "seq"]],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, columns] of PARTIAL) {
    await db.schema.dropIndex(name).ifExists().execute();
    await db.schema
      .createIndex(name)
      .on("audit_entries")
      .columns(columns)
      .where(sql.ref(columns[1]!), "<>", sql.lit(""))
      .execute();
  }
}

/** Puts back the indexes of every entry. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const [name, columns] of PARTIAL) {
    await db.schema.dropIndex(name).ifExists().execute();
    await db.schema.createIndex(name).on("audit_entries").columns(columns).execute();
  }
}
