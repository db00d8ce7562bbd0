/**
 * JSON aggregation on either engine, so one statement can return a row with its related rows:
 * json_group_array/json_object on SQLite, json_agg/to_json on PostgreSQL (Kysely's helpers).
 */
import type { RawBuilder } from "kysely";
import {
  jsonArrayFrom as postgresArrayFrom,
  jsonObjectFrom as postgresObjectFrom,
} from "kysely/helpers/postgres";
import { jsonArrayFrom as sqliteArrayFrom, jsonObjectFrom as sqliteObjectFrom } from "kysely/helpers/sqlite";
import type { Dialect } from "./database.js";

/** A select query with explicit columns, usable as a correlated subquery. */
type Subquery = Parameters<typeof sqliteArrayFrom<Record<string, unknown>>>[0];

/** JSON aggregation for one dialect. Subqueries must select explicit columns (no selectAll). */
export interface JsonAggregation {
  /** The subquery's rows, in its order, as one JSON array value ([] when none). */
  arrayFrom(subquery: Subquery): RawBuilder<unknown>;
  /** The subquery's first row as one JSON object value, or null. */
  objectFrom(subquery: Subquery): RawBuilder<unknown>;
}

/** JSON aggregation for `dialect`; read the values back with `parseJsonValue`. */
export function jsonAggregation(dialect: Dialect): JsonAggregation {
  return dialect === "postgres"
    ? { arrayFrom: postgresArrayFrom, objectFrom: postgresObjectFrom }
    : { arrayFrom: sqliteArrayFrom, objectFrom: sqliteObjectFrom };
}

/**
 * A value built by `jsonAggregation`: PostgreSQL's driver hands it parsed; SQLite hands JSON text
 * (also for arrays nested in an aggregated row, since SQLite keeps no JSON type through a subquery).
 */
export function parseJsonValue<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/**
 * Compile-time check that `columns` names every column of a row type, so an aggregated row never
 * silently lacks a column added later: `allColumns<MediaRow>()([...])`.
 */
export function allColumns<Row>() {
  return <const C extends readonly (keyof Row & string)[]>(
    columns: C &
      ([Exclude<keyof Row, C[number]>] extends [never]
        ? unknown
        : { missing: Exclude<keyof Row, C[number]> }),
  ): C => columns;
}
