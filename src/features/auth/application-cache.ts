import type { Redis } from "ioredis";
import type { Database } from "../../db/database.js";
import type { ApplicationRow } from "./auth.repository.js";

/** The Redis key of the revocation counter every node compares its cached entries with. */
export const REVOCATION_EPOCH_KEY = "ferry:auth:revocation-epoch";
/** The Redis channel a revoke publishes the application id on (a hint: the counter is the guarantee). */
export const REVOCATION_CHANNEL = "ferry:auth:revoked";

/**
 * Says whether cached application rows are still current. `current()` answers a stamp that changes
 * whenever any node (or process) may have revoked an application since, or undefined when it cannot
 * tell: the caller then reads the database. `announce()` runs after a revocation is committed and
 * resolves only once every node's next `current()` answers a new stamp.
 */
interface FreshnessGuard {
  current(): Promise<string | undefined>;
  announce(applicationId: number): Promise<void>;
  close(): void;
}

/**
 * Active application rows by id, so an authenticated call costs no query for its application.
 * Exact: a revocation that returned is refused by every node on its next call (ADR 0036).
 */
export class ApplicationCache {
  private readonly entries = new Map<number, { row: ApplicationRow; stamp: string }>();

  constructor(
    private readonly guard: FreshnessGuard | undefined,
    private readonly max = 10_000,
  ) {}

  /** The row of application `id` from the cache while the guard says it is current, else from `load`. */
  async get(
    id: number,
    load: () => Promise<ApplicationRow | undefined>,
  ): Promise<ApplicationRow | undefined> {
    if (!this.guard) return load();
    // The stamp is read before the row: a revocation between the two leaves a stale stamp, so the
    // next call reloads.
    const stamp = await this.guard.current();
    if (stamp === undefined) return load();
    const hit = this.entries.get(id);
    if (hit && hit.stamp === stamp) return hit.row;
    const row = await load();
    if (row && row.revoked_at === null) {
      if (!hit && this.entries.size >= this.max)
        this.entries.delete(this.entries.keys().next().value as number);
      this.entries.set(id, { row, stamp });
    } else {
      this.entries.delete(id);
    }
    return row;
  }

  /**
   * After application `id` changed in the database (revoked; any future change of its scopes
   * too): drops it here and tells every other node. Throws when other nodes could not be told (the
   * caller reports the change as not confirmed).
   */
  async changed(id: number): Promise<void> {
    this.entries.delete(id);
    await this.guard?.announce(id);
  }

  /** Drops application `id` from this node only (another node announced its revocation). */
  dropLocal(id: number): void {
    this.entries.delete(id);
  }

  /** Stops listening for other nodes' revocations. */
  close(): void {
    this.guard?.close();
  }
}

/**
 * With Redis: a shared counter read on every lookup (one Redis GET, no database query) and a
 * published id so other nodes drop the entry before their next call. A node that cannot reach
 * Redis reads the database instead.
 */
function redisGuard(
  redis: Redis,
  onError: (err: Error) => void,
): FreshnessGuard & { onRevoked(listener: (id: number) => void): void } {
  let subscriber: Redis | undefined;
  const listeners = new Set<(id: number) => void>();
  return {
    async current() {
      if (redis.status !== "ready") return undefined;
      try {
        return (await redis.get(REVOCATION_EPOCH_KEY)) ?? "0";
      } catch {
        return undefined;
      }
    },
    async announce(applicationId) {
      await redis.incr(REVOCATION_EPOCH_KEY);
      await redis.publish(REVOCATION_CHANNEL, String(applicationId)).catch(onError);
    },
    close() {
      subscriber?.disconnect();
    },
    onRevoked(listener) {
      listeners.add(listener);
      if (subscriber) return;
      subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: false });
      subscriber.on("error", onError);
      subscriber.on("message", (_channel: string, message: string) => {
        const id = Number(message);
        if (Number.isSafeInteger(id)) for (const l of listeners) l(id);
      });
      subscriber.subscribe(REVOCATION_CHANNEL).catch(onError);
    },
  };
}

/**
 * SQLite: its data_version changes when another connection (another `ferry serve`, the `ferry` CLI,
 * a worker process) commits, which drops every entry.
 */
function sqliteGuard(externalChanges: () => number | undefined): FreshnessGuard {
  return {
    async current() {
      const version = externalChanges();
      return version === undefined ? undefined : String(version);
    },
    async announce() {},
    close() {},
  };
}

/**
 * Builds the cache for this deployment. SQLite: its own change counter (every process that can
 * revoke shares the database file on this machine, and reading the counter costs less than a Redis
 * round trip). PostgreSQL with Redis: the shared Redis counter. PostgreSQL without Redis: no caching
 * (nothing shared says another node revoked).
 */
export function createApplicationCache(
  database: Database,
  redis: Redis | undefined,
  onError: (err: Error) => void = () => {},
): ApplicationCache {
  if (database.externalChanges) return new ApplicationCache(sqliteGuard(database.externalChanges));
  if (redis) {
    const guard = redisGuard(redis, onError);
    const cache = new ApplicationCache(guard);
    guard.onRevoked((id) => cache.dropLocal(id));
    return cache;
  }
  return new ApplicationCache(undefined);
}
