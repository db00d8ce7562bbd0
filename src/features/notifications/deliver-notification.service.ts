import type { Logger } from "pino";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { DeliveryError, type SendResult } from "../../adapters/mailer/mailer.js";
import type { SmsSender } from "../../adapters/sms/sms-sender.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { toTimestamp } from "../../shared/time.js";
import { normaliseE164 } from "../../shared/validation.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { RequestRecords, RequestRow } from "../requests/index.js";
import { composeSms, insertBeforeBodyEnd, TemplateError, type TemplateRenderer } from "../templates/index.js";
import { type ComposedMessage, composedLabel } from "./composed-notifications.service.js";
import { gatherMessageInput, type MessageSources } from "./message-input.js";
import type { NotificationOutcomes } from "./notification-outcomes.js";
import {
  findNotification,
  markOpened,
  type NotificationRow,
  recordAttempt,
  recordOutcome,
} from "./notifications.repository.js";
import type { OutgoingMail } from "./outgoing-mail.js";
import { openSecret, type Sealed } from "./secret-box.js";

/** Where a job attempt stands, from the job row. */
export interface AttemptInfo {
  attempts: number;
  maxAttempts: number;
  /** Marks the job done inside the outcome's transaction (the worker's JobContext.complete). */
  complete?: (ex: Executor) => Promise<void>;
}

/**
 * Delivery of notifications by the worker (email and SMS), their outcome and its callback, and the
 * email open-tracking pixel.
 */
export class NotificationDelivery {
  constructor(
    private readonly deps: {
      database: Database;
      clock: Clock;
      logger: Logger;
      audit: AuditWriter;
      publicBaseUrl: string;
      records: RequestRecords;
      keyRing: KeyRing;
      renderer: TemplateRenderer;
      mail: OutgoingMail;
      sms: SmsSender;
      sources: MessageSources;
      outcomes: NotificationOutcomes;
    },
  ) {}

  /**
   * Delivers one notification (job handler). Idempotent: a notification that already has an outcome
   * is skipped. Transient failures throw to be retried until the last attempt, which records the
   * failure; every outcome updates the notification and emits its `contact_notification_send`
   * callback in one transaction.
   */
  async deliver(notificationId: number, attempt: AttemptInfo): Promise<void> {
    const { db } = this.deps.database;
    const n = await findNotification(db, notificationId);
    if (n?.status !== "queued") return;
    const request = n.sealed_message
      ? undefined
      : await this.deps.records.find(db, n.account_id, n.request_id);
    if (!n.sealed_message && !request) return;
    let sent: SendResult;
    try {
      sent = request ? await this.send(n, request) : await this.sendComposed(n);
    } catch (err) {
      // A template that cannot render never will; an unexpected error (database...) may pass.
      const permanent = err instanceof TemplateError || (err instanceof DeliveryError && err.permanent);
      const message = describeFailure(err);
      if (!(err instanceof DeliveryError) && !(err instanceof TemplateError)) {
        this.deps.logger.error({ err, notification: n.id }, "notification delivery failed unexpectedly");
      }
      if (permanent || attempt.attempts >= attempt.maxAttempts) {
        const final = permanent ? message : `Gave up after ${attempt.attempts} attempts: ${message}`;
        await this.finish(
          n,
          { status: "failed", error: final, attempts: attempt.attempts, messageId: null },
          attempt.complete,
        );
        return;
      }
      await recordAttempt(db, n.id, attempt.attempts, message, toTimestamp(this.deps.clock.now()));
      throw err;
    }
    await this.finish(
      n,
      { status: "sent", error: null, attempts: attempt.attempts, messageId: sent.messageId },
      attempt.complete,
    );
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

  private async send(n: NotificationRow, request: RequestRow): Promise<SendResult> {
    const { db } = this.deps.database;
    const contact = { first_name: n.contact_first_name, last_name: n.contact_last_name };
    const input = await gatherMessageInput(this.deps.sources, db, request, contact);
    const context = { accountId: n.account_id, notificationId: n.id };
    if (n.contact_method_interface_class === "sms") {
      const to = normaliseE164(n.contact_method_value);
      if (!to) throw new DeliveryError("Not a valid E.164 phone number.", true);
      return this.deps.sms.send({ to, body: composeSms(input) }, context);
    }
    if (request.email_template_slug && !input.template) {
      throw new DeliveryError(`The email template "${request.email_template_slug}" no longer exists.`, true);
    }
    const pixelUrl = n.open_token ? `${this.deps.publicBaseUrl}/t/o/${n.open_token}.gif` : undefined;
    const email = await this.deps.renderer.composeEmail({ ...input, pixelUrl }, n.account_id);
    const { mailer, from } = await this.deps.mail.for(n.account_id);
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

  /** Sends a message its sender composed and sealed when it queued it. */
  private async sendComposed(n: NotificationRow): Promise<SendResult> {
    const message = JSON.parse(
      openSecret(
        this.deps.keyRing,
        JSON.parse(n.sealed_message ?? "{}") as Sealed,
        composedLabel(n.account_id),
      ),
    ) as ComposedMessage;
    const context = { accountId: n.account_id, notificationId: n.id };
    if (n.contact_method_interface_class === "sms") {
      const to = normaliseE164(n.contact_method_value);
      if (!to) throw new DeliveryError("Not a valid E.164 phone number.", true);
      return this.deps.sms.send({ to, body: message.text }, context);
    }
    const pixel = n.open_token
      ? `<img src="${this.deps.publicBaseUrl}/t/o/${n.open_token}.gif" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`
      : "";
    const { mailer, from } = await this.deps.mail.for(n.account_id);
    return mailer.send(
      {
        from,
        to: n.contact_method_value,
        subject: message.subject,
        text: message.text,
        html: pixel ? insertBeforeBodyEnd(message.html, pixel) : message.html,
        headers: { "X-Ferry-Notification": String(n.id), "Auto-Submitted": "auto-generated" },
      },
      context,
    );
  }

  private async finish(
    n: NotificationRow,
    outcome: { status: "sent" | "failed"; error: string | null; attempts: number; messageId: string | null },
    completeJob?: (ex: Executor) => Promise<void>,
  ): Promise<void> {
    const now = toTimestamp(this.deps.clock.now());
    await this.deps.database.db.transaction().execute(async (trx) => {
      // The job is done exactly when its outcome commits.
      await completeJob?.(trx);
      const row = await recordOutcome(trx, n.id, {
        status: outcome.status,
        error: outcome.error,
        deliveredAt: outcome.status === "sent" ? now : null,
        providerMessageId: outcome.messageId,
        attempts: outcome.attempts,
        now,
      });
      if (!row) return;
      await this.deps.outcomes.emit(trx, row, outcome.status === "sent", outcome.error ?? "");
    });
  }
}

function describeFailure(err: unknown): string {
  if (err instanceof DeliveryError) return err.message;
  if (err instanceof TemplateError) {
    return `Email template error${err.line ? ` on line ${err.line}` : ""}: ${err.message}`;
  }
  return "Internal error while composing the message.";
}
