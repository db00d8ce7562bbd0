/**
 * The container module: containers wrapping several interactions in one recipient session —
 * recipients and their items with session links, the email text and auth code, features of every
 * kind in one table (pushpull, P2 pull, P2 push) with their files and media tags, the chat, the
 * container callbacks, feature expiry, and sandbox helpers that act as a recipient.
 */

import type { Logger } from "pino";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { CallbackService } from "../callbacks/index.js";
import type { MediaService } from "../media/index.js";
import type { ComposedNotifications } from "../notifications/index.js";
import type { RequestersService } from "../requesters/index.js";
import type { RequestRecords } from "../requests/index.js";
import { ChatService } from "./chat.service.js";
import { ContainerEvents } from "./container-events.js";
import { containerFeatureRoutes } from "./container-features.routes.js";
import { ContainerLifecycle, ContainerSweepJob } from "./container-lifecycle.service.js";
import { ContainerNotifier } from "./container-notify.service.js";
import { ContainerRecords } from "./container-records.js";
import { containerSandboxRoutes } from "./container-sandbox.routes.js";
import { ContainerSandbox } from "./container-sandbox.service.js";
import type { ContainerDeps } from "./containers.context.js";
import { containerRoutes } from "./containers.routes.js";
import { ContainersService } from "./containers.service.js";
import { FeatureExtensionSlot } from "./feature-extensions.js";
import { FeaturesService } from "./features.service.js";
import { RecipientsService } from "./recipients.service.js";
import { ContainerSessions } from "./session.service.js";

export type { FeatureRow } from "./container-features.repository.js";
export type { ActionSource } from "./container-lifecycle.service.js";
export type { ContainerRecords } from "./container-records.js";
export type { ChatClosure } from "./container-state.js";
export { featureCommon, featureInputCommon, Page } from "./containers.schemas.js";
export type { FeatureExtensions } from "./feature-extensions.js";
export type { ExtensionWrite } from "./features.service.js";
export type {
  ChatEntry,
  ContainerSessions,
  SessionAuthCode,
  SessionContext,
  SessionFeatureView,
  SubmitResult,
} from "./session.service.js";

/** What the container module offers. */
export interface Containers {
  readonly containers: ContainersService;
  readonly recipients: RecipientsService;
  readonly features: FeaturesService;
  readonly chat: ChatService;
  readonly notifier: ContainerNotifier;
  readonly lifecycle: ContainerLifecycle;
  readonly sandbox: ContainerSandbox;
  /** What a recipient item's session link opens, and the recipient's actions there. */
  readonly sessions: ContainerSessions;
  /** Where the enrichments plug in the kinds the containers do not know (ADR 0063). */
  readonly extensions: FeatureExtensionSlot;
}

/** The container tables' own state (no dependencies: build it before media). */
export function createContainerRecords(clock: Clock): ContainerRecords {
  return new ContainerRecords(clock);
}

/** Builds the container module. */
export function createContainersFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
  jobs: JobQueue;
  audit: AuditWriter;
  records: RequestRecords;
  requesters: RequestersService;
  media: MediaService;
  notifications: ComposedNotifications;
  callbacks: CallbackService;
  branding: BrandingService;
  accounts: Pick<AccountsService, "profile">;
}): Feature<Containers> {
  const extensions = new FeatureExtensionSlot();
  const context: ContainerDeps = {
    database: deps.database,
    config: deps.config,
    clock: deps.clock,
    audit: deps.audit,
    records: deps.records,
    requesters: deps.requesters,
    media: deps.media,
    notifications: deps.notifications,
    events: new ContainerEvents(deps.callbacks),
    branding: deps.branding,
    accounts: deps.accounts,
    extensions,
  };
  const lifecycle = new ContainerLifecycle({
    ...context,
    jobs: deps.jobs,
    logger: deps.logger,
    sweepIntervalSeconds: deps.config.LIFECYCLE_SWEEP_INTERVAL_SECONDS,
  });
  const containers = new ContainersService(context);
  const recipients = new RecipientsService(context);
  const features = new FeaturesService(context, lifecycle, extensions);
  const chat = new ChatService(context);
  const notifier = new ContainerNotifier(context);
  const sandbox = new ContainerSandbox({ ...context, containers, features, chat, lifecycle });
  const sessions = new ContainerSessions({ ...context, lifecycle, chat });
  return {
    service: { containers, recipients, features, chat, notifier, lifecycle, sandbox, sessions, extensions },
    routes: [
      containerRoutes({ containers, recipients, chat, notifier }),
      containerFeatureRoutes({ features, media: deps.media, config: deps.config }),
      containerSandboxRoutes(sandbox, deps.config),
    ],
    jobs: [handleJob(ContainerSweepJob, (_payload, job) => lifecycle.runSweepJob(job.id))],
    scheduleRecurringJobs: () => lifecycle.ensureSweepScheduled(),
  };
}
