import { Type } from "typebox";
import { ContactInputSchema as ContactInput, ContactSchema } from "../contacts/index.js";
import { RequesterSchema } from "../requesters/index.js";

const ts = "2026-01-15T10:00:00.000000Z";
const Timestamp = (description = "UTC, ISO 8601 with microseconds.") =>
  Type.String({ format: "date-time", description, examples: [ts] });
const Nullable = (type: "string" | "integer", description: string, example: unknown) =>
  Type.Unsafe<string | number | null>({ type: [type, "null"], description, examples: [example] });
const NullableEnum = <T extends string>(values: T[], description: string, example: T | null) =>
  Type.Unsafe<T | null>({
    type: ["string", "null"],
    enum: [...values, null],
    description,
    examples: [example],
  });

/** A media item inside a request (spec: Media, plus `file` and the fields existing clients read). */
export const MediaSummarySchema = Type.Object(
  {
    id: Type.Integer({ examples: [55] }),
    request: Type.Integer({ description: "ID of the owning request.", examples: [101] }),
    feature: Nullable(
      "integer",
      "Always null for a request's file (set for files of container features).",
      null,
    ),
    recipient: Nullable(
      "integer",
      "Always null for a request's file (set for files container recipients upload).",
      null,
    ),
    name: Type.String({ examples: ["contract.pdf"] }),
    content_type: Type.String({ examples: ["application/pdf"] }),
    bytes: Type.Integer({ examples: [48213] }),
    extension: Type.String({ examples: ["pdf"] }),
    file: Type.String({ description: "Stored file name.", examples: ["contract.pdf"] }),
    total_chunks: Type.Integer({ examples: [1] }),
    current_chunk: Type.Integer({ description: "Chunks received so far.", examples: [1] }),
    file_checksum: Nullable(
      "string",
      "MD5 hex of the content (for older clients).",
      "9e107d9d372bb6826bd81d3542a419d6",
    ),
    sha256: Nullable("string", "SHA-256 hex of the content.", null),
    state: Type.String({ enum: ["uploading", "available", "removed"], examples: ["available"] }),
    times_downloaded: Type.Integer({ examples: [0] }),
    max_allowed_times_downloaded: Nullable("integer", "Download limit; null = unlimited.", null),
    removed_at: Nullable("string", "When the file content was destroyed.", null),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "RequestMedia" },
);

const requestExample = {
  id: 101,
  identifier: "q3ZC7h0Jt0bPpjX6n8mFh3Yw1sQ2aLkE",
  type: "pull",
  message: "Please upload last year's tax return.",
  requester_privatenotes: "Client #4471",
  is_draft: false,
  complete: false,
  is_expired: false,
  expires_at: null,
  receiver_message: null,
  short_message: "Please upload your tax return http://localhost:8080/r/q3ZC7h0Jt0bPpjX6n8mFh3Yw1sQ2aLkE/",
  long_message_subject: "Sam Lee has requested files from you",
  long_message:
    'Hello Jane, please upload your documents.<br>\n<a href="http://localhost:8080/r/q3ZC7h0Jt0bPpjX6n8mFh3Yw1sQ2aLkE/">http://localhost:8080/r/q3ZC7h0Jt0bPpjX6n8mFh3Yw1sQ2aLkE/</a>',
  contact: [
    {
      id: 12,
      first_name: "Jane",
      last_name: "Doe",
      contactmethod: [
        { id: 31, interface_class: "email", value: "jane@example.com", created: ts, updated: ts },
      ],
      created: ts,
      updated: ts,
    },
  ],
  media: [],
  callback_url: "https://example.com/hooks/ferry?&order_id=9",
  requester: null,
  email_template_slug: null,
  tfa_send_to: "sms",
  tfa_send_to_value: "+14155550123",
  tfa_times_sent: 0,
  callback_status: null,
  callback_tries: 0,
  allowed_extensions: ["pdf", "jpg"],
  max_file_bytes: 10485760,
  created: ts,
  updated: ts,
};

/** Response schema of a Request (spec: Request, plus the fields existing clients read and Ferry's pull limits). */
export const RequestSchema = Type.Object(
  {
    id: Type.Integer({ examples: [101] }),
    identifier: Type.String({
      description: "Opaque public identifier of the recipient URL (192 random bits, base64url).",
    }),
    type: Type.String({ enum: ["push", "pull"], description: "push sends files, pull asks for files." }),
    message: Type.String({ description: "Shown on the request page." }),
    requester_privatenotes: Type.String({ description: "The owner's private notes." }),
    is_draft: Type.Boolean(),
    complete: Type.Boolean(),
    is_expired: Type.Boolean({ description: "True once a push request has passed expires_at." }),
    expires_at: Nullable("string", "When a push request expires (UTC, microseconds); null = never.", null),
    receiver_message: Nullable("string", "Reply message from the recipient.", null),
    short_message: Type.String({ description: "SMS text with the recipient URL appended after a space." }),
    long_message_subject: Type.String({ description: "Email subject; generated when none was given." }),
    long_message: Type.String({
      description: "Email body with an HTML anchor to the recipient URL appended.",
    }),
    contact: Type.Array(ContactSchema),
    media: Type.Array(MediaSummarySchema, { description: "Files of the request (empty until media exist)." }),
    callback_url: Nullable("string", "Receives callbacks for the request; query string kept verbatim.", null),
    requester: Type.Unsafe<unknown>({
      anyOf: [RequesterSchema, { type: "null" }],
      examples: [null],
      description:
        "The requester named on the request, or null (the recipient page shows the owner's profile).",
    }),
    email_template_slug: Nullable("string", "Slug of an email template.", null),
    tfa_send_to: NullableEnum(
      ["email", "sms"],
      "Channel of the two-factor code; null = no two-factor.",
      null,
    ),
    tfa_send_to_value: Nullable("string", "Email address or E.164 number the code goes to.", null),
    tfa_times_sent: Type.Integer({ description: "Two-factor codes sent so far." }),
    callback_status: NullableEnum(
      ["pending", "delivered", "failed", "stopped"],
      "Outcome of the latest callback delivery; null before the first one.",
      null,
    ),
    callback_tries: Type.Integer({ description: "Callback delivery attempts so far." }),
    allowed_extensions: Type.Unsafe<string[] | null>({
      type: ["array", "null"],
      items: { type: "string" },
      description: "Ferry extension: file extensions a pull request accepts; null = any.",
    }),
    max_file_bytes: Nullable(
      "integer",
      "Ferry extension: largest file a pull request accepts; null = no limit.",
      null,
    ),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { title: "Request", examples: [requestExample] },
);

const contactItem = Type.Unsafe<unknown>({
  anyOf: [
    {
      type: "object",
      properties: { id: { type: "integer" } },
      required: ["id"],
      description: "An existing contact.",
    },
    { ...ContactInput, description: "A new contact, created with the request." },
  ],
});

/** Body of POST /v1/request/ and PATCH /v1/request/{id}/ (every field optional). */
export const RequestInput = Type.Object(
  {
    type: Type.Optional(Type.String({ enum: ["push", "pull"], default: "pull" })),
    is_sending: Type.Optional(
      Type.Boolean({ description: "Alias of type: true = push, false = pull (type wins)." }),
    ),
    message: Type.Optional(Type.String({ maxLength: 5000 })),
    requester_privatenotes: Type.Optional(Type.String({ maxLength: 5000 })),
    requestor_privatenotes: Type.Optional(
      Type.String({ maxLength: 5000, description: "Alias of requester_privatenotes." }),
    ),
    is_draft: Type.Optional(
      Type.Boolean({
        default: false,
        description: "On PATCH, false sends a draft (422 while media are uploading).",
      }),
    ),
    short_message: Type.Optional(
      Type.String({ maxLength: 160, description: "SMS text, at most 160 characters." }),
    ),
    long_message_subject: Type.Optional(Type.String({ maxLength: 255 })),
    long_message: Type.Optional(Type.String({ maxLength: 20000 })),
    contact: Type.Optional(
      Type.Array(contactItem, {
        maxItems: 50,
        description:
          "Contacts: `{id}` of an existing contact (or the bare id), or a full contact created with the request. On PATCH the list replaces the request's contacts.",
      }),
    ),
    callback_url: Type.Optional(
      Type.Unsafe<string | null>({
        type: ["string", "null"],
        maxLength: 2048,
        description:
          "Absolute http(s) URL (https on live unless ALLOW_HTTP_CALLBACKS_IN_LIVE); the query string is kept.",
      }),
    ),
    requester: Type.Optional(
      Type.Unsafe<unknown>({
        anyOf: [
          { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
          { type: "integer" },
          { type: "null" },
        ],
        description: "`{id}` of an existing requester of the account; null removes it.",
      }),
    ),
    email_template_slug: Type.Optional(Nullable("string", "Slug of an email template.", "welcome")),
    tfa_send_to: Type.Optional(NullableEnum(["email", "sms"], "null turns two-factor off.", "sms")),
    tfa_send_to_value: Type.Optional(
      Nullable("string", "Required with tfa_send_to: an email address, or an E.164 number.", "+14155550123"),
    ),
    expires_at: Type.Optional(
      Nullable(
        "string",
        "ISO 8601, in the future. Default for push requests: sending time + the account's push_expiry_days (14).",
        "2026-02-01T00:00:00Z",
      ),
    ),
    allowed_extensions: Type.Optional(
      Type.Unsafe<string[] | null>({
        type: ["array", "null"],
        items: { type: "string" },
        description:
          'Ferry extension for pull requests: accepted extensions, e.g. ["pdf", "jpg"]; null = any.',
      }),
    ),
    max_file_bytes: Type.Optional(
      Nullable(
        "integer",
        "Ferry extension for pull requests: largest accepted file in bytes; null = no limit.",
        10485760,
      ),
    ),
  },
  {
    title: "RequestInput",
    examples: [
      {
        type: "pull",
        message: "Please upload last year's tax return.",
        short_message: "Please upload your tax return",
        contact: [
          {
            first_name: "Jane",
            last_name: "Doe",
            contactmethod: [
              { interface_class: "email", value: "jane@example.com" },
              { interface_class: "sms", value: "+14155550123" },
            ],
          },
        ],
        requester: { id: 4 },
        callback_url: "https://example.com/hooks/ferry?&order_id=9",
        allowed_extensions: ["pdf", "jpg"],
      },
    ],
  },
);

/** Response of GET /v1/request/counter/. */
export const CounterSchema = Type.Object(
  {
    count: Type.Integer({ description: "Requests sent (not drafts) by the account." }),
    counter: Type.Integer({ description: "Same value, under the reference's name." }),
  },
  { title: "RequestCounter", examples: [{ count: 42, counter: 42 }] },
);
