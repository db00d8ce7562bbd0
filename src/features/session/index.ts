/**
 * The recipient's secure session of a container at `/s/<token>/`: one page per recipient item with
 * the code step, the sender's card and message, the chat, downloads of push features (one file or
 * all as a zip) and the resumable uploader of pull features, built from the request pages' kit.
 */
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { ContainerSessions } from "../containers/index.js";
import type { EnrichmentSteps } from "../enrichments/index.js";
import type { MediaService } from "../media/index.js";
import type { RecipientTokens, TwoFactorService } from "../recipient/index.js";
import type { RequestersService } from "../requesters/index.js";
import { SessionPages } from "./session.context.js";
import { sessionRoutes } from "./session.routes.js";

/** Builds the session pages. */
export function createSessionFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  rateLimiter: RateLimiter;
  accounts: AccountsService;
  branding: BrandingService;
  requesters: RequestersService;
  media: MediaService;
  sessions: ContainerSessions;
  tokens: RecipientTokens;
  twoFactor: TwoFactorService;
  steps: EnrichmentSteps;
}): Feature<SessionPages> {
  const kit = new SessionPages({ ...deps });
  return {
    service: kit,
    routes: [
      sessionRoutes({
        kit,
        twoFactor: deps.twoFactor,
        rateLimiter: deps.rateLimiter,
        media: deps.media,
        steps: deps.steps,
      }),
    ],
  };
}
