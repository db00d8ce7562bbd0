/** TypeBox schemas the esign step and its templates share. */
import { Type } from "typebox";

/** A field of a role: a box in PDF points on a 1-based page, origin at the page's bottom-left. */
export const EsignField = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    role: Type.String({ minLength: 1, maxLength: 64 }),
    type: Type.Union([
      Type.Literal("signature"),
      Type.Literal("initials"),
      Type.Literal("date"),
      Type.Literal("text"),
      Type.Literal("checkbox"),
    ]),
    page: Type.Integer({ minimum: 1, description: "1-based page number." }),
    x: Type.Number({ minimum: 0, description: "Left edge, PDF points from the page's left." }),
    y: Type.Number({ minimum: 0, description: "Bottom edge, PDF points from the page's bottom." }),
    width: Type.Number({ exclusiveMinimum: 0 }),
    height: Type.Number({ exclusiveMinimum: 0 }),
    required: Type.Optional(Type.Boolean()),
  },
  { title: "EsignField", additionalProperties: false },
);
