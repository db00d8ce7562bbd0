import { Type } from "typebox";
import type { Router } from "../../shared/feature.js";
import { longCache } from "../../web/security-headers.js";
import type { RecipientService } from "./recipient.service.js";
import { IdentifierParams } from "./recipient-http.js";

/**
 * Per-link assets of the recipient pages: the account's white-label stylesheet, logo and fonts, and the
 * requester's picture. Served through the identifier so no account or requester id appears in a
 * page; not page calls (no audit entry).
 */
export async function registerRecipientAssets(app: Router, recipient: RecipientService): Promise<void> {
  app.get(
    "/r/:identifier/brand.css",
    { config: { public: true }, schema: { hide: true, params: IdentifierParams } },
    async (request, reply) => {
      const { identifier } = request.params;
      const ctx = await recipient.resolve(identifier, request.hostname);
      if (!ctx?.branding?.css)
        return reply.code(404).type("text/css; charset=utf-8").send("/* no branding */");
      return reply.type("text/css; charset=utf-8").send(ctx.branding.css);
    },
  );

  app.get(
    "/r/:identifier/logo",
    { config: { public: true }, schema: { hide: true, params: IdentifierParams } },
    async (request, reply) => {
      const { identifier } = request.params;
      const ctx = await recipient.resolve(identifier, request.hostname);
      const b = ctx?.branding;
      if (!b?.logo_base64 || !b.logo_content_type)
        return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      return reply.type(b.logo_content_type).send(Buffer.from(b.logo_base64, "base64"));
    },
  );

  app.get(
    "/r/:identifier/fonts/:name",
    {
      config: { public: true },
      schema: { hide: true, params: Type.Object({ identifier: Type.String(), name: Type.String() }) },
    },
    async (request, reply) => {
      const { identifier, name } = request.params;
      const ctx = await recipient.resolve(identifier, request.hostname);
      const font = ctx ? await recipient.font(ctx, name) : undefined;
      if (!font) return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      longCache(reply);
      return reply.type(font.content_type).send(Buffer.from(font.data_base64, "base64"));
    },
  );

  app.get(
    "/r/:identifier/avatar",
    { config: { public: true }, schema: { hide: true, params: IdentifierParams } },
    async (request, reply) => {
      const { identifier } = request.params;
      const ctx = await recipient.resolve(identifier, request.hostname);
      const avatar = ctx ? await recipient.avatar(ctx) : undefined;
      if (!avatar) return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      return reply.type(avatar.type).send(avatar.bytes);
    },
  );
}
