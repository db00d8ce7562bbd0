/**
 * The SMS port: a Twilio-compatible REST adapter, or a capture adapter that stores the
 * messages (the default when SMS_PROVIDER is unset). `createSmsSender(config, sink)` picks one.
 */
import type { Config } from "../../config/config.js";
import type { CaptureSink } from "../mailer/capture-sink.js";
import type { SendContext, SendResult } from "../mailer/mailer.js";
import { CaptureSmsSender } from "./capture-sms-sender.js";
import { TwilioSmsSender } from "./twilio-sms-sender.js";

export { DeliveryError } from "../mailer/mailer.js";

/** One SMS: an E.164 destination and the text. */
export interface OutgoingSms {
  to: string;
  body: string;
}

/** Sends SMS. Throws DeliveryError (transient or permanent) on failure. */
export interface SmsSender {
  readonly kind: "twilio" | "capture";
  send(sms: OutgoingSms, context: SendContext): Promise<SendResult>;
}

/**
 * The start-up warning of a live deployment whose SMS are captured instead of sent (SMS_PROVIDER
 * capture), or undefined when there is nothing to warn about (a provider configured, or a sandbox).
 */
export function smsDeliveryWarning(config: Config): string | undefined {
  if (config.isSandbox || config.SMS_PROVIDER !== "capture") return undefined;
  return "No SMS provider is configured in this live deployment (SMS_PROVIDER=capture): SMS (notifications, two-factor codes) are captured in the database and NOT delivered to anyone. Set SMS_PROVIDER=twilio and its credentials to send them.";
}

/** Settings of the Twilio-compatible adapter. */
export interface TwilioSettings {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  /** Sender number (E.164); ignored when messagingServiceSid is set. */
  from?: string | undefined;
  messagingServiceSid?: string | undefined;
  timeoutMs?: number;
}

/** The deployment's SMS sender; throws Error when SMS_PROVIDER=twilio lacks its credentials. */
export function createSmsSender(config: Config, sink: CaptureSink): SmsSender {
  switch (config.SMS_PROVIDER) {
    case "twilio": {
      const missing = [
        !config.TWILIO_ACCOUNT_SID && "TWILIO_ACCOUNT_SID",
        !config.TWILIO_AUTH_TOKEN && "TWILIO_AUTH_TOKEN",
        !config.SMS_FROM && !config.SMS_MESSAGING_SERVICE_SID && "SMS_FROM or SMS_MESSAGING_SERVICE_SID",
      ].filter(Boolean);
      if (missing.length > 0) throw new Error(`SMS_PROVIDER=twilio needs ${missing.join(", ")}`);
      return new TwilioSmsSender({
        baseUrl: config.TWILIO_BASE_URL,
        accountSid: config.TWILIO_ACCOUNT_SID!,
        authToken: config.TWILIO_AUTH_TOKEN!,
        from: config.SMS_FROM,
        messagingServiceSid: config.SMS_MESSAGING_SERVICE_SID,
      });
    }
    case "capture":
      return new CaptureSmsSender(sink, config.SMS_FROM ?? "");
  }
}
