import type { Database } from "../../db/database.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { unprocessable } from "../../shared/errors.js";
import { randomId } from "../../shared/ids.js";
import { toMillisTimestamp, toTimestamp } from "../../shared/time.js";
import { AuditCode, type AuditWriter } from "../audit/index.js";
import type { RequestRecords, RequestsService } from "../requests/index.js";
import type { EmailTemplatesService } from "../templates/index.js";
import { checkDestination, type NotificationOutcomes } from "./notification-outcomes.js";
import { DeliverNotificationJob } from "./notifications.jobs.js";
import { insertNotification } from "./notifications.repository.js";

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

/** send_notification: records a notification per contact method of a request and queues delivery. */
export class NotificationSender {
  constructor(
    private readonly deps: {
      database: Database;
      clock: Clock;
      audit: AuditWriter;
      jobs: JobQueue;
      records: RequestRecords;
      requests: Pick<RequestsService, "loadRequest">;
      templates: Pick<EmailTemplatesService, "requireTemplate">;
      outcomes: NotificationOutcomes;
    },
  ) {}

  /**
   * send_notification (spec: Requests). 404 for an absent or foreign request,
   * 422 for a draft, complete or expired request or a missing email template. In one transaction:
   * a notification per contact method (a delivery job for each valid one, a failure callback event for
   * each invalid one) and ABC-0010.
   */
  async send(caller: AuthContext, requestId: number): Promise<SendNotificationResult> {
    const { database, clock, records } = this.deps;
    return database.db.transaction().execute(async (trx) => {
      await records.lock(trx, requestId);
      // The request with its contacts and their methods, in one statement (404 when absent or foreign).
      const { row: request, related } = await this.deps.requests.loadRequest(
        trx,
        caller.accountId,
        requestId,
      );
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
        await this.deps.templates.requireTemplate(trx, caller.accountId, request.email_template_slug);
      }
      // Sending the link again unlocks a two-factor step locked by wrong codes (read above in this
      // transaction: a request with none is not written).
      if (request.tfa_failures) await records.clearTfaFailures(trx, request.id);
      const ts = toTimestamp(now);
      const sentAt = toMillisTimestamp(now);
      const result: SendNotificationResult = {
        contact_notification_send: [],
        contact_notification_failed: [],
      };
      for (const { contact, methods } of related.contacts) {
        for (const m of methods) {
          const contactmethod = { id: m.id, interface_class: m.interface_class, value: m.value };
          const problem = checkDestination(m.interface_class, m.value);
          const row = await insertNotification(trx, {
            account_id: caller.accountId,
            request_id: request.id,
            contact_id: contact.id,
            contact_method_id: m.id,
            contact_first_name: contact.first_name,
            contact_last_name: contact.last_name,
            contact_method_value: m.value,
            contact_method_interface_class: m.interface_class,
            status: problem ? "failed" : "queued",
            was_sent: 0,
            removed: 0,
            error: problem ?? null,
            attempts: 0,
            sent_at: sentAt,
            delivered_at: null,
            provider_message_id: null,
            open_token: !problem && m.interface_class === "email" ? randomId(24) : null,
            opened_at: null,
            created: ts,
            updated: ts,
          });
          if (problem) {
            await this.deps.outcomes.emit(trx, row, false, problem);
            result.contact_notification_failed.push({ contactmethod });
          } else {
            await this.deps.jobs.enqueue(trx, DeliverNotificationJob, { notification_id: row.id });
            result.contact_notification_send.push({ id: row.id, sent_at: sentAt, contactmethod });
          }
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
}
