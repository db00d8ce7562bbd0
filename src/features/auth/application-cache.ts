import type { Redis } from "ioredis";
import type { Database } from "../../db/database.js";
import { type ApplicationRow, bumpRevocationEpoch, readRevocationEpoch } from "./auth.repository.js";

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
  /** Re-reads what the guard checks on its timer (the database's revocation epoch), now. */
  check?(): Promise<void>;
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

  /**
   * Runs the periodic check now (with Redis: reads the database's revocation epoch; a change
   * drops every entry). The timer calls it every few seconds.
   */
  async checkRevocations(): Promise<void> {
    await this.guard?.check?.();
  }

  /** Stops listening for other nodes' revocations. */
  close(): void {
    this.guard?.close();
  }
}

/** How long a refused (re)subscription waits before it is tried again. */
const RESUBSCRIBE_DELAY_MS = 5_000;

/**
 * With Redis: a shared counter read on every lookup (one Redis GET, no database query) and a
 * published id so other nodes drop the entry before their next call. A node that cannot reach
 * Redis reads the database instead. Redis may lose both (a restart without persistence resets the
 * counter to a value entries were stamped with; a message published while a node was not
 * subscribed is gone), so the stamp also carries the database's revocation epoch, which every
 * revocation bumps and every node reads every `checkIntervalMs` (ADR 0067): that bounds how long
 * a lost revocation can go unseen. A refused subscription (an ACL change: NOPERM) is reported
 * and tried again, never thrown.
 */
function redisGuard(
  redis: Redis,
  database: Database,
  onError: (err: Error) => void,
  checkIntervalMs: number,
): FreshnessGuard & { onRevoked(listener: (id: number) => void): void } {
  let subscriber: Redis | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  let epoch = "?";
  const listeners = new Set<(id: number) => void>();
  const check = async () => {
    try {
      epoch = await readRevocationEpoch(database.db);
    } catch (err) {
      onError(err as Error);
    }
  };
  const timer = setInterval(check, checkIntervalMs);
  timer.unref();
  void check();
  return {
    async current() {
      if (redis.status !== "ready") return undefined;
      try {
        return `${(await redis.get(REVOCATION_EPOCH_KEY)) ?? "0"}/${epoch}`;
      } catch {
        return undefined;
      }
    },
    async announce(applicationId) {
      await bumpRevocationEpoch(database.db);
      await check();
      await redis.incr(REVOCATION_EPOCH_KEY);
      await redis.publish(REVOCATION_CHANNEL, String(applicationId)).catch(onError);
    },
    check,
    close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(retry);
      subscriber?.disconnect();
    },
    onRevoked(listener) {
      listeners.add(listener);
      if (subscriber) return;
      // ioredis's own re-subscription after a reconnect rejects unhandled when refused: this guard
      // subscribes on every "ready" itself instead.
      const sub = redis.duplicate({ enableOfflineQueue: true, lazyConnect: false, autoResubscribe: false });
      subscriber = sub;
      const subscribe = () => {
        clearTimeout(retry);
        sub.subscribe(REVOCATION_CHANNEL).catch((err: Error) => {
          onError(err);
          if (!closed) {
            retry = setTimeout(subscribe, RESUBSCRIBE_DELAY_MS);
            retry.unref();
          }
        });
      };
      sub.on("error", onError);
      sub.on("ready", subscribe);
      sub.on("message", (_channel: string, message: string) => {
        const id = Number(message);
        if (Number.isSafeInteger(id)) for (const l of listeners) l(id);
      });
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
  checkIntervalMs = 2_000,
): ApplicationCache {
  if (database.externalChanges) return new ApplicationCache(sqliteGuard(database.externalChanges));
  if (redis) {
    const guard = redisGuard(redis, database, onError, checkIntervalMs);
    const cache = new ApplicationCache(guard);
    guard.onRevoked((id) => cache.dropLocal(id));
    return cache;
  }
  return new ApplicationCache(undefined);
}
