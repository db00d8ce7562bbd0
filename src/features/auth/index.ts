/**
 * The auth feature: accounts, applications (hashed API keys, scopes) and JWT tokens (spec:
 * Authentication), with `ferry admin` commands.
 */
import type { Redis } from "ioredis";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import type { Clock } from "../../shared/clock.js";
import { bindCommands, type Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import { AccountApplications } from "./account-applications.service.js";
import { createApplicationCache } from "./application-cache.js";
import { applicationsRoutes } from "./applications.routes.js";
import { adminCommands } from "./auth.commands.js";
import { authRoutes } from "./auth.routes.js";
import { AuthService } from "./auth.service.js";

export {
  AccountApplications,
  type ApplicationsActor,
  type ApplicationView,
} from "./account-applications.service.js";
export type { AccountProfile, AccountsService } from "./accounts.service.js";
export { adminCommands } from "./auth.commands.js";
export type { AccountRow, ApplicationRow } from "./auth.repository.js";
export { type AuthService, hashApiKey, type TokenClaims } from "./auth.service.js";

/** Builds the auth feature. */
export function createAuthFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  rateLimiter: RateLimiter;
  /** Shared by every node when set: revocations are announced through it (ADR 0036). */
  redis?: Redis | undefined;
  onError?: (err: Error) => void;
}): Feature<AuthService> {
  const applications = createApplicationCache(
    deps.database,
    deps.redis,
    deps.onError,
    deps.config.REVOCATION_CHECK_SECONDS * 1000,
  );
  const service = new AuthService(
    deps.database,
    deps.config,
    deps.clock,
    deps.keyRing,
    deps.audit,
    applications,
  );
  return {
    service,
    routes: [
      authRoutes({
        auth: service,
        rateLimiter: deps.rateLimiter,
        environment: deps.config.FERRY_ENVIRONMENT,
      }),
      applicationsRoutes(new AccountApplications(deps.database, service, deps.audit)),
    ],
    commands: bindCommands(adminCommands, service),
  };
}
