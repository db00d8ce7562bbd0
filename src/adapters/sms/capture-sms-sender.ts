import { type CaptureSink, extractLinks } from "../mailer/capture-sink.js";
import type { SendContext, SendResult } from "../mailer/mailer.js";
import type { OutgoingSms, SmsSender } from "./sms-sender.js";

/** An SMS sender that stores every message through a CaptureSink instead of delivering it. */
export class CaptureSmsSender implements SmsSender {
  readonly kind = "capture" as const;

  constructor(
    private readonly sink: CaptureSink,
    private readonly from: string,
  ) {}

  /** Stores the SMS; the message id is `captured-<id>`. */
  async send(sms: OutgoingSms, context: SendContext): Promise<SendResult> {
    const id = await this.sink.capture({
      accountId: context.accountId,
      channel: "sms",
      to: sms.to,
      from: this.from,
      subject: "",
      text: sms.body,
      html: null,
      links: extractLinks(sms.body, null),
      notificationId: context.notificationId ?? null,
    });
    return { messageId: `captured-${id}` };
  }
}
