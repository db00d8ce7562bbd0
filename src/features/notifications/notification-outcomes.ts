import type { Executor } from "../../db/database.js";
import { isValidEmail, normaliseE164 } from "../../shared/validation.js";
import type { CallbackService } from "../callbacks/index.js";
import type { RequestsService } from "../requests/index.js";
import { presentNotification } from "./notifications.presenter.js";
import type { NotificationRow } from "./notifications.repository.js";

/** Why a destination cannot be sent to, or undefined when it can. */
export function checkDestination(interfaceClass: string, value: string): string | undefined {
  if (interfaceClass === "email") return isValidEmail(value) ? undefined : "Not a valid email address.";
  if (interfaceClass === "sms") {
    return normaliseE164(value) ? undefined : "Not a valid phone number in E.164 format.";
  }
  return `Unsupported contact method interface_class "${interfaceClass}".`;
}

/**
 * The `contact_notification_send` callback of a notification's outcome, emitted in the transaction
 * that records the outcome.
 */
export class NotificationOutcomes {
  constructor(
    private readonly callbacks: Pick<CallbackService, "emitCallbackEvent">,
    private readonly requests: Pick<RequestsService, "getRequestView">,
  ) {}

  /**
   * Emits the event of `row` (sent when `status`; `message` explains a failure) inside `trx`. The
   * body names the Request object, or what the notification's sender put in its event context.
   */
  async emit(trx: Executor, row: NotificationRow, status: boolean, message: string): Promise<void> {
    await this.callbacks.emitCallbackEvent(trx, {
      accountId: row.account_id,
      requestId: row.request_id,
      type: "contact_notification_send",
      // Built only when the request has a callback URL: the Request view is the costliest read of an outcome.
      body: async () => ({
        type: "contact_notification_send",
        message,
        status,
        notification: presentNotification(row),
        ...(row.event_context
          ? (JSON.parse(row.event_context) as Record<string, unknown>)
          : { request: await this.requests.getRequestView(trx, row.account_id, row.request_id) }),
      }),
    });
  }
}
