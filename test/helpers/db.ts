import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { randomId } from "../../src/shared/ids.js";

/** The dialect tests run on, from FERRY_TEST_DIALECT (sqlite default, or postgres). */
export const testDialect: "sqlite" | "postgres" =
  process.env.FERRY_TEST_DIALECT === "postgres" ? "postgres" : "sqlite";

/** Admin URL of the PostgreSQL server tests create databases on. */
export const pgAdminUrl = process.env.FERRY_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A fresh, empty database for one test file: its settings and a drop function. */
export interface TestDatabase {
  /** Environment variables that point Ferry at it (DATABASE_URL or FERRY_DATA_DIR). */
  env: Record<string, string>;
  /** The data directory (always a fresh temp dir; holds SQLite, blobs, keys). */
  dataDir: string;
  /** PostgreSQL URL, when on postgres. */
  url?: string;
  drop(): Promise<void>;
}

/** Creates a fresh database on the current test dialect (a new PostgreSQL database per call). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-test-"));
  if (testDialect === "sqlite") {
    return {
      env: { FERRY_DATA_DIR: dataDir },
      dataDir,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `ferry_t_${randomId(6)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "x")}`;
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    env: { FERRY_DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    dataDir,
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: pgAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
