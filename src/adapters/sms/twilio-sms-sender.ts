import { DeliveryError, type SendResult } from "../mailer/mailer.js";
import type { OutgoingSms, SmsSender, TwilioSettings } from "./sms-sender.js";

// Twilio error codes that no retry can fix: invalid or unreachable destination, unsubscribed, bad sender.
const PERMANENT_TWILIO_CODES = new Set([21211, 21214, 21408, 21610, 21612, 21614, 21606, 21659, 21660]);

/**
 * Sends SMS through a Twilio-compatible Messages REST API: POST
 * `{base}/2010-04-01/Accounts/{sid}/Messages.json`, form fields To, Body and From or
 * MessagingServiceSid, HTTP Basic auth with the account SID and auth token.
 */
export class TwilioSmsSender implements SmsSender {
  readonly kind = "twilio" as const;

  constructor(private readonly settings: TwilioSettings) {}

  /**
   * Sends one SMS. 4xx answers (except 408 and 429) are permanent DeliveryErrors; 5xx, 408, 429,
   * timeouts and network failures are transient.
   */
  async send(sms: OutgoingSms): Promise<SendResult> {
    const { baseUrl, accountSid, authToken, from, messagingServiceSid } = this.settings;
    const form = new URLSearchParams({ To: sms.to, Body: sms.body });
    if (messagingServiceSid) form.set("MessagingServiceSid", messagingServiceSid);
    else if (from) form.set("From", from);
    const url = `${baseUrl.replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: form.toString(),
        redirect: "error",
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? 15_000),
      });
    } catch (err) {
      throw new DeliveryError(`SMS provider unreachable: ${(err as Error).name}`, false);
    }
    const body = (await res.json().catch(() => ({}))) as { sid?: string; code?: number; message?: string };
    if (res.ok) return { messageId: String(body.sid ?? "") };
    const detail = `SMS provider answered ${res.status}${body.code ? ` (code ${body.code})` : ""}: ${String(body.message ?? res.statusText).slice(0, 300)}`;
    const transient = res.status >= 500 || res.status === 408 || res.status === 429;
    const permanent = !transient || (body.code !== undefined && PERMANENT_TWILIO_CODES.has(body.code));
    throw new DeliveryError(detail, permanent);
  }
}
