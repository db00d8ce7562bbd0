import { createRequire } from "node:module";
import type { Redis } from "ioredis";
import type * as Flexible from "rate-limiter-flexible";
import { AppError } from "../shared/errors.js";

// The package's index loads every backend it has (Mongo, MySQL, Postgres, Memcache, DynamoDB...);
// only the classes used are required, from their own files, and the Redis one with the first Redis.
const require = createRequire(import.meta.url);
const RateLimiterMemory =
  require("rate-limiter-flexible/lib/RateLimiterMemory.js") as typeof Flexible.RateLimiterMemory;
const RateLimiterRes =
  require("rate-limiter-flexible/lib/RateLimiterRes.js") as typeof Flexible.RateLimiterRes;

/** The outcome of one counted call, for the RateLimit headers. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** A named fixed-window limit of `points` calls per `windowSeconds`. */
export interface RateLimitRule {
  name: string;
  points: number;
  windowSeconds: number;
}

/**
 * Counts calls per key against named rules, in memory or in Redis (shared by every node). When Redis
 * is unreachable the counts fall back to memory so the API keeps answering.
 */
export class RateLimiter {
  private readonly limiters = new Map<string, Flexible.RateLimiterAbstract>();

  constructor(
    rules: RateLimitRule[],
    redis: Redis | undefined,
    private readonly prefix = "ferry",
  ) {
    const RateLimiterRedis = redis
      ? (require("rate-limiter-flexible/lib/RateLimiterRedis.js") as typeof Flexible.RateLimiterRedis)
      : undefined;
    for (const rule of rules) {
      const memory = new RateLimiterMemory({
        points: rule.points,
        duration: rule.windowSeconds,
        keyPrefix: rule.name,
      });
      this.limiters.set(
        rule.name,
        RateLimiterRedis
          ? new RateLimiterRedis({
              storeClient: redis,
              points: rule.points,
              duration: rule.windowSeconds,
              keyPrefix: `${this.prefix}:rl:${rule.name}`,
              insuranceLimiter: memory,
            })
          : memory,
      );
    }
  }

  /**
   * Counts one call for `key` under rule `name`; returns the state for headers, or throws
   * AppError RATE_LIMIT_REACHED (429) with Retry-After and RateLimit headers.
   */
  async consume(name: string, key: string): Promise<RateLimitState> {
    const limiter = this.limiters.get(name);
    if (!limiter) throw new Error(`Unknown rate limit rule ${name}`);
    try {
      const res = await limiter.consume(key);
      return {
        limit: limiter.points,
        remaining: res.remainingPoints,
        resetSeconds: Math.ceil(res.msBeforeNext / 1000),
      };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retry = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new AppError(
        "RATE_LIMIT_REACHED",
        `Request was throttled. Expected available in ${retry} seconds.`,
        {
          "retry-after": String(retry),
          ...rateLimitHeaders({ limit: limiter.points, remaining: 0, resetSeconds: retry }),
        },
      );
    }
  }
}

/** The IETF RateLimit header fields for a state. */
/** Of two limit states, the one with fewer calls left (its headers are the ones a client must obey). */
export function tighterLimit(a: RateLimitState | undefined, b: RateLimitState): RateLimitState {
  return !a || b.remaining < a.remaining ? b : a;
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    "ratelimit-limit": String(state.limit),
    "ratelimit-remaining": String(Math.max(0, state.remaining)),
    "ratelimit-reset": String(state.resetSeconds),
  };
}
