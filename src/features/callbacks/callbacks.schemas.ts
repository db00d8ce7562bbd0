import { Type } from "typebox";
import { INTEGER_ID, PageQuery } from "../../http/openapi.js";

const Timestamp = (example: string) =>
  Type.String({ format: "date-time", description: "UTC, ISO 8601 with microseconds.", examples: [example] });
const NullableTimestamp = (description: string) =>
  Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description });
const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const NullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

/** Path parameter of `/v1/callback/{id}/` (a non-numeric id is 404). */
export const CallbackIdParams = Type.Object({
  id: Type.String({ description: INTEGER_ID, examples: ["7"] }),
});

/** `GET /v1/callback_secret/` and `POST /v1/callback_secret/rotate/`. */
export const CallbackSecretSchema = Type.Object(
  {
    secret: Type.String({
      description: "Current Standard Webhooks signing secret: `whsec_` + base64 of 32 bytes.",
      examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    }),
    created: Timestamp("2026-01-15T10:00:00.000000Z"),
    previous: Type.Array(
      Type.Object({
        created: Timestamp("2026-01-01T10:00:00.000000Z"),
        expires_at: Timestamp("2026-01-16T10:00:00.000000Z"),
      }),
      { description: "Replaced secrets that still sign (one more `v1,` signature each) until `expires_at`." },
    ),
  },
  {
    title: "CallbackSecret",
    description: "The account's callback signing secret.",
    examples: [
      {
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        created: "2026-01-15T10:00:00.000000Z",
        previous: [{ created: "2026-01-01T10:00:00.000000Z", expires_at: "2026-01-16T10:00:00.000000Z" }],
      },
    ],
  },
);

/** Callback settings of the account (`GET`/`PATCH /v1/callback_settings/`). */
export const CallbackSettingsSchema = Type.Object(
  {
    callback_shape: Type.Union([Type.Literal("nested"), Type.Literal("flat")], {
      description:
        "Payload shape: nested (default, `{type, request: {...}}`) or flat (see docs/callbacks.md).",
    }),
    secure_callbacks: Type.Boolean({
      description: "Require https callback URLs whose certificate validates (plain http is refused).",
    }),
  },
  { title: "CallbackSettings", examples: [{ callback_shape: "nested", secure_callbacks: false }] },
);

/** PATCH body of `/v1/callback_settings/` (every field optional). */
export const CallbackSettingsPatch = Type.Partial(CallbackSettingsSchema, { title: "CallbackSettingsPatch" });

const deliveryFields = {
  id: Type.Integer({ examples: [7] }),
  request: NullableInteger("Id of the request (null once the request was deleted)."),
  type: Type.String({
    enum: ["request_complete", "contact_notification_send"],
    examples: ["request_complete"],
  }),
  url: Type.String({ description: "The callback_url as it was when the event happened, query string kept." }),
  webhook_id: Type.String({
    description: "The `webhook-id` header: the same on every attempt of this event.",
    examples: ["msg_2KWPBgLlAfxdpx2AI54pPJ85f4W9"],
  }),
  status: Type.String({
    enum: ["pending", "delivered", "failed", "stopped"],
    description:
      "pending: an attempt is queued; delivered: a 2xx answer; failed: retries exhausted or the URL is refused; stopped: the receiver answered 410.",
  }),
  tries: Type.Integer({ description: "Attempts made so far.", examples: [2] }),
  next_attempt_at: NullableTimestamp("When the next attempt is due (pending only)."),
  last_attempt_at: NullableTimestamp("When the last attempt started."),
  last_status_code: NullableInteger("HTTP status of the last answer (null when there was none)."),
  last_error: NullableString("Why the last attempt failed."),
  delivered_at: NullableTimestamp("When a 2xx answer was received."),
  created: Timestamp("2026-01-15T10:00:00.000000Z"),
  updated: Timestamp("2026-01-15T10:00:05.000000Z"),
};

/** One delivery (list item). */
export const DeliverySchema = Type.Object(deliveryFields, {
  title: "CallbackDelivery",
  description: "The delivery of one event.",
});

/** One attempt of a delivery. */
export const AttemptSchema = Type.Object(
  {
    id: Type.Integer({ examples: [31] }),
    number: Type.Integer({ description: "1 for the first attempt of the delivery.", examples: [1] }),
    trigger: Type.String({ enum: ["automatic", "redelivery"] }),
    attempted_at: Timestamp("2026-01-15T10:00:00.000000Z"),
    duration_ms: Type.Integer({ examples: [42] }),
    status_code: NullableInteger("HTTP status of the answer; null on timeout, network error or refusal."),
    outcome: Type.String({
      enum: ["success", "http_error", "gone", "timeout", "network_error", "blocked"],
      description: "blocked: the URL was refused before sending (private address, scheme, https required).",
    }),
    error: NullableString("Why it failed."),
    response_excerpt: NullableString("Start of the response body, at most 1 KB."),
  },
  { title: "CallbackAttempt" },
);

/** A delivery with its event body and attempts. */
export const DeliveryDetailSchema = Type.Object(
  {
    ...deliveryFields,
    payload: Type.Unknown({ description: "The event as emitted (nested shape)." }),
    attempts: Type.Array(AttemptSchema),
  },
  {
    title: "CallbackDeliveryDetail",
    examples: [
      {
        id: 7,
        request: 42,
        type: "request_complete",
        url: "https://example.com/hooks/ferry?order_id=9",
        webhook_id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W9",
        status: "delivered",
        tries: 2,
        next_attempt_at: null,
        last_attempt_at: "2026-01-15T10:00:05.000000Z",
        last_status_code: 200,
        last_error: null,
        delivered_at: "2026-01-15T10:00:05.000000Z",
        created: "2026-01-15T10:00:00.000000Z",
        updated: "2026-01-15T10:00:05.000000Z",
        payload: { type: "request_complete", request: { id: 42, complete: true, is_expired: false } },
        attempts: [
          {
            id: 31,
            number: 1,
            trigger: "automatic",
            attempted_at: "2026-01-15T10:00:00.000000Z",
            duration_ms: 12,
            status_code: 500,
            outcome: "http_error",
            error: "receiver answered HTTP 500",
            response_excerpt: "oops",
          },
        ],
      },
    ],
  },
);

/** Query of `GET /v1/callback/`. */
export const DeliveryListQuery = Type.Object({
  ...PageQuery.properties,
  request: Type.Optional(
    Type.String({ description: "Only deliveries of this request id.", examples: ["42"] }),
  ),
  type: Type.Optional(Type.String({ description: "request_complete or contact_notification_send." })),
  status: Type.Optional(Type.String({ description: "pending, delivered, failed or stopped." })),
});
