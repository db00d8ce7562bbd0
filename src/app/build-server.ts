import { randomUUID } from "node:crypto";
import cors from "@fastify/cors";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import { pingDatabase } from "../db/database.js";
import { AuditCode } from "../features/audit/index.js";
import { isHttps } from "../features/recipient/index.js";
import { installAuthGuard } from "../http/auth.js";
import { registerBodyParsers } from "../http/body-parsers.js";
import { canonicalUrl } from "../http/canonical-url.js";
import { installErrorHandling } from "../http/errors.js";
import { installIntegerRangeGuard } from "../http/integer-range.js";
import { lazyCompilers } from "../http/lazy-compilers.js";
import { lazyOpenApi } from "../http/lazy-openapi.js";
import { installNulGuard } from "../http/nul-bytes.js";
import { finishOpenApiDocument, transformRouteSchema } from "../http/openapi.js";
import { installPageGuards } from "../http/page-guards.js";
import { type RateLimitState, rateLimitHeaders, tighterLimit } from "../http/rate-limit.js";
import { RouteRegistry } from "../http/route-registry.js";
import { trustProxyOption } from "../http/trust-proxy.js";
import type { RouteModule } from "../shared/feature.js";
import { renderApiReference } from "../web/api-reference.js";
import { installLanguageSwitch } from "../web/i18n.js";
import { applyRecipientHeaders } from "../web/security-headers.js";
import type { Ferry } from "./ferry.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The tightest rate-limit state seen for this request (for RateLimit headers). */
    rateLimit: RateLimitState | undefined;
  }
}

/**
 * Masks recipient identifiers, session tokens and dashboard setup links in paths so they never reach
 * logs whole: /r/abcd…/, /dashboard/setup/abcd…, provider webhook secrets and step return links
 */
export function maskPath(url: string): string {
  return url
    .replace(/\/([rs])\/([^/?#]{4})[^/?#]*/g, "/$1/$2…")
    .replace(/\/dashboard\/setup\/(?!two-factor\b)([^/?#]{4})[^/?#]*/g, "/dashboard/setup/$1…")
    .replace(/\/(webhook|steps\/return)\/([^/?#]{4})[^/?#]*/g, "/$1/$2…");
}

/**
 * Builds the Fastify app: the HTTP conventions (README), auth, rate limits, audit of API calls, OpenAPI
 * at /v1/openapi.json and /docs, health checks, and every feature's routes. Does not listen.
 */
export async function buildServer(
  ferry: Ferry,
  options: { extraRoutes?: RouteModule[] } = {},
): Promise<FastifyInstance> {
  const { config } = ferry;
  const compilers = lazyCompilers();
  const app = Fastify({
    loggerInstance: ferry.logger.child({ component: "http" }) as FastifyBaseLogger,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    bodyLimit: config.MAX_JSON_BODY_BYTES,
    connectionTimeout: config.HTTP_IDLE_TIMEOUT_MS,
    keepAliveTimeout: 10_000,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // One spelling of every path before routing and before any hook reads the URL.
    rewriteUrl: (req) => canonicalUrl(req.url ?? "/"),
    ajv: {
      customOptions: { coerceTypes: "array", removeAdditional: true, useDefaults: true, allErrors: true },
    },
    // Each route's validators and serializers are compiled on its first request, not at start.
    schemaController: { compilersFactory: compilers },
    // One masked line per request is logged in onResponse instead of Fastify's unmasked pair.
    logController: new LogController({ disableRequestLogging: true }),
  });

  app.decorate("compileRouteSchemas", compilers.compileAll);

  const routes = new RouteRegistry();
  app.addHook("onRoute", (route) => routes.add(route.url, route.method as string | string[], route.schema));
  app.decorate("routeTable", routes);
  installErrorHandling(app, routes);
  await registerBodyParsers(app, config.MAX_JSON_BODY_BYTES);
  installNulGuard(app);
  // Duplicated Ferry cookies, cross-origin form posts and the dashboard's own origin (ADR 0068, 0069).
  installPageGuards(app, { publicBaseUrl: config.publicBaseUrl, dashboardBaseUrl: config.dashboardBaseUrl });
  installIntegerRangeGuard(app);

  // `?lang=xx` on a page: remember the reader's language in a cookie, then show the page (ADR 0033).
  installLanguageSwitch(
    app,
    (request) => request.protocol === "https" || config.publicBaseUrl.startsWith("https:"),
  );
  app.decorateRequest("rateLimit", undefined);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    // The API's per-IP limit, by the route matched (or, for unknown paths, the canonical URL).
    if ((request.routeOptions.url ?? request.url).startsWith("/v1/")) {
      request.rateLimit = await ferry.rateLimiter.consume("ip", request.ip);
    }
  });
  app.addHook("onResponse", async (request, reply) => {
    request.log.info(
      {
        reqId: request.id,
        method: request.method,
        url: maskPath(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      "request",
    );
  });

  await app.register(cors, {
    origin: config.corsOrigins === "*" ? true : config.corsOrigins,
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    allowedHeaders: ["Authorization", "Content-Type", "Accept", "Range", "X-Requested-With"],
    exposedHeaders: [
      "X-Request-Id",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Retry-After",
      "Content-Disposition",
      "ETag",
      "Content-Range",
    ],
    maxAge: 600,
  });

  installAuthGuard(app, ferry.auth, async (request, ctx) => {
    request.rateLimit = tighterLimit(
      request.rateLimit,
      await ferry.rateLimiter.consume("app", String(ctx.applicationId)),
    );
  });

  app.addHook("onSend", async (request, reply, payload) => {
    if (request.rateLimit && !reply.hasHeader("ratelimit-limit"))
      reply.headers(rateLimitHeaders(request.rateLimit));
    const auth = request.auth;
    if (auth) {
      // AAA-0010: every authenticated API call, written before the response leaves.
      try {
        await ferry.audit.writer.write(ferry.database.db, {
          accountId: auth.accountId,
          code: AuditCode.API_CALL,
          apiKeyId: auth.applicationId,
          from: request.ip,
          method: request.method,
          path: request.url.split("?")[0] ?? "",
          contentType: request.headers["content-type"]?.split(";")[0] ?? "",
          value: String(reply.statusCode),
        });
      } catch (err) {
        request.log.error({ err }, "audit write failed for API call");
        // A read must not leave without its entry: it is refused, and the caller may read again.
        // A change has committed with its own entry (ABA-*), so its answer stays true and is sent.
        if (READ_METHODS.has(request.method)) return refuseUnaudited(reply, payload);
      }
    }
    return payload;
  });

  // @fastify/swagger's document, with the plugin loaded on the first request for it (src/http/lazy-openapi.ts).
  lazyOpenApi(app, {
    transform: ({ schema, url, route }) =>
      transformRouteSchema({ schema: schema as Record<string, unknown>, url, route }),
    transformObject: (documentObject) =>
      finishOpenApiDocument((documentObject as { openapiObject: Record<string, unknown> }).openapiObject),
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Ferry: Secure File Exchange API",
        version: "1.0.0",
        license: { name: "Apache-2.0", identifier: "Apache-2.0" },
        description:
          "Push files to people and pull files from them without accounts. Authenticate with `POST /v1/auth/get_token/`, then send `Authorization: JWT <token>`.",
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: {
          JWT: {
            type: "apiKey",
            in: "header",
            name: "Authorization",
            description: "`JWT <token>` (Bearer also accepted)",
          },
        },
      },
    },
  });
  // The API reference: rendered once from the OpenAPI document on first request, plain HTML under
  // the pages' strict CSP (src/web/api-reference.tsx).
  let reference: string | undefined;
  const docsPage = async (request: FastifyRequest, reply: FastifyReply) => {
    reference ??= renderApiReference(app.openApiDocument());
    applyRecipientHeaders(reply, isHttps(request, config.publicBaseUrl));
    reply.header("cache-control", "public, max-age=300");
    return reply.type("text/html; charset=utf-8").send(reference);
  };
  app.get("/docs", { config: { public: true }, schema: { hide: true } }, docsPage);

  app.get("/v1/openapi.json", { config: { public: true }, schema: { hide: true } }, async () =>
    app.openApiDocument(),
  );
  app.get("/healthz", { config: { public: true }, schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    const failed = await unreadyDependencies(ferry);
    if (failed.length === 0) return { status: "ready" };
    // The reasons (endpoints, bucket names) go to the log, not to whoever asks.
    ferry.logger.warn({ component: "readiness", failed }, "not ready");
    return reply
      .code(503)
      .header("retry-after", "5")
      .send({
        code: "SERVICE_UNAVAILABLE",
        detail: `Not ready: ${failed.map((f) => f.name).join(", ")} not usable.`,
      });
  });

  for (const routes of [...ferry.routes, ...(options.extraRoutes ?? [])]) {
    await app.register((scope) => routes(scope.withTypeProvider<TypeBoxTypeProvider>()));
  }
  return app;
}

const READ_METHODS = new Set(["GET", "HEAD"]);

/** Headers that describe the refused answer's body, removed with it. */
const BODY_HEADERS = [
  "content-length",
  "content-range",
  "content-disposition",
  "etag",
  "last-modified",
  "accept-ranges",
];

/**
 * Replaces an answer whose AAA-0010 entry could not be written with a 503 (the spec's error shape),
 * releasing a streamed body (a download) unread.
 */
function refuseUnaudited(reply: FastifyReply, payload: unknown): string {
  if (payload && typeof (payload as { destroy?: unknown }).destroy === "function") {
    (payload as { destroy(): void }).destroy();
  }
  for (const name of BODY_HEADERS) reply.removeHeader(name);
  reply.code(503).header("content-type", "application/json; charset=utf-8").header("retry-after", "1");
  return JSON.stringify({
    code: "SERVICE_UNAVAILABLE",
    detail: "The call could not be recorded in the audit log, so it was not answered. Try again.",
  });
}

/** How long /readyz waits for each dependency. */
const READY_TIME_LIMIT_MS = 5_000;

/**
 * Each configured dependency that does not answer as it should (the database, Redis when
 * configured, the blob store's bucket or folder) with why; checked at once, each within
 * READY_TIME_LIMIT_MS.
 */
async function unreadyDependencies(ferry: Ferry): Promise<{ name: string; why: string }[]> {
  const checks: [string, () => Promise<unknown>][] = [
    ["database", () => pingDatabase(ferry.database)],
    ["blob store", () => ferry.blobStore.check()],
  ];
  const redis = ferry.redis;
  if (redis) {
    checks.push([
      "redis",
      async () => {
        if (redis.status !== "ready") throw new Error(`not connected (${redis.status})`);
        await redis.ping();
      },
    ]);
  }
  const results = await Promise.all(
    checks.map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error("no answer in time")), READY_TIME_LIMIT_MS);
          }),
        ]);
        return undefined;
      } catch (err) {
        const why = (err instanceof Error ? err.message : String(err)).split("\n")[0]!.slice(0, 200);
        return { name, why };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return results.filter((r) => r !== undefined);
}
