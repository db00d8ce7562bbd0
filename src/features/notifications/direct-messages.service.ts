import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { DeliveryError, type SendResult } from "../../adapters/mailer/mailer.js";
import type { SmsSender } from "../../adapters/sms/sms-sender.js";
import type { Config } from "../../config/config.js";
import type { Executor } from "../../db/database.js";
import type { JobQueue } from "../../jobs/queue.js";
import { isValidEmail, normaliseE164 } from "../../shared/validation.js";
import { SANDBOX_MARKER } from "../templates/index.js";
import { DirectMessageJob } from "./notifications.jobs.js";
import type { OutgoingMail } from "./outgoing-mail.js";
import { openSecret, type Sealed, sealSecret } from "./secret-box.js";

/** A message sent outside a request notification (two-factor codes). */
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

/**
 * Messages other features send outside request notifications (two-factor codes): queued in the
 * caller's transaction, stored sealed in the job, sent by the worker.
 */
export class DirectMessages {
  constructor(
    private readonly config: Config,
    private readonly keyRing: KeyRing,
    private readonly jobs: JobQueue,
    private readonly mail: OutgoingMail,
    private readonly sms: SmsSender,
  ) {}

  /**
   * Queues a direct message in the caller's transaction (the outbox way); the message is stored
   * encrypted in the job and sent by the worker with `send` (retried while transient).
   */
  async queue(ex: Executor, accountId: number, message: DirectMessage): Promise<void> {
    const sealed = sealSecret(this.keyRing, JSON.stringify(message), `direct:${accountId}`);
    await this.jobs.enqueue(ex, DirectMessageJob, { account_id: accountId, sealed });
  }

  /** The job of `queue`: opens the sealed message and sends it. Throws DeliveryError. */
  async deliverQueued(payload: { account_id: number; sealed: Sealed }): Promise<void> {
    const message = JSON.parse(
      openSecret(this.keyRing, payload.sealed, `direct:${payload.account_id}`),
    ) as DirectMessage;
    await this.send(payload.account_id, message);
  }

  /**
   * Sends a message now: email through the account's SMTP settings or the deployment's mailer, SMS
   * through the SMS sender; the SANDBOX marker is put in front of the subject (or SMS text) in
   * sandbox. Throws DeliveryError.
   */
  async send(accountId: number, message: DirectMessage): Promise<SendResult> {
    const marker = this.config.isSandbox ? `${SANDBOX_MARKER} ` : "";
    if (message.channel === "sms") {
      const to = normaliseE164(message.to);
      if (!to) throw new DeliveryError("Not a valid E.164 phone number.", true);
      return this.sms.send({ to, body: `${marker}${message.text}` }, { accountId });
    }
    if (!isValidEmail(message.to)) throw new DeliveryError("Not a valid email address.", true);
    const { mailer, from } = await this.mail.for(accountId);
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
}
