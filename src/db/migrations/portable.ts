/**
 * DDL helpers shared by migrations so one migration runs on SQLite and PostgreSQL.
 * Frozen with the migrations: change behaviour only by adding new helpers.
 */
import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, PostgresAdapter } from "kysely";

/** True when the migration runs on PostgreSQL. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Adds an auto-increment integer primary key column `id`. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>) {
  return isPostgres(db)
    ? table.addColumn("id", "serial", (c) => c.primaryKey())
    : table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());
}

/** Adds `created` and `updated` timestamp columns (fixed-width ISO text, see src/shared/time.ts). */
export function withTimestamps<T extends string>(table: CreateTableBuilder<T, any>) {
  return table
    .addColumn("created", "text", (c) => c.notNull())
    .addColumn("updated", "text", (c) => c.notNull());
}

/** Column type for 64-bit integers (byte counts): bigint on both (SQLite treats it as INTEGER). */
export const bigint = "bigint" as const;

/** A foreign key column with ON DELETE behaviour. */
export function fk(table: string, onDelete: "cascade" | "set null" | "restrict" = "cascade") {
  return (c: ColumnDefinitionBuilder) => c.references(`${table}.id`).onDelete(onDelete);
}
