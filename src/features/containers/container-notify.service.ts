import { randomBytes } from "node:crypto";
import type { AuthContext } from "../../shared/caller.js";
import { unprocessable } from "../../shared/errors.js";
import { AuditCode } from "../audit/index.js";
import { composeLinkEmail, messageTranslator, SANDBOX_MARKER } from "../templates/index.js";
import { newCallbackIdentifier } from "./container-events.js";
import { type ContainerDeps, loadContainer, nowText, pathId, sessionUrl } from "./containers.context.js";
import { containerRef } from "./containers.presenter.js";
import {
  findEmail,
  itemsOfContainer,
  recipientsOf,
  updateContainer,
  updateItem,
} from "./containers.repository.js";

/** One element of the container `send_notification` answer (a JSON array, one per recipient item). */
export interface ContainerNotificationView {
  id: number;
  recipient_item: number;
  recipient: number;
  state: "send" | "failed";
  contact_first_name: string;
  contact_last_name: string;
  contact_method_value: string;
  contact_method_interface_class: "email" | "sms" | "link";
  was_sent: boolean;
  removed: boolean;
  link: string;
  error: string | null;
  created: string;
  updated: string;
}

/** A session link's secret: 24 random bytes, URL-safe (192 bits, never derived from ids). */
function newSessionToken(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * `send_notification` of a container: every item of every active recipient gets its session link
 * (made once, kept on later sends); email and SMS items are notified through the notification jobs
 * with a message composed here (the container's email text plus the link; the link by SMS); link
 * items are only answered. The first send moves the container from draft to sent with a
 * `container` callback. ABC-0010.
 */
export class ContainerNotifier {
  constructor(private readonly deps: ContainerDeps) {}

  async send(auth: AuthContext, rawId: string): Promise<ContainerNotificationView[]> {
    const { deps } = this;
    const id = pathId(rawId, "Container");
    return deps.database.db.transaction().execute(async (trx) => {
      const c = await loadContainer(deps, trx, auth.accountId, id, {
        forUpdate: deps.database.dialect === "postgres",
      });
      if (c.row.state === "complete" || c.row.state === "expired") {
        throw unprocessable(`The container is ${c.row.state}: its recipients cannot be notified again.`);
      }
      // Sending the links again unlocks sessions locked by wrong codes.
      await deps.records.clearTfaFailures(trx, id);
      const recipients = new Map(
        (await recipientsOf(trx, id)).filter((r) => r.active === 1).map((r) => [r.id, r]),
      );
      const items = (await itemsOfContainer(trx, id)).filter((i) => recipients.has(i.recipient_id));
      if (items.length === 0) {
        throw unprocessable(
          "The container has no recipient items to notify: add recipients and their email, sms or link items first.",
        );
      }
      const email = await findEmail(trx, id);
      const host = await deps.branding.recipientHost(trx, auth.accountId);
      const requester = c.shared.requester_id
        ? await deps.requesters.findForAccount(trx, auth.accountId, c.shared.requester_id)
        : undefined;
      const sender = requester ? `${requester.first_name} ${requester.last_name}`.trim() : "";
      // Recipients carry no language: Ferry's own words follow the account's default (ADR 0033).
      const locale = (await deps.accounts.profile(trx, auth.accountId))?.defaultLanguage ?? "en";
      const i18n = messageTranslator({ locale });
      const subject =
        email?.subject.trim() ||
        (sender
          ? i18n.t("email.subject.session", { name: sender })
          : i18n.t("email.subject.sessionAnonymous"));
      const now = nowText(deps);
      const out: ContainerNotificationView[] = [];
      for (const item of items) {
        const recipient = recipients.get(item.recipient_id)!;
        const token = item.session_token ?? newSessionToken();
        await updateItem(trx, item.id, {
          session_token: token,
          notified_at: item.notified_at ?? now,
          updated: now,
        });
        const link = sessionUrl(deps.config.publicBaseUrl, host, token);
        const message =
          item.interface_class === "sms"
            ? {
                subject: "",
                html: "",
                text: `${deps.config.isSandbox ? `${SANDBOX_MARKER} ` : ""}${subject}: ${link}`,
              }
            : composeLinkEmail({
                subject,
                body: email?.body ?? "",
                link,
                action: i18n.t("email.action.session"),
                sandbox: deps.config.isSandbox,
                locale,
              });
        const row = await deps.notifications.queue(trx, {
          accountId: auth.accountId,
          requestId: id,
          recipientItemId: item.id,
          channel: item.interface_class,
          to: item.value,
          firstName: recipient.first_name,
          lastName: recipient.last_name,
          message,
          eventContext: {
            callback_identifier: newCallbackIdentifier(),
            container: { id, identifier: c.shared.identifier },
            recipient: recipient.id,
            recipient_item: item.id,
          },
        });
        out.push({
          id: row.id,
          recipient_item: item.id,
          recipient: recipient.id,
          state: row.status === "failed" ? "failed" : "send",
          contact_first_name: row.contact_first_name,
          contact_last_name: row.contact_last_name,
          contact_method_value: row.contact_method_value,
          contact_method_interface_class: item.interface_class,
          was_sent: row.was_sent === 1,
          removed: row.removed === 1,
          link,
          error: row.error,
          created: row.created,
          updated: row.updated,
        });
      }
      if (c.row.state === "draft") {
        const sent = await updateContainer(trx, id, { state: "sent", sent_at: now, updated: now });
        await deps.events.emit(trx, {
          accountId: auth.accountId,
          containerId: id,
          type: "container",
          body: { container: containerRef(sent, c.shared) },
        });
      }
      await deps.audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.REQUEST_SENT,
        apiKeyId: auth.applicationId,
        relatedModel: "container",
        relationKey: id,
        value: `items=${out.length} failed=${out.filter((o) => o.state === "failed").length}`,
      });
      return out;
    });
  }
}
