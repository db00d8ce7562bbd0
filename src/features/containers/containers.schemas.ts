/**
 * Schemas of the container module's routes (documentation and response serialisation; bodies are
 * checked by the services, which accept JSON, forms and numeric strings as clients send them).
 */
import { type TSchema, Type } from "typebox";

const ts = "2026-01-15T10:00:00.000000Z";
const Timestamp = (description = "UTC, ISO 8601 with microseconds.") =>
  Type.String({ format: "date-time", description, examples: [ts] });
const NullableTimestamp = (description: string) =>
  Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description, examples: [null] });
const NullableInt = (description: string, example: number | null = null) =>
  Type.Union([Type.Integer(), Type.Null()], { description, examples: [example] });
const NullableString = (description: string, example: string | null = null) =>
  Type.Union([Type.String(), Type.Null()], { description, examples: [example] });

export const ContainerSchema = Type.Object(
  {
    id: Type.Integer({ examples: [7] }),
    identifier: Type.String({
      description: "32 hex characters.",
      examples: ["3f2a9c0d8b7e4a1f9c6d5e4b3a2f1e0d"],
    }),
    page_type: Type.Union([Type.Literal("pushpull"), Type.Literal("p2")]),
    display_chat: Type.Boolean(),
    callback_url: NullableString(
      "Receives the container's callbacks.",
      "https://example.com/hooks/ferry?order=9",
    ),
    requester: NullableInt("ID of the requester shown in the session; null: the owner's profile."),
    state: Type.Union([
      Type.Literal("draft"),
      Type.Literal("sent"),
      Type.Literal("complete"),
      Type.Literal("expired"),
    ]),
    auth_code: Type.Union(
      [
        Type.Object({
          send_as: Type.Union([Type.Literal("email"), Type.Literal("sms")]),
          to: Type.String({ examples: ["+14155550100"] }),
        }),
        Type.Null(),
      ],
      { description: "Where the session's code is sent before anything is shown; null: no code." },
    ),
    sent_at: NullableTimestamp("When the recipients were first notified."),
    completed_at: NullableTimestamp(
      "When the container became complete or expired; null again once a new feature makes it sent.",
    ),
    chat_closed_at: NullableTimestamp(
      "When you closed the chat (`close_chat`); null while it is open. The chat also ends when the container expires.",
    ),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "Container", description: "One recipient session wrapping several interactions (features)." },
);

export const ContainerInput = Type.Object(
  {
    page_type: Type.Union([Type.Literal("pushpull"), Type.Literal("p2")], {
      description: "Required on create.",
    }),
    callback_url: Type.Optional(NullableString("An absolute http(s) URL; empty or null: none.")),
    display_chat: Type.Optional(Type.Boolean({ default: false })),
    requester: Type.Optional(NullableInt("ID of one of the account's requesters.")),
  },
  { title: "ContainerInput" },
);

export const RecipientSchema = Type.Object(
  {
    id: Type.Integer({ examples: [11] }),
    container: Type.Integer({ examples: [7] }),
    active: Type.Boolean({ description: "Inactive recipients are not notified." }),
    first_name: Type.String({ examples: ["Jane"] }),
    last_name: Type.String({ examples: ["Doe"] }),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "ContainerRecipient" },
);

export const RecipientInput = Type.Object(
  {
    first_name: Type.Optional(Type.String({ maxLength: 150 })),
    last_name: Type.Optional(Type.String({ maxLength: 150 })),
    active: Type.Optional(Type.Boolean()),
  },
  { title: "ContainerRecipientInput" },
);

export const RecipientItemSchema = Type.Object(
  {
    id: Type.Integer({ examples: [21] }),
    recipient: Type.Integer({ examples: [11] }),
    container: Type.Integer({ examples: [7] }),
    interface_class: Type.Union([Type.Literal("email"), Type.Literal("sms"), Type.Literal("link")]),
    value: Type.String({ examples: ["jane@example.com"] }),
    link: NullableString("The recipient's session URL once notified.", "https://ferry.example/s/Zk3.../"),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "ContainerRecipientItem" },
);

export const RecipientItemInput = Type.Object(
  {
    interface_class: Type.Union([Type.Literal("email"), Type.Literal("sms"), Type.Literal("link")]),
    value: Type.Union([Type.String(), Type.Number()], {
      description: "An email address, an E.164 number, or any label for a link.",
    }),
  },
  { title: "ContainerRecipientItemInput" },
);

export const EmailSchema = Type.Object(
  {
    id: Type.Integer({ examples: [3] }),
    container: Type.Integer({ examples: [7] }),
    subject: Type.String({ examples: ["Documents for your mortgage"] }),
    body: Type.String({
      description: "Plain text; line breaks are kept.",
      examples: ["Hello,\nplease upload..."],
    }),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "ContainerEmail" },
);

export const EmailInput = Type.Object(
  {
    subject: Type.Optional(Type.String({ maxLength: 255 })),
    body: Type.Optional(Type.String({ maxLength: 20000 })),
  },
  { title: "ContainerEmailInput" },
);

export const AuthCodeInput = Type.Object(
  {
    send_as: Type.Union([Type.Literal("email"), Type.Literal("sms")]),
    to: Type.String({
      description: "An email address, or an E.164 number for sms.",
      examples: ["+14155550100"],
    }),
  },
  { title: "ContainerAuthCodeInput" },
);

export const AuthCodeSchema = Type.Object(
  {
    container: Type.Integer(),
    send_as: Type.Union([Type.Literal("email"), Type.Literal("sms")]),
    to: Type.String(),
    updated: Timestamp(),
  },
  { title: "ContainerAuthCode" },
);

export const ContainerNotificationSchema = Type.Object(
  {
    id: Type.Integer({ description: "The notification's id." }),
    recipient_item: Type.Integer(),
    recipient: Type.Integer(),
    state: Type.Union([Type.Literal("send"), Type.Literal("failed")]),
    contact_first_name: Type.String(),
    contact_last_name: Type.String(),
    contact_method_value: Type.String(),
    contact_method_interface_class: Type.Union([
      Type.Literal("email"),
      Type.Literal("sms"),
      Type.Literal("link"),
    ]),
    was_sent: Type.Boolean(),
    removed: Type.Boolean(),
    link: Type.String({ description: "The recipient item's session URL." }),
    error: NullableString("Why the item could not be notified."),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "ContainerNotification" },
);

export const MessageSchema = Type.Object(
  {
    id: Type.Integer(),
    container: Type.Integer(),
    title: Type.String(),
    body: Type.String(),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "ContainerMessage" },
);

export const MessageInput = Type.Object(
  {
    container: Type.Union([Type.Integer(), Type.String()], { description: "Container id." }),
    body: Type.String({ maxLength: 10000 }),
    title: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { title: "ContainerMessageInput" },
);

export const ReplySchema = Type.Object(
  {
    id: Type.Integer(),
    container: Type.Integer(),
    recipient: Type.Integer(),
    body: Type.String(),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "ContainerMessageReply" },
);

/** The fields every feature kind shows, enrichments included (exported for their schemas). */
export const featureCommon = {
  id: Type.Integer({ examples: [31] }),
  container: Type.Integer({ examples: [7] }),
  state: Type.Union([Type.Literal("pending"), Type.Literal("complete"), Type.Literal("expired")]),
  expiration: NullableTimestamp("When the feature expires (its files are then destroyed)."),
  recipient_permissions: Type.Array(Type.Integer(), {
    description: "Recipients who may see the feature; empty: every recipient of the container.",
  }),
  after: Type.Array(Type.Integer(), {
    description:
      "Features of the same container this one waits for: it opens to the recipient once they are all complete.",
  }),
  created: Timestamp(),
  updated: Timestamp(),
};
const fileLimits = {
  allowed_file_extensions: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: "Extensions without dots; null: any.",
    examples: [["pdf", "jpg"]],
  }),
  max_file_size: NullableInt("Largest file a recipient may send, in bytes."),
  max_files: NullableInt("Most files a recipient may send."),
};

export const MediaTagSchema = Type.Object(
  {
    id: Type.Integer(),
    pushpull: Type.Integer(),
    name: Type.String(),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "MediaTag" },
);

export const PushPullFeatureSchema = Type.Object(
  {
    ...featureCommon,
    type: Type.Union([Type.Literal("push"), Type.Literal("pull")]),
    message: Type.String(),
    receiver_message: NullableString("What the recipient wrote when submitting."),
    requester_privatenotes: Type.String(),
    is_draft: Type.Boolean(),
    is_expired: Type.Boolean(),
    complete: Type.Boolean(),
    ...fileLimits,
    media_tags: Type.Array(MediaTagSchema),
  },
  { title: "PushPullFeature" },
);

export const PullFeatureSchema = Type.Object(
  {
    ...featureCommon,
    title: Type.String(),
    description: Type.String(),
    receiver_message: NullableString("What the recipient wrote when submitting."),
    ...fileLimits,
  },
  { title: "PullFeature" },
);

export const PushFeatureSchema = Type.Object(
  {
    ...featureCommon,
    title: Type.String(),
    description: Type.String(),
    max_file_downloads: NullableInt("How often each file may be downloaded; null: without limit."),
  },
  { title: "PushFeature" },
);

/** The input fields every feature kind takes, enrichments included (exported for their schemas). */
export const featureInputCommon = {
  container: Type.Union([Type.Integer(), Type.String()], {
    description: "Container id (required on create).",
  }),
  expiration: Type.Optional(NullableTimestamp("Default: CONTAINER_FEATURE_EXPIRY_HOURS after creation.")),
  recipient_permissions: Type.Optional(Type.Array(Type.Integer())),
  after: Type.Optional(
    Type.Array(Type.Integer(), {
      description:
        "Ids of features of the same container to wait for (422 for another container's or a cycle).",
    }),
  ),
};
const fileLimitInputs = {
  allowed_file_extensions: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String(), Type.Null()])),
  max_file_size: Type.Optional(NullableInt("Bytes.")),
  max_files: Type.Optional(NullableInt("Files.")),
};

export const PushPullFeatureInput = Type.Object(
  {
    ...featureInputCommon,
    type: Type.Union([Type.Literal("push"), Type.Literal("pull")]),
    message: Type.Optional(Type.String()),
    requester_privatenotes: Type.Optional(Type.String()),
    ...fileLimitInputs,
  },
  { title: "PushPullFeatureInput" },
);

export const PullFeatureInput = Type.Object(
  {
    ...featureInputCommon,
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    ...fileLimitInputs,
  },
  { title: "PullFeatureInput" },
);

export const PushFeatureInput = Type.Object(
  {
    ...featureInputCommon,
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    max_file_downloads: Type.Optional(NullableInt("Downloads of each file.")),
  },
  { title: "PushFeatureInput" },
);

export const MediaTagInput = Type.Object(
  { pushpull: Type.Union([Type.Integer(), Type.String()]), name: Type.String({ maxLength: 255 }) },
  { title: "MediaTagInput" },
);

export const PullFileSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    content_type: Type.String(),
    extension: Type.String(),
    bytes: Type.Integer(),
    download_url: Type.String({ description: "Absolute; send Authorization: JWT <token>." }),
  },
  { title: "PullFile" },
);

export const PushFileInput = Type.Object(
  {
    push: Type.Union([Type.Integer(), Type.String()], {
      description: "The push feature (also `feature`, `pushpull`).",
    }),
    file: Type.String({ format: "binary" }),
    name: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    total_chunks: Type.Optional(Type.Integer({ minimum: 1 })),
    current_chunk: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { title: "PushFileInput" },
);

export const SandboxFilesInput = Type.Object(
  {
    recipient: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    receiver_message: Type.Optional(NullableString("Stored as the feature's receiver_message.")),
    files: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String(),
          content_type: Type.Optional(Type.String()),
          content: Type.Optional(Type.String({ description: "The file's text." })),
          bytes: Type.Optional(Type.Integer({ minimum: 0, description: "Size of generated content." })),
        }),
      ),
    ),
  },
  { title: "SandboxFeatureCompletion" },
);

/** The paginated envelope around `item`. */
export function Page(item: TSchema, title: string) {
  return Type.Object(
    {
      links: Type.Object({
        previous: Type.Union([Type.String(), Type.Null()]),
        next: Type.Union([Type.String(), Type.Null()]),
      }),
      total_pages: Type.Integer(),
      count: Type.Integer(),
      page_size: Type.Integer({
        description:
          "Items per page used for this answer: the page_size asked for, or 100 when more was asked.",
      }),
      results: Type.Array(item),
    },
    { title },
  );
}
