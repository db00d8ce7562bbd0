import type { RouteModule } from "../shared/feature.js";
import { buildWebAssets } from "./assets.js";

/**
 * GET /static/recipient.css and /static/recipient.js: the first-party assets of the recipient pages,
 * built at start (src/web/assets.ts), served with ETag revalidation and gzip when accepted.
 */
export const webStaticRoutes: RouteModule = async (app) => {
  const assets = await buildWebAssets();
  app.get(
    "/static/:file",
    {
      config: { public: true },
      schema: { hide: true, params: { type: "object", properties: { file: { type: "string" } } } },
    },
    async (request, reply) => {
      const asset = assets.get(request.url.split("?")[0]!.replace(/\/$/, ""));
      reply.header("x-content-type-options", "nosniff");
      reply.header("cross-origin-resource-policy", "same-origin");
      if (!asset) {
        return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      }
      reply.header("etag", asset.etag);
      reply.header("cache-control", "public, max-age=300, must-revalidate");
      reply.header("vary", "accept-encoding");
      if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
      reply.type(asset.contentType);
      if (/\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))) {
        reply.header("content-encoding", "gzip");
        return reply.send(asset.gzip);
      }
      return reply.send(asset.body);
    },
  );
};
