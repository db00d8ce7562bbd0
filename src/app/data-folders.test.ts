/**
 * The modes of Ferry's data on disk, through `ferry serve` on a fresh data folder: the database
 * (session tokens), the key file and the blobs readable by their owner only; then an existing
 * installation with loose modes is tightened at start, with one log line.
 */
import { chmod, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase, testDialect } from "../../test/helpers/db.js";
import {
  eventually,
  type FerryProcess,
  freePort,
  runFerry,
  spawnFerry,
  waitForHttp,
} from "../../test/helpers/process.js";

const TIGHTENED = "Ferry's data was readable by other users of this machine";

/** Every path under `dir` (itself included) with its permission bits. */
async function modesUnder(dir: string): Promise<Map<string, number>> {
  const modes = new Map<string, number>([[dir, (await stat(dir)).mode & 0o777]]);
  for (const entry of await readdir(dir, { recursive: true })) {
    const path = join(dir, entry);
    const info = await stat(path).catch(() => undefined); // -wal/-shm may go as it is read
    if (info) modes.set(path, info.mode & 0o777);
  }
  return modes;
}

/** The paths among `modes` that anyone but the owner may read, write or enter. */
function loose(modes: Map<string, number>): string[] {
  return [...modes].filter(([, mode]) => (mode & 0o077) !== 0).map(([p, m]) => `${p} 0${m.toString(8)}`);
}

describe("Ferry's data on disk", () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let base: string;
  let server: FerryProcess | undefined;
  let whileServing: Map<string, number>;

  async function start(): Promise<FerryProcess> {
    server = spawnFerry(["serve"], { ...env, LOG_LEVEL: "info" });
    await waitForHttp(`${base}/healthz`, server);
    return server;
  }
  async function stop(): Promise<void> {
    server?.child.kill("SIGTERM");
    await server?.exited;
    server = undefined;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    // A data folder that does not exist yet, as on a first start.
    dataDir = join(database.dataDir, "ferry-data");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = { ...database.env, FERRY_DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" };
    env.PUBLIC_BASE_URL = base;
    const account = await runFerry(["admin", "create-account", "--email", "o@example.com"], env);
    expect(account.code, account.stderr).toBe(0);
    const app = await runFerry(
      ["admin", "create-app", "--email", "o@example.com", "--name", "t", "--json"],
      env,
    );
    const { api_key } = JSON.parse(app.stdout.trim().split("\n").pop()!);
    await start();
    const call = async (path: string, body: unknown, token?: string) => {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `JWT ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBeLessThan(300);
      return res.json();
    };
    const { token } = await call("/v1/auth/get_token/", { api_key, email: "o@example.com" });
    const pull = await call("/v1/request/", { type: "pull" }, token);
    // A stored file: the blob folder and a blob.
    await call(
      `/v1/sandbox/request/${pull.id}/complete/`,
      { files: [{ name: "a.bin", bytes: 5000 }] },
      token,
    );
    whileServing = await modesUnder(dataDir);
  });
  afterAll(async () => {
    await stop();
    await database?.drop();
  });

  it("creates the data folder, database, key file and blobs readable by their owner only", () => {
    const names = [...whileServing.keys()].map((p) => p.slice(dataDir.length));
    expect(names).toContain("/master-keys.json");
    expect(names.some((n) => n.startsWith("/blobs/media/") && n.endsWith(".blob"))).toBe(true);
    if (testDialect === "sqlite")
      expect(names).toEqual(expect.arrayContaining(["/ferry.db", "/ferry.db-wal"]));
    expect(whileServing.get(dataDir)).toBe(0o700);
    expect(whileServing.get(join(dataDir, "blobs"))).toBe(0o700);
    expect(loose(whileServing)).toEqual([]);
  });

  it("tightens an existing installation's loose modes at start, saying so in one log line", async () => {
    await stop();
    const opened = [
      [dataDir, 0o755],
      [join(dataDir, "master-keys.json"), 0o644],
      [join(dataDir, "blobs"), 0o755],
      ...(testDialect === "sqlite" ? [[join(dataDir, "ferry.db"), 0o644] as const] : []),
    ] as const;
    for (const [path, mode] of opened) await chmod(path, mode);
    const restarted = await start();
    await eventually(() => restarted.stdout().includes(TIGHTENED), 10_000);
    const lines = restarted
      .stdout()
      .split("\n")
      .filter((l) => l.includes(TIGHTENED));
    expect(lines, restarted.stdout()).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 40, component: "storage" });
    for (const [path, mode] of opened) {
      const to = path.endsWith("master-keys.json") || path.endsWith("ferry.db") ? "0600" : "0700";
      expect(entry.msg).toContain(`${path} 0${mode.toString(8)} -> ${to}`);
    }
    expect(loose(await modesUnder(dataDir))).toEqual([]);
    // Nothing loose is left: the next start says nothing.
    await stop();
    const quiet = await start();
    await eventually(() => quiet.stdout().includes("ferry listening"), 10_000);
    expect(quiet.stdout()).not.toContain(TIGHTENED);
  });
});
