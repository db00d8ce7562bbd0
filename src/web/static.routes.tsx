import type { FastifyReply, FastifyRequest } from "fastify";
import type { RouteModule } from "../shared/feature.js";
import { type Locale, type Translator, translator } from "../shared/i18n/i18n.js";
import { buildWebAssets, esignScript } from "./assets.js";
import { esignAssetUrls, vendorAsset } from "./esign-assets.js";
import { pageLocale } from "./i18n.js";
import { assetUrls, Layout, renderDocument } from "./layout.js";
import { applyRecipientHeaders } from "./security-headers.js";

/** What `/` shows: what Ferry is, where a recipient's link leads, where the API is described. */
function homePage(i18n: Translator): string {
  const { t } = i18n;
  return renderDocument(
    <Layout title={t("home.title")} sandbox={false} brandName="Ferry" footer={t("home.footer")} i18n={i18n}>
      <section class="fy-card" aria-labelledby="home-heading">
        <h1 id="home-heading">{t("home.heading")}</h1>
        <p>{t("home.body")}</p>
        <p>
          {i18n.rich("home.developers", {
            docs: <a href="/docs">/docs</a>,
            openapi: <a href="/v1/openapi.json">/v1/openapi.json</a>,
          })}
        </p>
      </section>
    </Layout>,
  );
}

/** The home page in each language, rendered the first time it is asked for. */
const HOME_PAGES = new Map<Locale, string>();

function homePageIn(locale: Locale): string {
  let page = HOME_PAGES.get(locale);
  if (page === undefined) {
    page = homePage(translator(locale));
    HOME_PAGES.set(locale, page);
  }
  return page;
}

/**
 * GET /static/recipient.css and /static/recipient.js: the first-party assets of the recipient pages,
 * built at start (src/web/assets.ts), served with ETag revalidation and gzip when accepted; and the
 * signing step's files: its script and stylesheet, the pdf.js worker and data files and the
 * signature font (src/web/esign-assets.ts), the third-party ones cached for long.
 */
export const webStaticRoutes: RouteModule = async (app) => {
  const assets = await buildWebAssets();
  app.get("/", { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    applyRecipientHeaders(reply, false);
    reply.header("vary", "accept-language, cookie");
    return reply.type("text/html; charset=utf-8").send(homePageIn(pageLocale(request)));
  });
  // Browsers ask for /favicon.ico on their own: the same icon, as SVG.
  app.get("/favicon.ico", { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    const icon = assets.get(assetUrls.icon)!;
    reply.header("cache-control", "public, max-age=86400");
    reply.header("x-content-type-options", "nosniff");
    return reply.type(icon.contentType).send(icon.body);
  });
  /** Sends a static file with its ETag (304 when it matches) and its gzip when accepted. */
  const sendAsset = (
    request: FastifyRequest,
    reply: FastifyReply,
    asset: { body: Buffer; gzip: Buffer | undefined; contentType: string; etag: string },
    cacheControl: string,
  ) => {
    reply.header("etag", asset.etag);
    reply.header("cache-control", cacheControl);
    reply.header("vary", "accept-encoding");
    if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
    reply.type(asset.contentType);
    if (asset.gzip && /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))) {
      reply.header("content-encoding", "gzip");
      return reply.send(asset.gzip);
    }
    return reply.send(asset.body);
  };
  const notFound = (reply: FastifyReply) =>
    reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
  app.get(
    "/static/:file",
    {
      config: { public: true },
      schema: { hide: true, params: { type: "object", properties: { file: { type: "string" } } } },
    },
    async (request, reply) => {
      const path = request.url.split("?")[0]!.replace(/\/$/, "");
      reply.header("x-content-type-options", "nosniff");
      reply.header("cross-origin-resource-policy", "same-origin");
      const asset = assets.get(path) ?? (path === esignAssetUrls.script ? await esignScript() : undefined);
      if (asset) return sendAsset(request, reply, asset, "public, max-age=300, must-revalidate");
      // The pdf.js worker and the signature font, from node_modules (src/web/esign-assets.ts).
      const vendor = await vendorAsset(path);
      if (vendor) return sendAsset(request, reply, vendor, vendor.cacheControl);
      return notFound(reply);
    },
  );
  // pdf.js's CMaps, standard fonts, ICC profiles and decoders, which it asks for by file name.
  app.get("/static/pdfjs/*", { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("cross-origin-resource-policy", "same-origin");
    const vendor = await vendorAsset(request.url.split("?")[0]!);
    if (vendor) return sendAsset(request, reply, vendor, vendor.cacheControl);
    return notFound(reply);
  });
};
