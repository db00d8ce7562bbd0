import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { VNode } from "preact";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { constantTimeEqual } from "../../crypto/hashing.js";
import { AppError, errorStatus, ValidationError } from "../../shared/errors.js";
import type { Router } from "../../shared/feature.js";
import { renderDocument } from "../../web/layout.js";
import { applyRecipientHeaders } from "../../web/security-headers.js";
import type { AuditActor } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import { isHttps, readCookies, setCookie } from "../recipient/index.js";
import type { LiveSession, SessionsService } from "./sessions.service.js";
import { DashboardLayout, type DashboardSection } from "./views/layout.js";

/**
 * Names and path of the dashboard's cookies. Over https (the dashboard's base URL is https) they
 * carry the `__Host-` prefix, which browsers accept only Secure, with Path=/ and without Domain,
 * so no subdomain and no plain-http page of the host can plant them; over http (development)
 * they are plain names scoped to /dashboard.
 */
export interface DashboardCookies {
  /** The session token (HttpOnly, SameSite=Lax). */
  session: string;
  /** The pre-session nonce of the sign-in and setup forms (HttpOnly, SameSite=Strict, short-lived). */
  preSession: string;
  /** A one-time message to the next page (a secret shown once), sealed to the session. */
  flash: string;
  path: string;
}

/** The dashboard's cookie names for a base URL (see DashboardCookies). */
export function dashboardCookies(baseUrl: string): DashboardCookies {
  return baseUrl.startsWith("https:")
    ? {
        session: "__Host-ferry_dash",
        preSession: "__Host-ferry_dash_pre",
        flash: "__Host-ferry_dash_flash",
        path: "/",
      }
    : { session: "ferry_dash", preSession: "ferry_dash_pre", flash: "ferry_dash_flash", path: "/dashboard" };
}

/** How long a pre-session nonce (an open sign-in or setup form) lives, in seconds. */
const PRE_SESSION_SECONDS = 30 * 60;

/** How long a one-time flash (a secret shown once after a form) waits for its page, in seconds. */
const FLASH_SECONDS = 5 * 60;

/**
 * What a form's CSRF token is bound to: `session` (the request's dashboard session, at any stage)
 * or `pre-session` (the sign-in and setup forms, before any session: the pre-session nonce).
 */
export type CsrfBinding = "session" | "pre-session";

/** The signed-in user of a dashboard page: who they are and the account whose objects they see. */
export interface SignedInUser {
  userId: number;
  accountId: number;
  email: string;
}

/** What a guarded page handler receives besides request and reply. */
export interface PageContext {
  user: SignedInUser;
  /** The CSRF token to put in every form of the page (CsrfField). */
  csrfToken: string;
  /** The account's name (header). */
  accountName: string;
  environment: "sandbox" | "live";
}

/** Route options of a dashboard page. */
export interface PageOptions {
  /** Unique camelCase operation id (dashboardListApplications, ...). */
  operationId: string;
  summary?: string;
}

/** Options of DashboardKit.render. */
export interface RenderOptions {
  title: string;
  section?: DashboardSection;
  status?: number;
  /** Load /static/dashboard.js (copy buttons, previews). */
  withScript?: boolean;
}

type PageHandler = (request: FastifyRequest, reply: FastifyReply, ctx: PageContext) => Promise<unknown>;

declare module "fastify" {
  interface FastifyRequest {
    /** The signed-in dashboard user (set by the dashboard session guard). */
    dashboardUser: SignedInUser | undefined;
  }
}

/** The signed-in user of a page and the request, as audit entries name who made a change. */
export function dashboardActor(request: FastifyRequest, ctx: PageContext): AuditActor {
  return {
    userId: ctx.user.userId,
    ip: request.ip,
    method: request.method,
    path: request.url.split("?")[0] ?? "",
  };
}

/** The first value of a form field as a string ("" when absent). */
export function formField(request: FastifyRequest, name: string): string {
  const body = request.body;
  if (!body || typeof body !== "object") return "";
  const v = (body as Record<string, unknown>)[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first : "";
}

/** Every value of a repeated form field (checkboxes). */
export function formFields(request: FastifyRequest, name: string): string[] {
  const body = request.body;
  if (!body || typeof body !== "object") return [];
  const v = (body as Record<string, unknown>)[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter(
    (x): x is string => typeof x === "string",
  );
}

/**
 * The toolkit every dashboard page uses: session guard, CSRF tokens, rendering inside the layout.
 * Register pages with `kit.get` / `kit.post`: both redirect to sign-in without a signed-in
 * session; `kit.post` also refuses a missing or wrong CSRF token (403) before the handler runs.
 */
export class DashboardKit {
  /** Every route registered through get/post: all of them answer only to a signed-in session. */
  readonly guardedRoutes: { method: "GET" | "POST"; path: string }[] = [];

  constructor(
    private readonly deps: {
      sessions: SessionsService;
      keyRing: KeyRing;
      accounts: AccountsService;
      database: { db: import("../../db/database.js").Database["db"] };
      environment: "sandbox" | "live";
      publicBaseUrl: string;
      dashboardBaseUrl?: string | undefined;
    },
  ) {
    this.cookies = dashboardCookies(this.baseUrl);
  }

  /** The dashboard's cookie names (`__Host-` over https). */
  readonly cookies: DashboardCookies;

  get environment(): "sandbox" | "live" {
    return this.deps.environment;
  }

  /** The dashboard's base URL: DASHBOARD_BASE_URL when set, else PUBLIC_BASE_URL. */
  get baseUrl(): string {
    return this.deps.dashboardBaseUrl ?? this.deps.publicBaseUrl;
  }

  /** True when the dashboard is served over https (cookies get Secure). */
  https(request: FastifyRequest): boolean {
    return isHttps(request, this.baseUrl);
  }

  /** The session token the request's cookie holds (undefined when none). */
  sessionToken(request: FastifyRequest): string | undefined {
    return readCookies(request)[this.cookies.session];
  }

  /** The live session of the request's cookie, at any stage (undefined when none). */
  async session(request: FastifyRequest): Promise<LiveSession | undefined> {
    return this.deps.sessions.resolve(this.sessionToken(request));
  }

  /** Sets the session cookie. */
  setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
    setCookie(reply, this.cookies.session, token, {
      path: this.cookies.path,
      maxAgeSeconds,
      secure: this.https(request),
      sameSite: "Lax",
    });
  }

  /** Clears the session cookie. */
  clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
    setCookie(reply, this.cookies.session, "", {
      path: this.cookies.path,
      maxAgeSeconds: 0,
      secure: this.https(request),
      sameSite: "Lax",
    });
  }

  /** Clears the pre-session nonce (a session has begun: its forms are bound to the session). */
  clearPreSession(request: FastifyRequest, reply: FastifyReply): void {
    setCookie(reply, this.cookies.preSession, "", {
      path: this.cookies.path,
      maxAgeSeconds: 0,
      secure: this.https(request),
      sameSite: "Strict",
    });
  }

  private csrfMac(kid: string, binding: string): string {
    const key = createHmac("sha256", this.deps.keyRing.derive(kid, "secrets"))
      .update("ferry/dashboard/csrf")
      .digest();
    return createHmac("sha256", key).update(binding).digest("base64url");
  }

  /**
   * What a token of `binding` is computed over for this request: the hash of the session token,
   * or the pre-session nonce; undefined when the request holds none (no token can match).
   */
  private bindingValue(request: FastifyRequest, binding: CsrfBinding): string | undefined {
    if (binding === "session") {
      const token = this.sessionToken(request);
      if (!token) return undefined;
      return `session|${createHash("sha256").update(token, "utf8").digest("hex")}`;
    }
    const nonce = readCookies(request)[this.cookies.preSession];
    return nonce && /^[A-Za-z0-9_-]{32}$/.test(nonce) ? `pre-session|${nonce}` : undefined;
  }

  /**
   * The CSRF token of the page's forms, bound to the request's session (default) or, for the
   * sign-in and setup forms, to a pre-session nonce (set in a short-lived cookie when missing).
   * A token of one session or nonce is refused in any other.
   */
  csrfToken(request: FastifyRequest, reply: FastifyReply, binding: CsrfBinding = "session"): string {
    let value = this.bindingValue(request, binding);
    if (value === undefined && binding === "pre-session") {
      const nonce = randomBytes(24).toString("base64url");
      setCookie(reply, this.cookies.preSession, nonce, {
        path: this.cookies.path,
        maxAgeSeconds: PRE_SESSION_SECONDS,
        secure: this.https(request),
        sameSite: "Strict",
      });
      // The new nonce is also what this request's later reads see.
      request.headers.cookie = `${request.headers.cookie ? `${request.headers.cookie}; ` : ""}${this.cookies.preSession}=${nonce}`;
      value = `pre-session|${nonce}`;
    }
    if (value === undefined) return "";
    const kid = this.deps.keyRing.activeKid;
    return `${kid}.${this.csrfMac(kid, value)}`;
  }

  /** True when the form's `csrf_token` field was made for this request's session or nonce. */
  validCsrf(request: FastifyRequest, binding: CsrfBinding = "session"): boolean {
    const value = this.bindingValue(request, binding);
    const token = formField(request, "csrf_token");
    if (!value || !token) return false;
    const dot = token.indexOf(".");
    const kid = token.slice(0, dot);
    if (dot < 1 || !this.deps.keyRing.kids().includes(kid)) return false;
    return constantTimeEqual(token, `${kid}.${this.csrfMac(kid, value)}`);
  }

  private flashKey(kid: string): Buffer {
    return createHmac("sha256", this.deps.keyRing.derive(kid, "secrets"))
      .update("ferry/dashboard/flash")
      .digest();
  }

  /**
   * Hands `value` to the next page of this session once (post/redirect/get of a form that shows a
   * secret): sealed with AES-GCM to the session in an HttpOnly, SameSite=Strict cookie that lives
   * five minutes. `takeFlash` reads it once and clears it, so a reload shows it no more.
   */
  setFlash(request: FastifyRequest, reply: FastifyReply, value: Record<string, unknown>): void {
    const binding = this.bindingValue(request, "session");
    if (!binding) return;
    const kid = this.deps.keyRing.activeKid;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.flashKey(kid), iv);
    cipher.setAAD(Buffer.from(binding));
    const body = JSON.stringify({ value, until: Date.now() + FLASH_SECONDS * 1000 });
    const sealed = Buffer.concat([cipher.update(body, "utf8"), cipher.final()]);
    const parts = [kid, iv, sealed, cipher.getAuthTag()].map((p) =>
      typeof p === "string" ? p : p.toString("base64url"),
    );
    setCookie(reply, this.cookies.flash, parts.join("."), {
      path: this.cookies.path,
      maxAgeSeconds: FLASH_SECONDS,
      secure: this.https(request),
      sameSite: "Strict",
    });
  }

  /** The value `setFlash` handed to this session, once (undefined when none, expired or another session's). */
  takeFlash(request: FastifyRequest, reply: FastifyReply): Record<string, unknown> | undefined {
    const raw = readCookies(request)[this.cookies.flash];
    if (!raw) return undefined;
    setCookie(reply, this.cookies.flash, "", {
      path: this.cookies.path,
      maxAgeSeconds: 0,
      secure: this.https(request),
      sameSite: "Strict",
    });
    const binding = this.bindingValue(request, "session");
    const [kid, iv, sealed, tag] = raw.split(".");
    if (!binding || !kid || !iv || !sealed || !tag || !this.deps.keyRing.kids().includes(kid))
      return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.flashKey(kid), Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(binding));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      const body = Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]);
      const { value, until } = JSON.parse(body.toString("utf8")) as {
        value: Record<string, unknown>;
        until: number;
      };
      return until >= Date.now() ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Sends a 303 redirect (after a form post, or to sign-in). */
  redirect(reply: FastifyReply, location: string): FastifyReply {
    return reply.code(303).header("location", location).header("cache-control", "no-store").send();
  }

  /** Sends a full HTML page (security headers of the recipient pages: strict CSP, no-store, no framing). */
  send(request: FastifyRequest, reply: FastifyReply, page: VNode, status = 200): FastifyReply {
    applyRecipientHeaders(reply, this.https(request));
    return reply.code(status).type("text/html; charset=utf-8").send(renderDocument(page));
  }

  /** Renders `body` inside the dashboard layout (navigation, environment badge, sign-out) and sends it. */
  render(
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: PageContext,
    options: RenderOptions,
    body: VNode,
  ): FastifyReply {
    return this.send(
      request,
      reply,
      <DashboardLayout
        title={options.title}
        environment={this.deps.environment}
        section={options.section}
        withScript={options.withScript}
        signedIn={{ email: ctx.user.email, accountName: ctx.accountName, csrfToken: ctx.csrfToken }}
      >
        {body}
      </DashboardLayout>,
      options.status,
    );
  }

  /** Renders a page without navigation (sign-in, setup, errors before sign-in). */
  renderPublic(
    request: FastifyRequest,
    reply: FastifyReply,
    title: string,
    body: VNode,
    status = 200,
  ): FastifyReply {
    return this.send(
      request,
      reply,
      <DashboardLayout title={title} environment={this.deps.environment}>
        {body}
      </DashboardLayout>,
      status,
    );
  }

  /**
   * The session guard: the page context of a signed-in session, or undefined after redirecting
   * (303) to sign-in, or to the sign-in step still owed (code, two-factor enrolment).
   */
  async guard(request: FastifyRequest, reply: FastifyReply): Promise<PageContext | undefined> {
    const live = await this.session(request);
    if (live?.session.stage !== "full") {
      const next =
        live?.session.stage === "password"
          ? "/dashboard/sign-in/code"
          : live?.session.stage === "enrol"
            ? "/dashboard/setup/two-factor"
            : request.method === "GET"
              ? `/dashboard/sign-in?next=${encodeURIComponent(request.url.split("?")[0] ?? "/dashboard/")}`
              : "/dashboard/sign-in";
      this.redirect(reply, next);
      return undefined;
    }
    const user = { userId: live.userId, accountId: live.accountId, email: live.email };
    request.dashboardUser = user;
    const profile = await this.deps.accounts.profile(this.deps.database.db, live.accountId);
    return {
      user,
      csrfToken: this.csrfToken(request, reply),
      accountName: profile?.name || profile?.email || "",
      environment: this.deps.environment,
    };
  }

  /** Refuses a form post with a wrong CSRF token: 403 page. Returns false when refused. */
  checkCsrf(request: FastifyRequest, reply: FastifyReply, binding: CsrfBinding = "session"): boolean {
    if (this.validCsrf(request, binding)) return true;
    this.renderPublic(
      request,
      reply,
      "Form expired",
      <p>
        The form expired or did not come from this dashboard. <a href="/dashboard/">Go back</a>, reload the
        page and try again.
      </p>,
      403,
    );
    return false;
  }

  /** Registers a guarded GET page. */
  get(app: Router, path: string, options: PageOptions, handler: PageHandler): void {
    this.guardedRoutes.push({ method: "GET", path });
    app.get(path, { config: { public: true }, schema: this.schema(options) }, async (request, reply) => {
      const ctx = await this.guard(request, reply);
      if (!ctx) return reply;
      return this.run(handler, request, reply, ctx);
    });
  }

  /**
   * Runs a page handler; an AppError it throws (404 of another account's id, 400 of bad input,
   * 429...) becomes an error page in the layout with the error's status and safe message.
   */
  private async run(handler: PageHandler, request: FastifyRequest, reply: FastifyReply, ctx: PageContext) {
    try {
      return await handler(request, reply, ctx);
    } catch (err) {
      if (!(err instanceof AppError) || reply.sent) throw err;
      const status = errorStatus[err.code] ?? 400;
      for (const [k, v] of Object.entries(err.headers ?? {})) reply.header(k, v);
      const title =
        status === 404 ? "Not found" : status === 429 ? "Too many requests" : "Something is not right";
      const detail = err instanceof ValidationError ? Object.values(err.fields).flat().join(" ") : err.detail;
      return this.render(
        request,
        reply,
        ctx,
        { title, status },
        <section class="fd-card">
          <p role="alert">
            {status === 404 ? "There is nothing here, or it belongs to another account." : detail}
          </p>
          <p>
            <a href="/dashboard/">Back to the dashboard</a>
          </p>
        </section>,
      );
    }
  }

  /** Registers a guarded form post: session and CSRF checked before `handler` runs. */
  post(app: Router, path: string, options: PageOptions, handler: PageHandler): void {
    this.guardedRoutes.push({ method: "POST", path });
    app.post(path, { config: { public: true }, schema: this.schema(options) }, async (request, reply) => {
      const ctx = await this.guard(request, reply);
      if (!ctx) return reply;
      if (!this.checkCsrf(request, reply)) return reply;
      return this.run(handler, request, reply, ctx);
    });
  }

  /** Route schema of a dashboard page: named, tagged, kept out of the API document. */
  schema(options: PageOptions) {
    return {
      operationId: options.operationId,
      tags: ["dashboard"],
      summary: options.summary ?? "Dashboard page",
      hide: true,
    };
  }
}
