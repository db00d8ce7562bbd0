import { Type } from "typebox";

const Timestamp = (example: string) =>
  Type.String({ format: "date-time", description: "UTC, ISO 8601 with microseconds.", examples: [example] });

/** Response schema of a Contact Method (spec: Contact Method). */
export const ContactMethodSchema = Type.Object(
  {
    id: Type.Integer({ examples: [31] }),
    interface_class: Type.String({ enum: ["email", "sms"], examples: ["email"] }),
    value: Type.String({
      description: "An email address for `email`; an E.164 mobile number for `sms`.",
      examples: ["jane@example.com"],
    }),
    created: Timestamp("2026-01-15T10:00:00.000000Z"),
    updated: Timestamp("2026-01-15T10:00:00.000000Z"),
  },
  { title: "ContactMethod", description: "How to reach a contact: one email address or mobile number." },
);

/** Response schema of a Contact (spec: Contact). */
export const ContactSchema = Type.Object(
  {
    id: Type.Integer({ examples: [12] }),
    first_name: Type.String({ examples: ["Jane"] }),
    last_name: Type.String({ examples: ["Doe"] }),
    contactmethod: Type.Array(ContactMethodSchema, { description: "Empty array when none." }),
    created: Timestamp("2026-01-15T10:00:00.000000Z"),
    updated: Timestamp("2026-01-15T10:00:00.000000Z"),
  },
  {
    title: "Contact",
    description: "A person requests are sent to.",
    examples: [
      {
        id: 12,
        first_name: "Jane",
        last_name: "Doe",
        contactmethod: [
          {
            id: 31,
            interface_class: "email",
            value: "jane@example.com",
            created: "2026-01-15T10:00:00.000000Z",
            updated: "2026-01-15T10:00:00.000000Z",
          },
          {
            id: 32,
            interface_class: "sms",
            value: "+14155550123",
            created: "2026-01-15T10:00:00.000000Z",
            updated: "2026-01-15T10:00:00.000000Z",
          },
        ],
        created: "2026-01-15T10:00:00.000000Z",
        updated: "2026-01-15T10:00:00.000000Z",
      },
    ],
  },
);

/** Input schema of one contact method (documentation; the service checks the body). */
export const ContactMethodInput = Type.Object(
  {
    id: Type.Optional(
      Type.Integer({ description: "On contact PATCH only: keep and update this existing method." }),
    ),
    interface_class: Type.String({ enum: ["email", "sms"], examples: ["sms"] }),
    value: Type.String({
      maxLength: 254,
      description:
        "Email address, or E.164 mobile number (`+` and at most 15 digits; spaces, dashes, dots and parentheses are removed).",
      examples: ["+14155550123"],
    }),
  },
  { title: "ContactMethodInput" },
);

/** Contact fields accepted on create and PATCH (documentation; the service checks the body). */
export const contactInputProperties = {
  first_name: Type.Optional(Type.String({ maxLength: 150, examples: ["Jane"] })),
  last_name: Type.Optional(Type.String({ maxLength: 150, examples: ["Doe"] })),
  contactmethod: Type.Optional(
    Type.Array(ContactMethodInput, {
      maxItems: 20,
      description: "Contact methods. On PATCH, when given, the list replaces the contact's methods.",
    }),
  ),
  contact_method: Type.Optional(
    Type.Array(ContactMethodInput, { maxItems: 20, description: "Alias of `contactmethod`." }),
  ),
};

/** Body of POST /v1/contact/ and PATCH /v1/contact/{id}/. */
export const ContactInput = Type.Object(contactInputProperties, {
  title: "ContactInput",
  examples: [
    {
      first_name: "Jane",
      last_name: "Doe",
      contactmethod: [
        { interface_class: "email", value: "jane@example.com" },
        { interface_class: "sms", value: "+14155550123" },
      ],
    },
  ],
});
