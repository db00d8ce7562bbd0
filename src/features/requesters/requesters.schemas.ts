import { Type } from "typebox";

const NullableString = (description: string, example: string | null, maxLength = 255) =>
  Type.Unsafe<string | null>({ type: ["string", "null"], maxLength, description, examples: [example] });

const example = {
  id: 4,
  first_name: "Sam",
  last_name: "Lee",
  email: "sam.lee@example.com",
  mobile: "+14155550100",
  company: "Acme Accounting",
  role: "Tax advisor",
  location: "Boston, MA",
  facebook: null,
  linkedin: "samlee",
  twitter: "samlee",
  skype: null,
  avatar: null,
  created: "2026-01-15T10:00:00.000000Z",
  updated: "2026-01-15T10:00:00.000000Z",
};

/** Response schema of a Requester (spec: Requester). */
export const RequesterSchema = Type.Object(
  {
    id: Type.Integer({ examples: [4] }),
    first_name: Type.String({ examples: ["Sam"] }),
    last_name: Type.String({ examples: ["Lee"] }),
    email: Type.String({ examples: ["sam.lee@example.com"] }),
    mobile: NullableString("E.164 mobile number.", "+14155550100", 16),
    company: NullableString("Company.", "Acme Accounting"),
    role: NullableString("Role shown under the name on the recipient page.", "Tax advisor"),
    location: NullableString("Location.", "Boston, MA"),
    facebook: NullableString("Facebook username.", null, 100),
    linkedin: NullableString("LinkedIn username, no leading @.", "samlee", 100),
    twitter: NullableString("Twitter username, no leading @.", "samlee", 100),
    skype: NullableString("Skype username.", null, 100),
    avatar: Type.Unsafe<string | null>({
      type: ["string", "null"],
      description: "The picture as a data URL (`data:image/png;base64,...`), or null when unset.",
      examples: [null],
    }),
    created: Type.String({ format: "date-time", examples: [example.created] }),
    updated: Type.String({ format: "date-time", examples: [example.updated] }),
  },
  { title: "Requester", description: "The sender identity shown on recipient pages.", examples: [example] },
);

const optional = {
  mobile: Type.Optional(
    NullableString("E.164 mobile number (+, country code, at most 15 digits).", "+14155550100", 32),
  ),
  company: Type.Optional(NullableString("Company.", "Acme Accounting")),
  role: Type.Optional(NullableString("Role.", "Tax advisor")),
  location: Type.Optional(NullableString("Location.", "Boston, MA")),
  facebook: Type.Optional(NullableString("Username; a leading @ is removed.", null, 100)),
  linkedin: Type.Optional(NullableString("Username; a leading @ is removed.", "samlee", 100)),
  twitter: Type.Optional(NullableString("Username; a leading @ is removed.", "@samlee", 100)),
  skype: Type.Optional(NullableString("Username; a leading @ is removed.", null, 100)),
  avatar: Type.Optional(
    Type.Unsafe<string | null>({
      type: ["string", "null"],
      description:
        'PNG, JPEG or WebP image of at most 1 MB, as a data URL (`data:image/png;base64,...`) or bare base64. null or "" clears it.',
      examples: [
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      ],
    }),
  ),
};

/** Body of POST /v1/requester/ and PUT /v1/requester/{id}/ (first_name, last_name, email required). */
export const RequesterInput = Type.Object(
  {
    first_name: Type.String({ minLength: 1, maxLength: 150, examples: ["Sam"] }),
    last_name: Type.String({ minLength: 1, maxLength: 150, examples: ["Lee"] }),
    email: Type.String({ format: "email", maxLength: 254, examples: ["sam.lee@example.com"] }),
    ...optional,
  },
  {
    title: "RequesterInput",
    examples: [
      {
        first_name: "Sam",
        last_name: "Lee",
        email: "sam.lee@example.com",
        role: "Tax advisor",
        twitter: "@samlee",
      },
    ],
  },
);

/** Body of PATCH /v1/requester/{id}/: every field optional. */
export const RequesterPatch = Type.Object(
  {
    first_name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
    last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
    email: Type.Optional(Type.String({ format: "email", maxLength: 254 })),
    ...optional,
  },
  { title: "RequesterPatch", examples: [{ first_name: "Samantha" }] },
);
