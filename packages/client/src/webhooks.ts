import { Webhook } from "standardwebhooks";
import { FerryError } from "./errors.js";
import type { components } from "./generated/schema.js";

type Schemas = components["schemas"];

/** `request_complete`: a pull request was completed by its recipient, or a push request expired. */
export interface RequestCompleteEvent {
  type: "request_complete";
  request: Schemas["Request"];
}

/** `contact_notification_send`: the notification to one contact method was sent, or failed for good. */
export interface ContactNotificationSendEvent {
  type: "contact_notification_send";
  message: string;
  status: boolean;
  notification: Schemas["Notification"];
  request: Schemas["Request"];
}

/** A callback body in the default (nested) shape, discriminated by `type`. */
export type WebhookEvent = RequestCompleteEvent | ContactNotificationSendEvent;

/** A callback body in the flat shape (`callback_shape: "flat"`): scalars lifted to `<object>_<field>`. */
export interface FlatWebhookEvent {
  type: WebhookEvent["type"];
  [field: string]: string | number | boolean | null;
}

/** Thrown when a callback's signature, timestamp or headers do not verify. */
export class WebhookVerificationError extends FerryError {
  override name = "WebhookVerificationError";
}

function plainHeaders(
  headers: Headers | Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
    (headers as Headers).forEach((value, key) => {
      out[key.toLowerCase()] = value;
    });
    return out;
  }
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(" ") : v;
  }
  return out;
}

/**
 * Verifies a Ferry callback (Standard Webhooks: `webhook-id`, `webhook-timestamp` within five
 * minutes, `webhook-signature` = `v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`
 * entries) with the account's secret (`whsec_…`, from GET /v1/callback_secret/; pass both secrets
 * during a rotation) and returns the event, typed by its `type`. `body` must be the raw body as
 * received. Verification is the `standardwebhooks` reference library's (constant-time compare),
 * which runs on Node, browsers and edge runtimes.
 */
export function verifyWebhook<E = WebhookEvent>(
  secret: string | string[],
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string,
): E {
  const plain = plainHeaders(headers);
  let last: unknown;
  for (const s of Array.isArray(secret) ? secret : [secret]) {
    try {
      return new Webhook(s).verify(body, plain) as E;
    } catch (e) {
      last = e;
    }
  }
  throw new WebhookVerificationError(
    `The callback does not verify: ${(last as Error | undefined)?.message ?? "no secret given"}.`,
  );
}
