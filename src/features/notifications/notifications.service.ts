import type { Logger } from "pino";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { CapturedMessage, CaptureSink } from "../../adapters/mailer/capture-sink.js";
import {
  DeliveryError,
  defaultFromAddress,
  type Mailer,
  type SendResult,
} from "../../adapters/mailer/mailer.js";
import type { SmsSender } from "../../adapters/sms/sms-sender.js";
import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { notFound, unprocessable } from "../../shared/errors.js";
import { randomId } from "../../shared/ids.js";
import type { PageRequest } from "../../shared/pagination.js";
import { toMillisTimestamp, toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/audit.writer.js";
import type { BrandingService } from "../branding/branding.service.js";
import { isValidEmail, normaliseE164 } from "../contacts/contacts.validation.js";
import type { RequestersService } from "../requesters/requesters.service.js";
import type { RequestsService } from "../requests/requests.service.js";
import { findTemplate } from "./email-templates.repository.js";
import { composeEmail, composeSms, type MessageInput, SANDBOX_MARKER } from "./message-composer.js";
import { presentNotification } from "./notifications.presenter.js";
import {
  type CapturedFilter,
  type CapturedMessageRow,
  countCapturedMessages,
  findNotification,
  findRequest,
  insertCapturedMessage,
  insertNotification,
  listCapturedMessages,
  listRequestMethods,
  lockRequest,
  markOpened,
  type NotificationRow,
  type RequestRow,
  recordAttempt,
  recordOutcome,
} from "./notifications.repository.js";
import { openSecret, sealSecret } from "./secret-box.js";
import type { SmtpSettingsService } from "./smtp-settings.service.js";
import { type TemplateEngine, TemplateError } from "./templates/template-engine.js";

/** Job kind that delivers one notification: payload `{ notification_id }`. */
export const DELIVER_JOB = "notifications.deliver";
/** Job kind that sends one direct message (two-factor codes): payload `{ account_id, sealed }`. */
export const DIRECT_JOB = "notifications.direct";
/** Job kind the callbacks feature handles (issue 6); enqueued here for every delivery outcome. */
export const CALLBACK_EVENT_JOB = "callbacks.event";

/** Builds the API Request object of a request (the requests feature's presenter). */
export type RequestPresenter = (ex: Executor, accountId: number, requestId: number) => Promise<unknown>;

/** The caller of send_notification. */
export interface NotificationCaller {
  accountId: number;
  applicationId: number;
}

/** A contact method as send_notification reports it. */
export interface ContactMethodRef {
  id: number;
  interface_class: string;
  value: string;
}

/** The spec's send_notification answer. */
export interface SendNotificationResult {
  contact_notification_send: { id: number; sent_at: string; contactmethod: ContactMethodRef }[];
  contact_notification_failed: { contactmethod: ContactMethodRef }[];
}

/** A message sent outside a request notification (two-factor codes); see sendDirect. */
export interface DirectMessage {
  channel: "email" | "sms";
  /** Email address or E.164 number. */
  to: string;
  /** Email subject (ignored for SMS). */
  subject?: string;
  text: string;
  /** Email HTML part (ignored for SMS). */
  html?: string;
}

/** Where a job attempt stands, from the job row. */
export interface AttemptInfo {
  attempts: number;
  maxAttempts: number;
}

/** Dependencies of NotificationsService. */
export interface NotificationsDeps {
  database: Database;
  config: Config;
  clock: Clock;
  keyRing: KeyRing;
  audit: AuditWriter;
  jobs: JobQueue;
  logger: Logger;
  mailer: Mailer;
  sms: SmsSender;
  engine: TemplateEngine;
  smtpSettings: SmtpSettingsService;
  presentRequest: RequestPresenter;
  /** The owner's profile of a request (requests feature). */
  owners: Pick<RequestsService, "ownerProfile">;
  /** The named requester of a request (requesters feature). */
  requesters: Pick<RequestersService, "findForAccount">;
  /** The recipient URL of a request, on the account's custom host when it has one (branding feature). */
  branding: Pick<BrandingService, "recipientUrl">;
}

/**
 * send_notification, delivery of notifications by the worker (email and SMS), the open-tracking
 * pixel, direct messages for other features, and the sandbox outbox of captured messages.
 */
export class NotificationsService implements CaptureSink {
  constructor(private readonly deps: NotificationsDeps) {}

  /**
   * send_notification (spec: Requests; DESIGN §4 Notification). 404 for an absent or foreign request,
   * 422 for a draft, complete or expired request or a missing email template. In one transaction:
   * a notification per contact method (a delivery job for each valid one, a failure callback event for
   * each invalid one) and ABC-0010.
   */
  async sendNotification(caller: NotificationCaller, requestId: number): Promise<SendNotificationResult> {
    const { database, clock } = this.deps;
    return database.db.transaction().execute(async (trx) => {
      await lockRequest(trx, requestId, database.dialect === "postgres");
      const request = await findRequest(trx, caller.accountId, requestId);
      if (!request) throw notFound("Request");
      const now = clock.now();
      if (request.is_draft) {
        throw unprocessable(
          "The request is a draft: send it (PATCH is_draft false) before notifying its contacts.",
        );
      }
      if (request.complete)
        throw unprocessable("The request is complete: its contacts cannot be notified again.");
      if (request.is_expired || (request.expires_at && request.expires_at <= toTimestamp(now))) {
        throw unprocessable("The request has expired: its contacts cannot be notified.");
      }
      if (request.email_template_slug) {
        const template = await findTemplate(trx, caller.accountId, request.email_template_slug);
        if (!template) {
          throw unprocessable(`The email template "${request.email_template_slug}" does not exist.`);
        }
      }
      const methods = await listRequestMethods(trx, request.id);
      const ts = toTimestamp(now);
      const sentAt = toMillisTimestamp(now);
      const result: SendNotificationResult = {
        contact_notification_send: [],
        contact_notification_failed: [],
      };
      for (const m of methods) {
        const contactmethod = { id: m.methodId, interface_class: m.interfaceClass, value: m.value };
        const problem = checkDestination(m.interfaceClass, m.value);
        const row = await insertNotification(trx, {
          account_id: caller.accountId,
          request_id: request.id,
          contact_id: m.contactId,
          contact_method_id: m.methodId,
          contact_first_name: m.firstName,
          contact_last_name: m.lastName,
          contact_method_value: m.value,
          contact_method_interface_class: m.interfaceClass,
          status: problem ? "failed" : "queued",
          was_sent: 0,
          removed: 0,
          error: problem ?? null,
          attempts: 0,
          sent_at: sentAt,
          delivered_at: null,
          provider_message_id: null,
          open_token: !problem && m.interfaceClass === "email" ? randomId(24) : null,
          opened_at: null,
          created: ts,
          updated: ts,
        });
        if (problem) {
          await this.enqueueCallbackEvent(trx, row, false, problem);
          result.contact_notification_failed.push({ contactmethod });
        } else {
          await this.deps.jobs.enqueue(trx, DELIVER_JOB, { notification_id: row.id });
          result.contact_notification_send.push({ id: row.id, sent_at: sentAt, contactmethod });
        }
      }
      await this.deps.audit.write(trx, {
        accountId: caller.accountId,
        code: AuditCode.REQUEST_SENT,
        apiKeyId: caller.applicationId,
        relatedModel: "request",
        relationKey: request.id,
        value: `queued=${result.contact_notification_send.length} failed=${result.contact_notification_failed.length}`,
      });
      return result;
    });
  }

  /**
   * Delivers one notification (job handler). Idempotent: a notification that already has an outcome
   * is skipped. Transient failures throw to be retried until the last attempt, which records the
   * failure; every outcome updates the notification and enqueues a `contact_notification_send` event
   * in one transaction.
   */
  async deliver(notificationId: number, attempt: AttemptInfo): Promise<void> {
    const { db } = this.deps.database;
    const n = await findNotification(db, notificationId);
    if (n?.status !== "queued") return;
    const request = await findRequest(db, n.account_id, n.request_id);
    if (!request) return;
    let sent: SendResult;
    try {
      sent = await this.sendNotificationMessage(n, request);
    } catch (err) {
      // A template that cannot render never will; an unexpected error (database...) may pass.
      const permanent = err instanceof TemplateError || (err instanceof DeliveryError && err.permanent);
      const message = describeFailure(err);
      if (!(err instanceof DeliveryError) && !(err instanceof TemplateError)) {
        this.deps.logger.error({ err, notification: n.id }, "notification delivery failed unexpectedly");
      }
      if (permanent || attempt.attempts >= attempt.maxAttempts) {
        const final = permanent ? message : `Gave up after ${attempt.attempts} attempts: ${message}`;
        await this.finish(n, { status: "failed", error: final, attempts: attempt.attempts, messageId: null });
        return;
      }
      await recordAttempt(db, n.id, attempt.attempts, message, toTimestamp(this.deps.clock.now()));
      throw err;
    }
    await this.finish(n, {
      status: "sent",
      error: null,
      attempts: attempt.attempts,
      messageId: sent.messageId,
    });
  }

  /** Records the email open of the pixel `token` once (ABD-0010); unknown tokens are ignored. */
  async recordOpen(token: string, from: string): Promise<void> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return;
    await this.deps.database.db.transaction().execute(async (trx) => {
      const n = await markOpened(trx, token, toTimestamp(this.deps.clock.now()));
      if (!n) return;
      await this.deps.audit.write(trx, {
        accountId: n.account_id,
        code: AuditCode.EMAIL_OPENED,
        relatedModel: "request",
        relationKey: n.request_id,
        value: `notification ${n.id}`,
        from,
      });
    });
  }

  /**
   * Sends a message now, outside any request notification (for two-factor codes): email through the
   * account's SMTP settings or the deployment's mailer, SMS through the SMS sender; the SANDBOX
   * marker is put in front of the subject (or SMS text) in sandbox. Throws DeliveryError.
   */
  async sendDirect(accountId: number, message: DirectMessage): Promise<SendResult> {
    const marker = this.deps.config.isSandbox ? `${SANDBOX_MARKER} ` : "";
    if (message.channel === "sms") {
      const to = normaliseE164(message.to);
      if (!to) throw new DeliveryError("Not a valid E.164 phone number.", true);
      return this.deps.sms.send({ to, body: `${marker}${message.text}` }, { accountId });
    }
    if (!isValidEmail(message.to)) throw new DeliveryError("Not a valid email address.", true);
    const { mailer, from } = await this.mailerFor(accountId);
    return mailer.send(
      {
        from,
        to: message.to,
        subject: `${marker}${message.subject ?? ""}`.trim(),
        text: message.text,
        ...(message.html !== undefined ? { html: message.html } : {}),
      },
      { accountId },
    );
  }

  /**
   * Queues a direct message in the caller's transaction (the outbox way); the message is stored
   * encrypted in the job and sent by the worker with sendDirect (retried while transient).
   */
  async queueDirect(ex: Executor, accountId: number, message: DirectMessage): Promise<void> {
    const sealed = sealSecret(this.deps.keyRing, JSON.stringify(message), `direct:${accountId}`);
    await this.deps.jobs.enqueue(ex, DIRECT_JOB, { account_id: accountId, sealed });
  }

  /** Job handler of queueDirect. Throws DeliveryError (permanent ones stop the job). */
  async deliverDirect(payload: { account_id: number; sealed: { kid: string; ciphertext: string } }) {
    const message = JSON.parse(
      openSecret(this.deps.keyRing, payload.sealed, `direct:${payload.account_id}`),
    ) as DirectMessage;
    await this.sendDirect(payload.account_id, message);
  }

  /** CaptureSink: stores a captured email or SMS. */
  async capture(message: CapturedMessage): Promise<number> {
    return insertCapturedMessage(this.deps.database.db, message, toTimestamp(this.deps.clock.now()));
  }

  /** A page of the account's captured messages, newest first, with the total count. */
  async listCaptured(
    accountId: number,
    filter: CapturedFilter,
    page: PageRequest,
  ): Promise<{ rows: CapturedMessageRow[]; count: number }> {
    const { db } = this.deps.database;
    const [rows, count] = await Promise.all([
      listCapturedMessages(db, accountId, filter, page.pageSize, page.offset),
      countCapturedMessages(db, accountId, filter),
    ]);
    return { rows, count };
  }

  /** The recipient page URL of the account's request `identifier` (BrandingService.recipientUrl). */
  recipientUrl(ex: Executor, accountId: number, identifier: string): Promise<string> {
    return this.deps.branding.recipientUrl(ex, accountId, identifier);
  }

  /** The account's name as messages show it ("" for an unknown account). */
  async accountName(ex: Executor, accountId: number): Promise<string> {
    return (await this.deps.owners.ownerProfile(ex, accountId))?.name ?? "";
  }

  /** Closes the mail transports. */
  async close(): Promise<void> {
    await this.deps.mailer.close();
    await this.deps.smtpSettings.close();
  }

  /** Gathers what composition needs about a request (also used by template previews). */
  async messageInput(
    ex: Executor,
    request: RequestRow,
    contact: { first_name: string; last_name: string },
  ): Promise<MessageInput> {
    const [account, requester, template, recipientUrl] = await Promise.all([
      this.deps.owners.ownerProfile(ex, request.account_id),
      request.requester_id
        ? this.deps.requesters.findForAccount(ex, request.account_id, request.requester_id)
        : undefined,
      request.email_template_slug
        ? findTemplate(ex, request.account_id, request.email_template_slug)
        : undefined,
      this.recipientUrl(ex, request.account_id, request.identifier),
    ]);
    return {
      request,
      requester,
      account: { name: account?.name ?? "", email: account?.email ?? "" },
      contact,
      recipientUrl,
      sandbox: this.deps.config.isSandbox,
      template: template ? { subject: template.subject, html: template.html } : undefined,
    };
  }

  private async sendNotificationMessage(n: NotificationRow, request: RequestRow): Promise<SendResult> {
    const { db } = this.deps.database;
    const contact = { first_name: n.contact_first_name, last_name: n.contact_last_name };
    const input = await this.messageInput(db, request, contact);
    const context = { accountId: n.account_id, notificationId: n.id };
    if (n.contact_method_interface_class === "sms") {
      const to = normaliseE164(n.contact_method_value);
      if (!to) throw new DeliveryError("Not a valid E.164 phone number.", true);
      return this.deps.sms.send({ to, body: composeSms(input) }, context);
    }
    if (request.email_template_slug && !input.template) {
      throw new DeliveryError(`The email template "${request.email_template_slug}" no longer exists.`, true);
    }
    const pixelUrl = n.open_token ? `${this.deps.config.publicBaseUrl}/t/o/${n.open_token}.gif` : undefined;
    const email = await composeEmail(this.deps.engine, { ...input, pixelUrl });
    const { mailer, from } = await this.mailerFor(n.account_id);
    return mailer.send(
      {
        from,
        to: n.contact_method_value,
        subject: email.subject,
        text: email.text,
        html: email.html,
        ...(input.requester?.email ? { replyTo: input.requester.email } : {}),
        headers: { "X-Ferry-Notification": String(n.id), "Auto-Submitted": "auto-generated" },
      },
      context,
    );
  }

  private async mailerFor(accountId: number): Promise<{ mailer: Mailer; from: string }> {
    const custom = await this.deps.smtpSettings.mailerFor(accountId);
    return custom ?? { mailer: this.deps.mailer, from: defaultFromAddress(this.deps.config) };
  }

  private async finish(
    n: NotificationRow,
    outcome: { status: "sent" | "failed"; error: string | null; attempts: number; messageId: string | null },
  ): Promise<void> {
    const now = toTimestamp(this.deps.clock.now());
    await this.deps.database.db.transaction().execute(async (trx) => {
      const row = await recordOutcome(trx, n.id, {
        status: outcome.status,
        error: outcome.error,
        deliveredAt: outcome.status === "sent" ? now : null,
        providerMessageId: outcome.messageId,
        attempts: outcome.attempts,
        now,
      });
      if (!row) return;
      await this.enqueueCallbackEvent(trx, row, outcome.status === "sent", outcome.error ?? "");
    });
  }

  private async enqueueCallbackEvent(
    trx: Executor,
    row: NotificationRow,
    status: boolean,
    message: string,
  ): Promise<void> {
    const request = await this.deps.presentRequest(trx, row.account_id, row.request_id);
    await this.deps.jobs.enqueue(trx, CALLBACK_EVENT_JOB, {
      account_id: row.account_id,
      request_id: row.request_id,
      type: "contact_notification_send",
      body: {
        type: "contact_notification_send",
        message,
        status,
        notification: presentNotification(row),
        request,
      },
    });
  }
}

/** Why a destination cannot be sent to, or undefined when it can. */
function checkDestination(interfaceClass: string, value: string): string | undefined {
  if (interfaceClass === "email") return isValidEmail(value) ? undefined : "Not a valid email address.";
  if (interfaceClass === "sms") {
    return normaliseE164(value) ? undefined : "Not a valid phone number in E.164 format.";
  }
  return `Unsupported contact method interface_class "${interfaceClass}".`;
}

function describeFailure(err: unknown): string {
  if (err instanceof DeliveryError) return err.message;
  if (err instanceof TemplateError) {
    return `Email template error${err.line ? ` on line ${err.line}` : ""}: ${err.message}`;
  }
  return "Internal error while composing the message.";
}
