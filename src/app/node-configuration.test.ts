/**
 * A node joining a cluster with the wrong key ring refuses to start, naming FERRY_MASTER_KEY,
 * instead of issuing tokens and wrapping keys the other nodes cannot read; `ferry doctor` checks a
 * node's configuration against the cluster.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.js";
import { freePort, runFerry } from "../../test/helpers/process.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "../../test/helpers/s3-server.js";

const REDIS_URL = process.env.FERRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const key = () => randomBytes(32).toString("base64");
const CLUSTER_KEY = `k1:${key()}`;

let database: TestDatabase;
let s3: TestS3Server;
let base: Record<string, string>;
const folders: string[] = [];

/** The settings of another node: its own data folder (on SQLite the database file is shared). */
function otherNode(env: Record<string, string>): Record<string, string> {
  if (!database.url) return { ...base, ...env };
  const dir = mkdtempSync(join(tmpdir(), "ferry-node-"));
  folders.push(dir);
  return { ...base, FERRY_DATA_DIR: dir, ...env };
}

beforeAll(async () => {
  database = await createTestDatabase();
  s3 = await startS3Server();
  base = {
    ...database.env,
    ...ferryS3Env(s3),
    REDIS_URL,
    PUBLIC_BASE_URL: "https://ferry.example",
  };
  const first = await runFerry(["admin", "create-account", "--email", "o@example.com", "--json"], {
    ...base,
    FERRY_MASTER_KEY: CLUSTER_KEY,
  });
  expect(first.code, first.stderr).toBe(0);
});

afterAll(async () => {
  await s3?.stop();
  await database?.drop();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

describe("a node's key ring", () => {
  it("is refused at start when a key differs from the one the database recorded", async () => {
    const run = await runFerry(
      ["admin", "list-apps", "--json"],
      otherNode({ FERRY_MASTER_KEY: `k1:${key()}` }),
    );
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain("FERRY_MASTER_KEY");
    expect(run.stderr).toContain("k1");
  });

  it("is refused when the node generated its own key instead of sharing the cluster's", async () => {
    const port = await freePort();
    const run = await runFerry(["serve"], otherNode({ FERRY_MASTER_KEY: "", PORT: String(port) }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^Ferry refuses to start: None of this node's master keys .*FERRY_MASTER_KEY/);
  });

  it("is accepted with the cluster's key, also with a new key added in front of it", async () => {
    expect(
      (await runFerry(["admin", "list-apps", "--json"], otherNode({ FERRY_MASTER_KEY: CLUSTER_KEY }))).code,
    ).toBe(0);
    const rotated = `k2:${key()},${CLUSTER_KEY}`;
    const run = await runFerry(["admin", "list-apps", "--json"], otherNode({ FERRY_MASTER_KEY: rotated }));
    expect(run.code, run.stderr).toBe(0);
  });
});

describe("ferry doctor", () => {
  it("passes every check on a node configured like the cluster", async () => {
    const run = await runFerry(["doctor", "--json"], otherNode({ FERRY_MASTER_KEY: CLUSTER_KEY }));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: { name: string; status: string }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ["database", "ok"],
      ["key ring", "ok"],
      ["blob store", "ok"],
      ["redis", "ok"],
      ["public base url", "ok"],
    ]);
  });

  it("names each misconfiguration of a node", async () => {
    const closed = await freePort();
    const run = await runFerry(
      ["doctor"],
      otherNode({
        FERRY_MASTER_KEY: `k1:${key()}`,
        S3_BUCKET: "no-such-bucket",
        REDIS_URL: `redis://127.0.0.1:${closed}`,
        PUBLIC_BASE_URL: "",
      }),
    );
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^OK {3}database: /);
    expect(lines[1]).toMatch(/^FAIL key ring: .*FERRY_MASTER_KEY/);
    expect(lines[2]).toMatch(/^FAIL blob store: S3 bucket "no-such-bucket" at .*: the bucket does not exist/);
    expect(lines[3]).toMatch(/^FAIL redis: not reachable/);
    expect(lines[4]).toMatch(/^FAIL public base url: PUBLIC_BASE_URL is not set/);
  });

  it("says when S3 refuses the credentials", async () => {
    const run = await runFerry(
      ["doctor"],
      otherNode({ FERRY_MASTER_KEY: CLUSTER_KEY, S3_ACCESS_KEY_ID: "NOBODY", S3_SECRET_ACCESS_KEY: "wrong" }),
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL blob store: .*the credentials were refused/);
  });
});
