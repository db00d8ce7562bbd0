import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { refuseNul } from "../../http/nul-bytes.js";
import { authErrors, errorResponses, jwtSecurity, NoContent } from "../../http/openapi.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import {
  type BrandingInput,
  type BrandingService,
  FONT_NAME_PATTERN,
  MAX_CSS_BYTES,
  MAX_FONT_BYTES,
  MAX_FONTS,
  MAX_LOGO_BYTES,
} from "./branding.service.js";

const FontParams = Type.Object({
  name: Type.String({
    maxLength: 80,
    description: "File name of the font: letters, digits, - or _, then `.woff2` or `.woff`.",
    examples: ["brand-regular.woff2"],
  }),
});

const FontBody = Type.Object(
  {
    file: Type.String({
      description: `The font as base64 or a data URL (WOFF2 or WOFF by content, at most ${MAX_FONT_BYTES / 1024} KB). In multipart bodies, a file part named \`file\`.`,
    }),
  },
  { title: "BrandingFontInput" },
);

const FontResponse = Type.Object(
  {
    name: Type.String(),
    content_type: Type.String({ description: "`font/woff2` or `font/woff`." }),
    bytes: Type.Integer(),
    sha256: Type.String(),
    path: Type.String({
      description:
        "Where the account's stylesheet finds the font, relative to it: `@font-face { src: url(fonts/<name>) }`.",
    }),
    updated: Type.String(),
  },
  {
    title: "BrandingFont",
    examples: [
      {
        name: "brand-regular.woff2",
        content_type: "font/woff2",
        bytes: 24576,
        sha256: "9f86d081884c7d65...",
        path: "fonts/brand-regular.woff2",
        updated: "2026-01-15T10:00:00.000000Z",
      },
    ],
  },
);

const FontList = Type.Object(
  { count: Type.Integer(), results: Type.Array(FontResponse) },
  { title: "BrandingFontList" },
);

/** The font bytes of PUT /v1/branding/fonts/{name}: a multipart file part or JSON base64. */
async function readFontBody(request: FastifyRequest): Promise<Buffer | null> {
  let raw: unknown;
  if (request.isMultipart()) {
    try {
      for await (const part of request.parts({ limits: { fileSize: MAX_FONT_BYTES + 1, files: 1 } })) {
        if (part.type === "file") {
          const bytes = await part.toBuffer();
          if (part.fieldname === "file") raw = bytes;
        } else if (part.fieldname === "file") raw = part.value;
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      const code = (err as { code?: string }).code ?? "";
      if (/LIMIT|TOO_LARGE/.test(code))
        throw new AppError("PAYLOAD_TOO_LARGE", `The font is larger than ${MAX_FONT_BYTES / 1024} KB.`);
      throw new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
    }
  } else if (request.body && typeof request.body === "object")
    raw = (request.body as Record<string, unknown>).file;
  if (raw === undefined || raw === null || raw === "")
    throw ValidationError.field("file", "Upload a WOFF2 or WOFF font file.");
  if (Buffer.isBuffer(raw)) return raw;
  if (typeof raw !== "string") throw ValidationError.field("file", "Send the font as base64 or a file part.");
  const data = raw.replace(/^data:[^,]*;base64,/i, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data))
    throw ValidationError.field("file", "The font is not valid base64.");
  return Buffer.from(data, data.includes("-") || data.includes("_") ? "base64url" : "base64");
}

const BrandingBody = Type.Object(
  {
    css: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_CSS_BYTES }), Type.Null()], {
        description: "CSS text (at most 100 KB), served as a stylesheet after Ferry's default one.",
        examples: [":root { --fy-accent: #7a1fa2; }"],
      }),
    ),
    logo: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          "Logo image as base64 or a data URL (PNG, JPEG, GIF or WebP, at most 512 KB and 4096 × 4096 pixels). In multipart bodies, a file part. It is decoded and stored re-encoded without its metadata; SVG, data after the image or an image that does not decode is refused (400).",
      }),
    ),
    recipient_host: Type.Optional(
      Type.Union([Type.String({ maxLength: 253 }), Type.Null()], {
        description: "Custom host name whose /r/<identifier>/ pages serve only this account's requests.",
        examples: ["files.example.com"],
      }),
    ),
  },
  { title: "BrandingInput" },
);

const BrandingResponse = Type.Object(
  {
    css: Type.String(),
    css_bytes: Type.Integer(),
    logo: Type.Union([
      Type.Object({ content_type: Type.String(), bytes: Type.Integer(), sha256: Type.String() }),
      Type.Null(),
    ]),
    recipient_host: Type.Union([Type.String(), Type.Null()]),
    updated: Type.Union([Type.String(), Type.Null()]),
  },
  {
    title: "Branding",
    examples: [
      {
        css: ":root { --fy-accent: #7a1fa2; }",
        css_bytes: 32,
        logo: { content_type: "image/png", bytes: 2048, sha256: "9f86d081884c7d65..." },
        recipient_host: "files.example.com",
        updated: "2026-01-15T10:00:00.000000Z",
      },
    ],
  },
);

function decodeLogo(raw: unknown): Buffer | null {
  if (raw === null || raw === undefined || raw === "") return null;
  if (Buffer.isBuffer(raw)) return raw;
  if (typeof raw !== "string")
    throw ValidationError.field("logo", "Send the logo as base64, a data URL or a file part.");
  const data = raw.replace(/^data:[^,]*;base64,/i, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data))
    throw ValidationError.field("logo", "The logo is not valid base64.");
  return Buffer.from(data, data.includes("-") || data.includes("_") ? "base64url" : "base64");
}

async function readBrandingBody(request: FastifyRequest): Promise<BrandingInput> {
  const fields: Record<string, unknown> = {};
  if (request.isMultipart()) {
    try {
      for await (const part of request.parts({
        limits: { fileSize: MAX_LOGO_BYTES + 1, fieldSize: MAX_CSS_BYTES + 1 },
      })) {
        if (part.type === "file") {
          const bytes = await part.toBuffer();
          fields[part.fieldname] = part.fieldname === "css" ? bytes.toString("utf8") : bytes;
        } else fields[part.fieldname] = part.value;
        refuseNul(part.fieldname, "non_field_errors");
        refuseNul(fields[part.fieldname], part.fieldname);
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      const code = (err as { code?: string }).code ?? "";
      if (/LIMIT|TOO_LARGE/.test(code))
        throw new AppError("PAYLOAD_TOO_LARGE", "The stylesheet or logo is too large.");
      throw new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
    }
  } else if (request.body && typeof request.body === "object") Object.assign(fields, request.body);
  const css = fields.css;
  if (css !== undefined && css !== null && typeof css !== "string")
    throw ValidationError.field("css", "Must be a string.");
  return {
    css: css as string | null | undefined,
    logo: decodeLogo(fields.logo),
    recipient_host: (fields.recipient_host as string | null | undefined) || null,
  };
}

/** GET/PUT/DELETE /v1/branding/: the account's white-label stylesheet, logo and recipient host. */
export function brandingRoutes(branding: BrandingService): RouteModule {
  return async (app) => {
    app.get(
      "/v1/branding/",
      {
        config: { scope: "branding" },
        schema: {
          operationId: "getBranding",
          tags: ["branding"],
          summary: "The account's white-label settings for recipient pages (Ferry extension)",
          security: jwtSecurity,
          response: { 200: BrandingResponse, ...authErrors, ...errorResponses(404) },
        },
      },
      async (request) => branding.get(requireAuth(request).accountId),
    );

    app.put(
      "/v1/branding/",
      {
        config: { scope: "branding" },
        bodyLimit: 2 * 1024 * 1024,
        // JSON, form and multipart bodies: the service checks the fields.
        validatorCompiler: () => () => true,
        schema: {
          operationId: "replaceBranding",
          tags: ["branding"],
          summary:
            "Replace the white-label stylesheet, logo and custom recipient host name (Ferry extension)",
          description:
            "JSON (`logo` as base64 or a data URL) or multipart/form-data (`css` field or file, `logo` file). Fields left out are cleared.",
          consumes: ["application/json", "multipart/form-data"],
          security: jwtSecurity,
          body: BrandingBody,
          response: { 200: BrandingResponse, ...authErrors, ...errorResponses(400, 409, 413, 415) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const input = await readBrandingBody(request);
        return branding.put(auth.accountId, input, { applicationId: auth.applicationId });
      },
    );

    app.get(
      "/v1/branding/fonts/",
      {
        config: { scope: "branding" },
        schema: {
          operationId: "listBrandingFonts",
          tags: ["branding"],
          summary: "The account's branding fonts (Ferry extension)",
          security: jwtSecurity,
          response: { 200: FontList, ...authErrors },
        },
      },
      async (request) => {
        const results = await branding.listFonts(requireAuth(request).accountId);
        return { count: results.length, results };
      },
    );

    app.put(
      "/v1/branding/fonts/:name",
      {
        config: { scope: "branding" },
        bodyLimit: 1024 * 1024,
        // JSON and multipart bodies: the handler checks the name and the service the file.
        validatorCompiler: () => () => true,
        schema: {
          operationId: "uploadBrandingFont",
          tags: ["branding"],
          summary: "Store or replace a font file of the account's branding (Ferry extension)",
          description: `JSON (\`file\` as base64 or a data URL) or multipart/form-data (\`file\` part). WOFF2 or WOFF by content, at most ${MAX_FONT_BYTES / 1024} KB, at most ${MAX_FONTS} fonts per account; the name's extension matches the format. Served from Ferry's origin at \`/r/<identifier>/fonts/<name>\` and \`/s/<token>/fonts/<name>\`, so the account's stylesheet uses \`url(fonts/<name>)\`. 201 when the name is new, 200 when it replaces a font.`,
          consumes: ["application/json", "multipart/form-data"],
          security: jwtSecurity,
          params: FontParams,
          body: FontBody,
          response: {
            200: FontResponse,
            201: FontResponse,
            ...authErrors,
            ...errorResponses(400, 409, 413, 415),
          },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const { name } = request.params as { name: string };
        if (!FONT_NAME_PATTERN.test(name))
          throw ValidationError.field(
            "name",
            "Name the font like brand-regular.woff2: letters, digits, - or _, then .woff2 or .woff.",
          );
        const bytes = await readFontBody(request);
        const { font, created } = await branding.putFont(auth.accountId, name, bytes, {
          applicationId: auth.applicationId,
        });
        return reply.code(created ? 201 : 200).send(font);
      },
    );

    app.delete(
      "/v1/branding/fonts/:name",
      {
        config: { scope: "branding" },
        schema: {
          operationId: "deleteBrandingFont",
          tags: ["branding"],
          summary: "Delete a font file of the account's branding (Ferry extension)",
          security: jwtSecurity,
          params: FontParams,
          response: { 204: NoContent, ...authErrors, ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        await branding.removeFont(auth.accountId, request.params.name, { applicationId: auth.applicationId });
        return reply.code(204).send(null);
      },
    );

    app.delete(
      "/v1/branding/",
      {
        config: { scope: "branding" },
        schema: {
          operationId: "deleteBranding",
          tags: ["branding"],
          summary: "Remove the account's branding and fonts (pages return to Ferry's default look)",
          security: jwtSecurity,
          response: { 204: NoContent, ...authErrors, ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        await branding.remove(auth.accountId, { applicationId: auth.applicationId });
        return reply.code(204).send(null);
      },
    );
  };
}
