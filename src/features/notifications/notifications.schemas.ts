import { Type } from "typebox";

const Timestamp = (example: string) =>
  Type.String({ format: "date-time", description: "UTC, ISO 8601 with microseconds.", examples: [example] });

/** A contact method as send_notification reports it. */
export const ContactMethodRefSchema = Type.Object(
  {
    id: Type.Integer({ examples: [31] }),
    interface_class: Type.String({ enum: ["email", "sms"], examples: ["email"] }),
    value: Type.String({ examples: ["jane@example.com"] }),
  },
  { title: "NotifiedContactMethod" },
);

/** The spec's send_notification answer. */
export const SendNotificationResponse = Type.Object(
  {
    contact_notification_send: Type.Array(
      Type.Object({
        id: Type.Integer({ description: "Notification id.", examples: [501] }),
        sent_at: Type.String({
          format: "date-time",
          description: "When the sending was queued, with milliseconds.",
          examples: ["2026-01-15T10:00:00.123Z"],
        }),
        contactmethod: ContactMethodRefSchema,
      }),
      { description: "Contact methods a message was queued for." },
    ),
    contact_notification_failed: Type.Array(Type.Object({ contactmethod: ContactMethodRefSchema }), {
      description: "Contact methods that cannot be sent to (invalid value, unsupported channel).",
    }),
  },
  {
    title: "RequestNotificationResult",
    examples: [
      {
        contact_notification_send: [
          {
            id: 501,
            sent_at: "2026-01-15T10:00:00.123Z",
            contactmethod: { id: 31, interface_class: "email", value: "jane@example.com" },
          },
        ],
        contact_notification_failed: [{ contactmethod: { id: 32, interface_class: "sms", value: "+1555" } }],
      },
    ],
  },
);

/** A captured email or SMS in the sandbox outbox. */
export const CapturedMessageSchema = Type.Object(
  {
    id: Type.Integer({ examples: [7] }),
    channel: Type.String({ enum: ["email", "sms"], examples: ["email"] }),
    to: Type.String({ examples: ["jane@example.com"] }),
    from: Type.String({ examples: ["Ferry <no-reply@ferry.example>"] }),
    subject: Type.String({
      description: "Empty for SMS.",
      examples: ["[SANDBOX] Alex Morgan sent you files"],
    }),
    text: Type.String({ description: "Plain text (the SMS text, or the email's text part)." }),
    html: Type.Union([Type.String(), Type.Null()], { description: "The email's HTML part; null for SMS." }),
    links: Type.Array(Type.String(), {
      description: "Absolute links found in the message, in order.",
      examples: [["https://ferry.example/r/x7Yp.../"]],
    }),
    notification: Type.Union([Type.Integer(), Type.Null()], {
      description: "The notification this message delivered; null for direct messages (two-factor codes).",
    }),
    created: Timestamp("2026-01-15T10:00:00.000000Z"),
  },
  {
    title: "SandboxMessage",
    description: "A message the capture mailer or capture SMS sender stored instead of delivering.",
  },
);

/** Filters of the sandbox outbox. */
export const CapturedQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
  channel: Type.Optional(Type.String({ enum: ["email", "sms"], description: "Only this channel." })),
  to: Type.Optional(Type.String({ description: "Only messages to this exact address or number." })),
});

/** The account's custom SMTP settings as shown (never the password). */
export const SmtpSettingsSchema = Type.Object(
  {
    host: Type.String({ examples: ["smtp.example.com"] }),
    port: Type.Integer({ examples: [587] }),
    tls: Type.String({ enum: ["none", "starttls", "tls"], examples: ["starttls"] }),
    username: Type.Union([Type.String(), Type.Null()], { examples: ["mailer"] }),
    has_password: Type.Boolean({ description: "Whether a password is stored (it is never returned)." }),
    from_email: Type.String({ examples: ["files@example.com"] }),
    created: Timestamp("2026-01-15T10:00:00.000000Z"),
    updated: Timestamp("2026-01-15T10:00:00.000000Z"),
  },
  {
    title: "SmtpSettings",
    description: "The account's own SMTP server, used instead of the deployment's for its emails.",
  },
);

/** Body of PUT /v1/settings/smtp/. */
export const SmtpSettingsInput = Type.Object(
  {
    host: Type.String({ examples: ["smtp.example.com"] }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 587 })),
    tls: Type.Optional(Type.String({ enum: ["none", "starttls", "tls"], default: "starttls" })),
    username: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    password: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: "Omitted: the stored password is kept. Empty or null: removed. Stored encrypted.",
      }),
    ),
    from_email: Type.String({
      description: "Sender address of the account's emails.",
      examples: ["files@example.com"],
    }),
  },
  { title: "SmtpSettingsInput" },
);

const nullableTime = (description: string) =>
  Type.Unsafe<string | null>({ type: ["string", "null"], format: "date-time", description });

/** A notification in GET /v1/notification/ (docs/notifications.md). */
export const NotificationRecordSchema = Type.Object(
  {
    id: Type.Integer(),
    request: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "The request notified; null for a container's notification.",
    }),
    container: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "The container notified; null for a request's notification.",
    }),
    channel: Type.String({ enum: ["email", "sms"], description: "The contact method's channel." }),
    destination: Type.String({
      description:
        "The email address or E.164 number notified, in full: the account's own contact data, as the contact and the callback show it.",
    }),
    contact_first_name: Type.String(),
    contact_last_name: Type.String(),
    state: Type.String({
      enum: ["queued", "sent", "failed"],
      description:
        "queued until the delivery has an outcome; sent once the server accepted it; failed otherwise.",
    }),
    error: Type.Unsafe<string | null>({
      type: ["string", "null"],
      description: "Why the delivery failed (or the last retried error); null when none.",
    }),
    attempts: Type.Integer({ description: "Delivery attempts so far." }),
    queued_at: Type.String({ format: "date-time", description: "When send_notification queued it." }),
    sent_at: nullableTime("When the mail or SMS server accepted it; null until then."),
    opened_at: nullableTime("First open of the email (tracking pixel); null if not seen or SMS."),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  { title: "Notification" },
);

/** Query of GET /v1/notification/. */
export const NotificationListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  page_size: Type.Optional(
    Type.Integer({ minimum: 1, default: 10, description: "Items per page; above 100 answers 100." }),
  ),
  request: Type.Optional(
    Type.String({ description: "Only notifications of this request id.", examples: ["42"] }),
  ),
  container: Type.Optional(
    Type.String({ description: "Only notifications of this container id.", examples: ["7"] }),
  ),
  state: Type.Optional(Type.String({ enum: ["queued", "sent", "failed"] })),
});
