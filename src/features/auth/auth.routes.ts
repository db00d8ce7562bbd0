import type { FastifyRequest } from "fastify";
import { decodeJwt } from "jose";
import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import { authErrors, errorResponses, jwtSecurity } from "../../http/openapi.js";
import { type RateLimiter, tighterLimit } from "../../http/rate-limit.js";
import type { RouteModule } from "../../shared/feature.js";
import type { AuthService } from "./auth.service.js";

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
function withExpiry(token: string): { token: string; expires_in?: number; exp?: number } {
  const { exp, iat } = decodeJwt(token);
  return typeof exp === "number" && typeof iat === "number"
    ? { token, expires_in: exp - iat, exp }
    : { token };
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
          response: {
            200: Type.Object({
              id: Type.Integer(),
              email: Type.String(),
              name: Type.String(),
              environment: Type.Union([Type.Literal("sandbox"), Type.Literal("live")]),
              application: Type.Object({ id: Type.Integer(), name: Type.String(), scopes: Type.String() }),
            }),
            ...authErrors,
          },
        },
      },
      async (request) => {
        const { account, application } = await auth.describeCaller(requireAuth(request));
        return {
          id: account.id,
          email: account.email,
          name: account.name,
          environment: deps.environment,
          application: { id: application.id, name: application.name, scopes: application.scopes },
        };
      },
    );
  };
}
