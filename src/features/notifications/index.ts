/**
 * The notifications feature: send_notification (a notification per contact method, delivered by
 * the worker by email or SMS, each outcome a `contact_notification_send` callback), email previews,
 * the open-tracking pixel, direct messages for other features (two-factor codes), the sandbox
 * outbox of captured messages, and per-account SMTP settings.
 */

import type { Logger } from "pino";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { CaptureSink } from "../../adapters/mailer/capture-sink.js";
import { DeliveryError, type Mailer } from "../../adapters/mailer/mailer.js";
import type { SmsSender } from "../../adapters/sms/sms-sender.js";
import type { Config } from "../../config/config.js";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import { PermanentJobError } from "../../jobs/worker.js";
import type { Clock } from "../../shared/clock.js";
import type { Feature } from "../../shared/feature.js";
import type { AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { CallbackService } from "../callbacks/index.js";
import type { MediaService } from "../media/index.js";
import type { RequestersService } from "../requesters/index.js";
import type { RequestRecords, RequestsService } from "../requests/index.js";
import type { EmailTemplatesService, TemplateRenderer } from "../templates/index.js";
import { CapturedOutbox } from "./captured-outbox.service.js";
import { ComposedNotifications } from "./composed-notifications.service.js";
import { NotificationDelivery } from "./deliver-notification.service.js";
import { DirectMessages } from "./direct-messages.service.js";
import type { MessageSources } from "./message-input.js";
import { MessagePreview } from "./message-preview.service.js";
import { NotificationLog } from "./notification-log.service.js";
import { NotificationOutcomes } from "./notification-outcomes.js";
import { DeliverNotificationJob, DirectMessageJob } from "./notifications.jobs.js";
import { notificationsRoutes } from "./notifications.routes.js";
import { OutgoingMail } from "./outgoing-mail.js";
import { NotificationSender } from "./send-notification.service.js";
import { SmtpSettingsService } from "./smtp-settings.service.js";

export type { CapturedOutbox } from "./captured-outbox.service.js";
export type {
  ComposedMessage,
  ComposedNotification,
  ComposedNotifications,
} from "./composed-notifications.service.js";
export type { DirectMessage, DirectMessages } from "./direct-messages.service.js";
export { openSecret, type Sealed, sealSecret } from "./secret-box.js";

/** What the notifications feature offers. */
export interface Notifications {
  readonly sender: NotificationSender;
  readonly delivery: NotificationDelivery;
  readonly direct: DirectMessages;
  /** Notifications composed by their sender (containers). */
  readonly composed: ComposedNotifications;
  readonly outbox: CapturedOutbox;
  /** The account's notifications and their outcomes (GET /v1/notification/). */
  readonly log: NotificationLog;
  readonly preview: MessagePreview;
  readonly smtpSettings: SmtpSettingsService;
  /** Closes the mail transports. */
  close(): Promise<void>;
}

/**
 * Builds the notifications feature. `transports` builds the mailer and SMS sender around the
 * feature's outbox (the capture transports store there).
 */
export function createNotificationsFeature(deps: {
  database: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
  keyRing: KeyRing;
  audit: AuditWriter;
  jobs: JobQueue;
  transports: (sink: CaptureSink) => { mailer: Mailer; sms: SmsSender };
  renderer: TemplateRenderer;
  accounts: AccountsService;
  branding: BrandingService;
  requesters: RequestersService;
  templates: EmailTemplatesService;
  callbacks: CallbackService;
  records: RequestRecords;
  requests: RequestsService;
  /** A push request's files, listed in its default email. */
  media: Pick<MediaService, "rowsOfRequests">;
}): Feature<Notifications> {
  const { database, config, clock, audit, jobs, records, requests, templates } = deps;
  const outbox = new CapturedOutbox(database, clock);
  const { mailer, sms } = deps.transports(outbox);
  const smtpSettings = new SmtpSettingsService(database, clock, deps.keyRing, audit, {
    allowPrivate: config.SMTP_CUSTOM_ALLOW_PRIVATE,
  });
  const mail = new OutgoingMail(config, mailer, smtpSettings);
  const sources: MessageSources = {
    accounts: deps.accounts,
    requesters: deps.requesters,
    templates,
    branding: deps.branding,
    media: deps.media,
    sandbox: config.isSandbox,
  };
  const outcomes = new NotificationOutcomes(deps.callbacks, requests);
  const service: Notifications = {
    sender: new NotificationSender({ database, clock, audit, jobs, records, requests, templates, outcomes }),
    delivery: new NotificationDelivery({
      database,
      clock,
      logger: deps.logger,
      audit,
      publicBaseUrl: config.publicBaseUrl,
      records,
      keyRing: deps.keyRing,
      renderer: deps.renderer,
      mail,
      sms,
      sources,
      outcomes,
    }),
    direct: new DirectMessages(config, deps.keyRing, jobs, mail, sms),
    composed: new ComposedNotifications(deps.keyRing, clock, jobs, outcomes),
    outbox,
    log: new NotificationLog(database),
    preview: new MessagePreview({ database, records, requests, templates, sources }),
    smtpSettings,
    close: () => mail.close(),
  };
  return {
    service,
    routes: [notificationsRoutes({ ...service, config })],
    jobs: [
      handleJob(DeliverNotificationJob, (payload, job, context) =>
        service.delivery.deliver(payload.notification_id, {
          attempts: job.attempts,
          maxAttempts: job.max_attempts,
          ...(context ? { complete: context.complete } : {}),
        }),
      ),
      handleJob(DirectMessageJob, async (payload) => {
        try {
          await service.direct.deliverQueued(payload);
        } catch (err) {
          if (err instanceof DeliveryError && err.permanent) throw new PermanentJobError(err.message);
          throw err;
        }
      }),
    ],
  };
}
