import { Type } from "typebox";

const Timestamp = (example: string) =>
  Type.String({ format: "date-time", description: "UTC, ISO 8601 with microseconds.", examples: [example] });

/** The Email Template object. */
export const EmailTemplateSchema = Type.Object(
  {
    id: Type.Integer({ examples: [3] }),
    slug: Type.String({ examples: ["welcome"] }),
    subject: Type.String({ examples: ["Files from {{ requester.first_name }}"] }),
    html: Type.String({
      examples: ['<p>Hello {{ contact.first_name }},</p><p><a href="{{ recipient_url }}">Open</a></p>'],
    }),
    created: Timestamp("2026-01-15T10:00:00.000000Z"),
    updated: Timestamp("2026-01-15T10:00:00.000000Z"),
  },
  {
    title: "EmailTemplate",
    description: "An HTML email template with merge tags (Liquid with Django-compatible filters).",
  },
);

/** Body of POST /v1/email_template/ (and PATCH, all optional). */
export const EmailTemplateInput = Type.Object(
  {
    slug: Type.String({
      description: "Letters, digits, _ and -, at most 100; unique per account; `render` is reserved.",
      examples: ["welcome"],
    }),
    subject: Type.Optional(
      Type.String({ description: "Subject template (optional; the request's subject wins when set)." }),
    ),
    html: Type.String({
      description: "HTML body template. Syntax errors are refused with their line.",
      examples: ['<p>Hello {{ contact.first_name }},</p><p>Sent {{ created|date:"jS F Y" }}.</p>'],
    }),
  },
  { title: "EmailTemplateInput" },
);

/** Path parameter of template routes. */
export const SlugParams = Type.Object({ slug: Type.String({ examples: ["welcome"] }) });

/** Body of POST /v1/email_template/render/. */
export const RenderInput = Type.Object(
  {
    slug: Type.Optional(Type.String({ description: "A stored template to render." })),
    subject: Type.Optional(Type.String({ description: "Subject template (with html, instead of slug)." })),
    html: Type.Optional(Type.String({ description: "HTML template text (instead of slug)." })),
    request: Type.Optional(
      Type.Union([Type.Integer(), Type.String()], {
        description: "Request id to take merge data from; sample data when absent.",
        examples: [42],
      }),
    ),
  },
  { title: "EmailTemplateRenderInput" },
);

/** Answer of POST /v1/email_template/render/. */
export const RenderResponse = Type.Object(
  {
    subject: Type.String(),
    html: Type.String(),
    text: Type.String({ description: "The plain-text alternative." }),
  },
  {
    title: "EmailTemplateRender",
    examples: [
      {
        subject: "Files from Alex",
        html: '<p>Hello Jane,</p><p><a href="https://ferry.example/r/sample/">Open</a></p>',
        text: "Hello Jane,\n\nOpen (https://ferry.example/r/sample/)",
      },
    ],
  },
);
