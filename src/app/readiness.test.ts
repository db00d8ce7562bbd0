/**
 * /readyz checks every configured dependency (database, blob store, Redis) and names the ones that
 * failed; a node refuses to start on a missing bucket or refused credentials with one clear line.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../test/helpers/app.js";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.js";
import { freePort, runFerry } from "../../test/helpers/process.js";
import { ferryS3Env, startS3Server, type TestS3Server } from "../../test/helpers/s3-server.js";

const REDIS_URL = process.env.FERRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let s3: TestS3Server;
const apps: TestApp[] = [];

beforeAll(async () => {
  s3 = await startS3Server();
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await s3?.stop();
});

async function readyz(env: Record<string, string>) {
  const t = await createTestApp(env);
  apps.push(t);
  return t.app.inject({ method: "GET", url: "/readyz" });
}

describe("/readyz", () => {
  it("is ready when the database, the bucket and Redis answer", async () => {
    const res = await readyz({ ...ferryS3Env(s3), REDIS_URL });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ready" });
  });

  it("names the blob store when the bucket is missing", async () => {
    const res = await readyz({ ...ferryS3Env(s3), S3_BUCKET: "no-such-bucket" });
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    expect(res.json()).toEqual({ code: "SERVICE_UNAVAILABLE", detail: "Not ready: blob store not usable." });
  });

  it("names the blob store when the S3 server is down", async () => {
    const gone = await startS3Server();
    const env = ferryS3Env(gone);
    await gone.stop();
    const res = await readyz(env);
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toBe("Not ready: blob store not usable.");
  });

  it("names Redis when it does not answer, next to the blob store", async () => {
    const closed = await freePort();
    const res = await readyz({
      ...ferryS3Env(s3),
      S3_BUCKET: "no-such-bucket",
      REDIS_URL: `redis://127.0.0.1:${closed}`,
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toBe("Not ready: blob store, redis not usable.");
  });
});

describe("a node whose bucket cannot be used", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it.each([
    ["a missing bucket", { S3_BUCKET: "no-such-bucket" }, /the bucket does not exist/],
    [
      "refused credentials",
      { S3_ACCESS_KEY_ID: "NOBODY", S3_SECRET_ACCESS_KEY: "wrong" },
      /the credentials were refused .*S3_ACCESS_KEY_ID/,
    ],
  ])("refuses to start with %s, in one line", async (_name, settings, why) => {
    const port = await freePort();
    const run = await runFerry(["serve"], {
      ...database.env,
      ...ferryS3Env(s3),
      ...settings,
      PORT: String(port),
      HOST: "127.0.0.1",
    });
    expect(run.code).toBe(2);
    // The AWS SDK may add its own Node.js version notice; Ferry's part is one line, no stack.
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("Ferry") || /^\s+at /.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Ferry refuses to start: the blob store cannot be used: S3 bucket "[^"]+" at /);
    expect(lines[0]).toMatch(why);
    expect(run.stderr).not.toContain("wrong");
    expect(run.stdout).not.toContain("listening");
  });
});
