import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import { authErrors, errorResponses, jwtSecurity } from "../../http/openapi.js";
import { type RateLimiter, tighterLimit } from "../../http/rate-limit.js";
import type { RouteModule } from "../../shared/feature.js";
import { isLocale, type Locale, SUPPORTED_LOCALES } from "../../shared/i18n/i18n.js";
import type { AccountRow, ApplicationRow } from "./auth.repository.js";
import type { AuthService } from "./auth.service.js";
import { loadJose } from "./jose.js";

const TokenBody = Type.Object({ token: Type.String({ description: "A JWT." }) }, { title: "TokenInput" });
const TokenResponse = Type.Object(
  {
    token: Type.String({ examples: ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6Ims..."] }),
    expires_in: Type.Optional(
      Type.Integer({
        description: "Seconds the new token is valid for (TOKEN_TTL_SECONDS); get_token and token_refresh.",
        examples: [28800],
      }),
    ),
    exp: Type.Optional(
      Type.Integer({
        description: "When the new token expires, in seconds since the Unix epoch (its exp claim).",
        examples: [1768510800],
      }),
    ),
  },
  { title: "Token" },
);

/** The answer of get_token and token_refresh: the token and when it expires (from its own claims). */
async function withExpiry(token: string): Promise<{ token: string; expires_in?: number; exp?: number }> {
  const { exp, iat } = (await loadJose()).decodeJwt(token);
  return typeof exp === "number" && typeof iat === "number"
    ? { token, expires_in: exp - iat, exp }
    : { token };
}
const AccountSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    name: Type.String(),
    environment: Type.Union([Type.Literal("sandbox"), Type.Literal("live")]),
    default_language: Type.Union(
      [Type.Literal("en"), Type.Literal("es"), Type.Literal("fr"), Type.Literal("de"), Type.Literal("pt")],
      {
        description:
          "Language of recipient pages when the reader's browser names none Ferry supports, and of the emails and SMS Ferry writes (ADR 0033).",
        examples: ["de"],
      },
    ),
    application: Type.Object({ id: Type.Integer(), name: Type.String(), scopes: Type.String() }),
  },
  { title: "Account" },
);
const AccountPatch = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        description:
          "The name recipients see (1-200 characters, trimmed). id, email, environment and application are read-only: sending one is 400.",
        examples: ["Owner Ltd"],
      }),
    ),
    default_language: Type.Optional(
      Type.String({
        description: `The recipients' default language: one of ${SUPPORTED_LOCALES.join(", ")}.`,
        examples: ["de"],
      }),
    ),
  },
  { title: "AccountPatch" },
);

/** The Account answer of GET and PATCH /v1/account/. */
function presentAccount(
  environment: "sandbox" | "live",
  { account, application }: { account: AccountRow; application: ApplicationRow },
) {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    environment,
    default_language: (isLocale(account.default_language) ? account.default_language : "en") as Locale,
    application: { id: application.id, name: application.name, scopes: application.scopes },
  };
}

const consumes = ["application/json", "application/x-www-form-urlencoded", "multipart/form-data"];
// Bodies arrive as JSON, form-urlencoded or multipart; the service checks fields, so skip Ajv here.
const acceptAnyBody = () => () => true;

/** POST /v1/auth/get_token/, token_refresh/, token_verify/ (spec: Token operations). */
export function authRoutes(deps: {
  auth: AuthService;
  rateLimiter: RateLimiter;
  environment: "sandbox" | "live";
}): RouteModule {
  const { auth, rateLimiter } = deps;
  return async (app) => {
    const caller = (request: FastifyRequest) => ({
      ip: request.ip,
      method: request.method,
      path: request.url.split("?")[0] ?? "",
      contentType: request.headers["content-type"]?.split(";")[0],
    });
    /** The token endpoints' own per-IP limit; its headers win when it is the tighter one. */
    const limit = async (request: FastifyRequest) => {
      request.rateLimit = tighterLimit(request.rateLimit, await rateLimiter.consume("auth-ip", request.ip));
    };

    app.post(
      "/v1/auth/get_token/",
      {
        config: { public: true },
        validatorCompiler: acceptAnyBody,
        schema: {
          operationId: "getToken",
          tags: ["auth"],
          summary: "Exchange an API key and the owner's email for a JWT (valid 8 hours: see expires_in)",
          consumes,
          body: Type.Object({
            api_key: Type.String({ description: "The application's API key." }),
            email: Type.String({ description: "The application owner's email." }),
          }),
          response: { 200: TokenResponse, ...errorResponses(400, 401, 413, 415, 429) },
        },
      },
      async (request) => {
        await limit(request);
        const body = await readFormLikeBody(request);
        return withExpiry(await auth.issueToken(body.api_key, body.email, caller(request)));
      },
    );

    app.post(
      "/v1/auth/token_refresh/",
      {
        config: { public: true },
        validatorCompiler: acceptAnyBody,
        schema: {
          operationId: "refreshToken",
          tags: ["auth"],
          summary: "Exchange a valid token created within the last 7 days for a new one with a new expiry",
          consumes,
          body: TokenBody,
          response: { 200: TokenResponse, ...errorResponses(400, 401, 415, 429) },
        },
      },
      async (request) => {
        await limit(request);
        const body = await readFormLikeBody(request);
        return withExpiry(await auth.refreshToken(body.token));
      },
    );

    app.post(
      "/v1/auth/token_verify/",
      {
        config: { public: true },
        validatorCompiler: acceptAnyBody,
        schema: {
          operationId: "verifyToken",
          tags: ["auth"],
          summary: "Check a token: the same token back when it is valid, 401 otherwise",
          consumes,
          body: TokenBody,
          response: { 200: TokenResponse, ...errorResponses(400, 401, 415, 429) },
        },
      },
      async (request) => {
        await limit(request);
        const body = await readFormLikeBody(request);
        await auth.verifyToken(body.token);
        return { token: body.token as string };
      },
    );

    app.get(
      "/v1/account/",
      {
        config: { anyScope: true },
        schema: {
          operationId: "getAccount",
          tags: ["auth"],
          summary: "The account and application the token acts for (Ferry extension)",
          security: jwtSecurity,
          response: { 200: AccountSchema, ...authErrors },
        },
      },
      async (request) => presentAccount(deps.environment, await auth.describeCaller(requireAuth(request))),
    );

    app.patch(
      "/v1/account/",
      {
        config: { scope: "branding" as const },
        schema: {
          operationId: "updateAccount",
          tags: ["auth"],
          summary:
            "Change the account's name or default language for recipients (Ferry extension; scope branding)",
          security: jwtSecurity,
          body: AccountPatch,
          response: { 200: AccountSchema, ...errorResponses(400, 415), ...authErrors },
        },
      },
      async (request) =>
        presentAccount(
          deps.environment,
          await auth.updateAccount(requireAuth(request), (request.body ?? {}) as Record<string, unknown>),
        ),
    );
  };
}
