import { spawn } from "node:child_process";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, repoRoot } from "../../test/helpers/process.js";
import { createDatabase } from "./database.js";

// SQLite checkpoints run on a worker thread with its own connection, never inside a COMMIT of the
// request connection; committed rows reach the database file and survive a killed process.
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ferry-checkpoint-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Rows of `t` in the database file alone, ignoring its WAL (a copy opened without the -wal file). */
async function rowsInMainFile(path: string): Promise<number> {
  const copy = join(dir, `copy-${Math.random().toString(16).slice(2)}.db`);
  await copyFile(path, copy);
  try {
    const db = new SQLite(copy, { readonly: true });
    try {
      return (db.prepare("select count(*) as n from t").get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return -1; // copied while a checkpoint wrote it, or the table not checkpointed yet
  } finally {
    await rm(copy, { force: true });
  }
}

describe("SQLite checkpoints", () => {
  it("leave automatic checkpoints off on the request connection and checkpoint on their own", async () => {
    const path = join(dir, "timer.db");
    const database = createDatabase({ sqlitePath: path, checkpointEveryMs: 20 });
    try {
      const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
      expect(auto.rows[0]?.wal_autocheckpoint).toBe(0);
      await sql`create table t (n integer primary key, pad text)`.execute(database.db);
      for (let n = 1; n <= 600; n++) {
        await sql`insert into t (n, pad) values (${n}, ${"y".repeat(4000)})`.execute(database.db);
      }
      // 600 rows of 4 KB: well past the 1,000-page automatic threshold, which is off here.
      await eventually(async () => (await rowsInMainFile(path)) === 600);
    } finally {
      await database.destroy();
    }
  });

  it("resume after a quiet spell, when rows are written again", async () => {
    const path = join(dir, "quiet.db");
    const database = createDatabase({ sqlitePath: path, checkpointEveryMs: 20 });
    try {
      await sql`create table t (n integer primary key, pad text)`.execute(database.db);
      const insert = async (from: number, to: number) => {
        for (let n = from; n <= to; n++) {
          await sql`insert into t (n, pad) values (${n}, ${"z".repeat(4000)})`.execute(database.db);
        }
      };
      await insert(1, 300);
      await eventually(async () => (await rowsInMainFile(path)) === 300);
      // Many checks without a row written: the checkpoint worker has stopped.
      await new Promise((r) => setTimeout(r, 300));
      await insert(301, 900);
      await eventually(async () => (await rowsInMainFile(path)) === 900);
      const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
      expect(auto.rows[0]?.wal_autocheckpoint).toBe(0);
    } finally {
      await database.destroy();
    }
  });

  it("keep every committed row after the process is killed", async () => {
    const path = join(dir, "crash.db");
    const child = spawn(
      process.execPath,
      [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, "test/helpers/sqlite-writer.ts"), path, "400"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const signal = await new Promise((resolve) => child.on("exit", (_code, sig) => resolve(sig)));
    expect(signal).toBe("SIGKILL");
    const committed = Math.max(...out.trim().split("\n").map(Number));
    expect(committed).toBe(400);
    const database = createDatabase({ sqlitePath: path });
    try {
      const rows = await sql<{ n: number }>`select count(*) as n from t`.execute(database.db);
      expect(rows.rows[0]?.n).toBe(400);
    } finally {
      await database.destroy();
    }
  });
});
