import { type CaptureSink, extractLinks } from "./capture-sink.js";
import type { Mailer, OutgoingEmail, SendContext, SendResult } from "./mailer.js";

export type { CaptureSink } from "./capture-sink.js";

/** A mailer that stores every email through a CaptureSink instead of delivering it. */
export class CaptureMailer implements Mailer {
  readonly kind = "capture" as const;

  constructor(private readonly sink: CaptureSink) {}

  /** Stores the email; the message id is `captured-<id>`. */
  async send(email: OutgoingEmail, context: SendContext): Promise<SendResult> {
    const id = await this.sink.capture({
      accountId: context.accountId,
      channel: "email",
      to: email.to,
      from: email.from,
      subject: email.subject,
      text: email.text,
      html: email.html ?? null,
      links: extractLinks(email.text, email.html),
      notificationId: context.notificationId ?? null,
    });
    return { messageId: `captured-${id}` };
  }

  async close(): Promise<void> {}
}
