import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import { createBlobStore } from "../adapters/blob-store/blob-store.js";
import { openKeyRing } from "../adapters/key-ring/key-ring.js";
import type { Config } from "../config/config.js";
import { createDatabase, databaseOptionsFromConfig, pingDatabase } from "../db/database.js";
import { blobStoreOptionsFromConfig } from "../features/media/index.js";
import { judgeKeyRing } from "./key-ring-check.js";

/** One finding of `ferry doctor`. `warn` does not fail the run. */
export interface DoctorCheck {
  name: "database" | "key ring" | "blob store" | "redis" | "public base url";
  status: "ok" | "warn" | "fail";
  detail: string;
}

const TIME_LIMIT_MS = 10_000;

/** Rejects after `ms` with "no answer in N s" unless `work` settles first. */
async function within<T>(work: Promise<T>, ms = TIME_LIMIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n")[0]!.slice(0, 300);
}

/**
 * `ferry doctor`: checks this node's configuration against the cluster it joins, changing nothing
 * but one probe object written to and removed from the blob store: the database answers and is
 * migrated, the key ring matches the one the database recorded, the blob store is reachable and
 * writable, Redis answers, the public base URL is set.
 */
export async function runDoctor(config: Config): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const database = createDatabase(databaseOptionsFromConfig(config));
  try {
    let reachable = false;
    try {
      await within(pingDatabase(database));
      reachable = true;
      checks.push({ name: "database", status: "ok", detail: `${database.dialect} answers` });
    } catch (err) {
      checks.push({
        name: "database",
        status: "fail",
        detail: `${database.dialect} not reachable: ${reason(err)}`,
      });
    }
    const ring = openKeyRing({ masterKeyEnv: config.FERRY_MASTER_KEY, dataDir: config.dataDir });
    const source = config.FERRY_MASTER_KEY ? "FERRY_MASTER_KEY" : `the key file in ${config.dataDir}`;
    if (reachable) {
      try {
        const verdict = await judgeKeyRing(database, ring);
        if (!verdict.ok) checks.push({ name: "key ring", status: "fail", detail: verdict.message });
        else if (verdict.known.length === 0)
          checks.push({
            name: "key ring",
            status: "ok",
            detail: `no key recorded yet: this node's (${source}) is recorded at its first start`,
          });
        else if (!config.FERRY_MASTER_KEY && database.dialect === "postgres")
          checks.push({
            name: "key ring",
            status: "warn",
            detail: `matches, but comes from ${source}: other nodes need the same ring in FERRY_MASTER_KEY`,
          });
        else
          checks.push({
            name: "key ring",
            status: "ok",
            detail: `matches the cluster's (${verdict.known.join(", ")})`,
          });
      } catch (err) {
        checks.push({
          name: "key ring",
          status: "fail",
          detail: `could not read the recorded fingerprints (${reason(err)}); run ferry migrate`,
        });
      }
    } else {
      checks.push({ name: "key ring", status: "fail", detail: "not checked: the database is not reachable" });
    }
  } finally {
    await database.destroy();
  }
  checks.push(await checkBlobStore(config));
  checks.push(await checkRedis(config));
  if (config.PUBLIC_BASE_URL) {
    const insecure = config.FERRY_ENVIRONMENT === "live" && config.publicBaseUrl.startsWith("http:");
    checks.push({
      name: "public base url",
      status: insecure ? "warn" : "ok",
      detail: insecure ? `${config.publicBaseUrl} is not https` : config.publicBaseUrl,
    });
  } else {
    checks.push({
      name: "public base url",
      status: "fail",
      detail: `PUBLIC_BASE_URL is not set: links would point at ${config.publicBaseUrl}`,
    });
  }
  return checks;
}

async function checkBlobStore(config: Config): Promise<DoctorCheck> {
  let store: Awaited<ReturnType<typeof createBlobStore>> | undefined;
  try {
    const options = blobStoreOptionsFromConfig(config);
    store = await createBlobStore(options);
    await within(store.check());
    const key = `doctor/probe-${randomBytes(8).toString("hex")}`;
    const body = randomBytes(64);
    await within(store.put(key, Readable.from([body])));
    const back = Buffer.concat(await (await within(store.get(key))).toArray());
    await within(store.delete(key));
    if (!back.equals(body)) throw new Error("the probe object read back differs from what was written");
    return { name: "blob store", status: "ok", detail: `${options.kind}: writable` };
  } catch (err) {
    return { name: "blob store", status: "fail", detail: reason(err) };
  } finally {
    await store?.close();
  }
}

async function checkRedis(config: Config): Promise<DoctorCheck> {
  if (!config.REDIS_URL) {
    return config.DATABASE_URL
      ? {
          name: "redis",
          status: "warn",
          detail: "REDIS_URL is not set: rate limits count per node and every call reads its application",
        }
      : { name: "redis", status: "ok", detail: "not configured (not needed on SQLite)" };
  }
  const { Redis } = createRequire(import.meta.url)("ioredis") as typeof import("ioredis");
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => {});
  try {
    await within(redis.connect());
    await within(redis.ping());
    return { name: "redis", status: "ok", detail: "answers" };
  } catch (err) {
    return { name: "redis", status: "fail", detail: `not reachable: ${reason(err)}` };
  } finally {
    redis.disconnect();
  }
}

/** The report's text, one line per check. */
export function renderDoctor(checks: readonly DoctorCheck[]): string {
  return checks.map((c) => `${c.status.toUpperCase().padEnd(4)} ${c.name}: ${c.detail}`).join("\n");
}
