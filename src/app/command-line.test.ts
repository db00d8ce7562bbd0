/**
 * `ferry` as an operator meets it: --help on every command and one-line usage errors, all
 * answered before the configuration is read, a folder created or a database opened.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase, testDialect } from "../../test/helpers/db.js";
import { repoRoot } from "../../test/helpers/process.js";
import { commandCatalog } from "./ferry.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("ferry's command line", () => {
  let database: TestDatabase;
  let cwd: string;

  /** Runs bin/ferry.mjs in an empty working folder against a fresh, unmigrated database. */
  const ferry = (args: string[]) =>
    new Promise<Run>((done) => {
      const child = spawn(resolve(repoRoot, "bin/ferry.mjs"), args, {
        cwd,
        env: { ...process.env, LOG_LEVEL: "warn", ...database.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => {
        stdout += d;
      });
      child.stderr.on("data", (d) => {
        stderr += d;
      });
      child.on("exit", (code) => done({ code, stdout, stderr }));
    });

  /** Tables in the test database (none until something migrates it). */
  async function tables(): Promise<string[]> {
    if (testDialect === "sqlite") return readdirSync(database.dataDir);
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      const res = await c.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      return res.rows.map((r) => r.table_name as string);
    } finally {
      await c.end();
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    cwd = mkdtempSync(join(tmpdir(), "ferry-cwd-"));
    // The first run brings the compiled bundle up to date, once, before runs in parallel.
    await ferry(["help"]);
  });
  afterAll(async () => {
    await database?.drop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it("every command answers --help with its usage, creating nothing", async () => {
    const names = ["serve", "worker", "migrate", "doctor", ...commandCatalog.map((c) => c.name)];
    // A few processes at a time: each starts the whole compiled server bundle.
    for (let i = 0; i < names.length; i += 4) {
      await Promise.all(
        names.slice(i, i + 4).map(async (name) => {
          const help = await ferry([...name.split(" "), "--help"]);
          expect(help.code, `${name}: ${help.stderr}`).toBe(0);
          expect(help.stdout, name).toMatch(new RegExp(`^Usage: ferry ${name}( |\\n)`));
          expect(help.stderr, name).toBe("");
        }),
      );
    }
    const createApp = await ferry(["admin", "create-app", "--help"]);
    expect((await ferry(["help", "admin", "create-app"])).stdout).toBe(createApp.stdout);
    expect(createApp.stdout).toContain(
      "Usage: ferry admin create-app --email E --name N [--scopes S ...] [--json]",
    );
    expect(createApp.stdout).toContain("Create an application; prints its API key once.");
    expect(readdirSync(cwd)).toEqual([]);
    expect(await tables()).toEqual([]);
  }, 240_000);

  it("a wrong command line is one line naming the problem, and nothing is created", async () => {
    const cases: [string[], string][] = [
      [
        ["admin", "create-app", "--bogus"],
        "ferry: admin create-app: unknown option --bogus (see `ferry admin create-app --help`)",
      ],
      [
        ["admin", "create-app", "--name", "CRM"],
        "ferry: admin create-app: --email is required (see `ferry admin create-app --help`)",
      ],
      [
        ["admin", "create-app", "--email"],
        "ferry: admin create-app: --email needs a value (see `ferry admin create-app --help`)",
      ],
      [
        ["admin", "revoke-app", "--id", "3", "extra"],
        "ferry: admin revoke-app: unexpected argument extra (see `ferry admin revoke-app --help`)",
      ],
      [["admin", "frobnicate"], 'ferry: unknown command "admin frobnicate" (see `ferry help`)'],
      [["serve", "--workers"], "ferry: serve: unknown option --workers (see `ferry serve --help`)"],
      [["help", "nothing"], 'ferry: unknown command "nothing" (see `ferry help`)'],
    ];
    const results = await Promise.all(cases.map(([args]) => ferry(args)));
    for (const [i, [args, line]] of cases.entries()) {
      expect(results[i]!.code, args.join(" ")).toBe(2);
      expect(results[i]!.stdout, args.join(" ")).toBe("");
      expect(results[i]!.stderr, args.join(" ")).toBe(`${line}\n`);
    }
    expect(readdirSync(cwd)).toEqual([]);
    expect(await tables()).toEqual([]);
  }, 120_000);
});
