import { Type } from "typebox";

const filter = (description: string, example: string) =>
  Type.Optional(Type.String({ maxLength: 1000, description, examples: [example] }));

/** Query of `GET /v1/logentry/search/` (spec: Log endpoint). Empty filter values filter nothing. */
export const LogSearchQuerySchema = Type.Object({
  page: Type.Optional(
    Type.Integer({ minimum: 1, default: 1, description: "1-based page number, counted from the marker." }),
  ),
  page_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: 100,
      description: "Entries per page; values above 100 are clamped to 100.",
    }),
  ),
  marker: Type.Optional(
    Type.String({
      maxLength: 300,
      description:
        'Where the listing starts (inclusive): the previous response\'s next_marker as JSON, or "<nextpartitionkey>,<nextrowkey>".',
      examples: [
        '{"nextpartitionkey":"7-20260115","nextrowkey":"999999999999850"}',
        "7-20260115,999999999999850",
      ],
    }),
  ),
  PartitionKey: filter("Exact PartitionKey: `<account id>-<YYYYMMDD>` (one UTC day).", "7-20260115"),
  code: filter("Exact event code (see the Audit log events table).", "ABA-0010"),
  related_model: filter("Exact model name of the entity concerned.", "request"),
  relation_key: filter(
    "Exact key (id) of the entity concerned; needs related_model (one entity's history).",
    "42",
  ),
  path: filter("Exact request path, without query string.", "/v1/request/42/"),
  from: filter("Exact client address.", "203.0.113.7"),
  method: filter("Exact HTTP method.", "POST"),
  content_type: filter("Exact request content type, without parameters.", "application/json"),
  since: filter(
    "Entries at or after this time: ISO 8601 with a time zone, or a date (midnight UTC).",
    "2026-01-15T00:00:00Z",
  ),
  until: filter("Entries before this time (exclusive); same forms as since.", "2026-01-16"),
});

/** The spec's Log entry: every field a string. */
export const LogEntrySchema = Type.Object(
  {
    PartitionKey: Type.String({
      description: "`<account id>-<YYYYMMDD>`: the account's entries of one UTC day.",
    }),
    RowKey: Type.String({ description: "15 digits; sorts newest first; unique within the account." }),
    Timestamp: Type.String({ description: "UTC, ISO 8601 with microseconds." }),
    code: Type.String(),
    api_key_id: Type.String({ description: "Id of the application (API key) that acted; empty if none." }),
    related_model: Type.String(),
    relation_key: Type.String({ description: "Id of the entity concerned." }),
    value: Type.String(),
    from: Type.String({ description: "Client address." }),
    method: Type.String(),
    path: Type.String(),
    data: Type.String(),
    content_type: Type.String(),
    etag: Type.String({ description: "Changes whenever the entry's content changes." }),
  },
  {
    title: "LogEntry",
    examples: [
      {
        PartitionKey: "7-20260115",
        RowKey: "999999999999986",
        Timestamp: "2026-01-15T10:00:00.000000Z",
        code: "ABA-0010",
        api_key_id: "3",
        related_model: "request",
        relation_key: "42",
        value: "Request created",
        from: "203.0.113.7",
        method: "POST",
        path: "/v1/request/",
        data: "",
        content_type: "application/json",
        etag: 'W/"5d41402abc4b2a76b9719d911017c592"',
      },
    ],
  },
);

/** The spec's Marker. */
export const MarkerSchema = Type.Object(
  {
    nextpartitionkey: Type.String({ examples: ["7-20260115"] }),
    nextrowkey: Type.String({ examples: ["999999999999850"] }),
  },
  { title: "LogSearchMarker" },
);

/** Response of `GET /v1/logentry/search/`. */
export const LogSearchResponseSchema = Type.Object(
  {
    next_marker: Type.Union([MarkerSchema, Type.Null()], {
      description: "Pass back as `marker` to continue after the last entry returned; null at the end.",
    }),
    total_pages: Type.Integer({
      description:
        "Pages of page_size from the marker (or the newest entry). An estimate when total_pages_estimated is present.",
    }),
    total_pages_estimated: Type.Optional(
      Type.Boolean({
        description:
          "Present and true only when total_pages is an estimate: two or more filters whose narrowest matches more than 10,000 entries. Pages and markers still reach every entry.",
      }),
    ),
    page_size: Type.Integer({
      description:
        "Entries per page used for this answer: the page_size asked for, or 100 when more was asked.",
    }),
    results: Type.Array(LogEntrySchema),
  },
  { title: "LogSearchResult" },
);
