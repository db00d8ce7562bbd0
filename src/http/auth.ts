import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AuthContext } from "../shared/caller.js";
import { AppError } from "../shared/errors.js";
import { type ScopeArea, scopeAllows } from "./scopes.js";

/** Resolves a token to its caller; throws AppError (401) when it is not valid. */
export interface Authenticator {
  authenticate(token: string): Promise<AuthContext>;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The caller of an authenticated API route (set by the auth guard). */
    auth: AuthContext | undefined;
  }
  interface FastifyContextConfig {
    /** true: no token needed (token operations, health, docs, recipient pages). */
    public?: boolean;
    /** The scope area the route belongs to; keys need it (or "*"). */
    scope?: ScopeArea;
    /** true: every valid key may call the route, whatever its scopes (e.g. who am I). */
    anyScope?: boolean;
    /**
     * true on a GET route that changes state (an alias of a POST for clients that send GET): keys
     * need the write scope of its area, as for the POST; `<area>:read` is refused.
     */
    writes?: boolean;
  }
}

/** Reads `Authorization: JWT <token>` (or `Bearer <token>`); undefined when absent. */
export function readBearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^(JWT|Bearer)\s+(\S+)\s*$/i.exec(header);
  if (!match)
    throw new AppError(
      "AUTHENTICATION_FAILURE",
      "Invalid Authorization header. Use: Authorization: JWT <token>.",
    );
  return match[2];
}

/** The caller of an authenticated route; throws 401 if the route forgot to require auth. */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth)
    throw new AppError("AUTHENTICATION_FAILURE", "Authentication credentials were not provided.");
  return request.auth;
}

/** A 401 with the WWW-Authenticate challenge naming the scheme to use. */
function unauthenticated(detail: string): AppError {
  return new AppError("AUTHENTICATION_FAILURE", detail, {
    "WWW-Authenticate": 'JWT realm="ferry", charset="UTF-8"',
  });
}

/**
 * Guards every /v1 route that is not `config.public`: a valid token of an active application, and
 * the route's scope. Runs before body parsing so unauthenticated uploads are refused early.
 */
export function installAuthGuard(
  app: FastifyInstance,
  auth: Authenticator,
  afterAuth: (request: FastifyRequest, ctx: AuthContext) => Promise<void>,
): void {
  app.decorateRequest("auth", undefined);
  app.addHook("onRequest", async (request) => {
    const config = request.routeOptions.config;
    if (config.public || !request.routeOptions.url?.startsWith("/v1/")) return;
    const token = readBearer(request);
    if (!token) throw unauthenticated("Authentication credentials were not provided.");
    if (token.startsWith("fry_")) {
      throw unauthenticated(
        'This is an API key, not a token. Exchange it at POST /v1/auth/get_token/ ({"api_key": "...", "email": "..."}) and send the token it answers as Authorization: JWT <token>.',
      );
    }
    let ctx: AuthContext;
    try {
      ctx = await auth.authenticate(token);
    } catch (error) {
      if (error instanceof AppError && error.code === "AUTHENTICATION_FAILURE")
        throw unauthenticated(error.detail);
      throw error;
    }
    request.auth = ctx;
    await afterAuth(request, ctx);
    const area = config.scope;
    const allowed = config.anyScope
      ? true
      : area
        ? scopeAllows(ctx.scopes, area, request.method, config.writes === true)
        : ctx.scopes === "*";
    if (!allowed) {
      throw new AppError(
        "NOT_AUTHORIZED",
        "You do not have permission to perform this action: the API key lacks the scope for it.",
      );
    }
  });
}
