/**
 * GET /verify/document: the public page where anyone checks a PDF Ferry sealed; POST: the upload
 * (multipart, up to 50 MB), checked in memory by the PDF engine and answered with the result (HTML,
 * or JSON for `Accept: application/json`). Nothing from the upload is stored or logged (ADR 0061).
 */
import { createHmac, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import Negotiator from "negotiator";
import { Type } from "typebox";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { constantTimeEqual } from "../../crypto/hashing.js";
import { errorResponses } from "../../http/openapi.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import { PDF_LIMITS, type PdfEngine, PdfError } from "../../pdf/index.js";
import { AppError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import type { Translator } from "../../shared/i18n/i18n.js";
import { pageTranslator } from "../../web/i18n.js";
import { renderDocument } from "../../web/layout.js";
import { applyRecipientHeaders } from "../../web/security-headers.js";
import { type PresentedVerification, presentVerification } from "./verify-document.presenter.js";
import { VerifyDocumentPage, type VerifyNotice } from "./views/verify-document.views.js";

/** Path of the page and its form. */
export const VERIFY_DOCUMENT_PATH = "/verify/document";
const CSRF_COOKIE = "ferry_verify_csrf";

/** What the pages need. */
export interface VerifyDocumentDeps {
  pdf: PdfEngine;
  keyRing: KeyRing;
  rateLimiter: RateLimiter;
  publicBaseUrl: string;
  sandbox: boolean;
}

const Signer = Type.Object(
  {
    name: Type.String(),
    email: Type.String(),
    role: Type.String(),
    authentication: Type.Array(Type.String(), {
      description: "How the signer was identified: link, two_factor_code, reverse_authentication.",
    }),
    signed_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  },
  { $id: "VerifiedSigner" },
);

const Verification = Type.Object(
  {
    verdict: Type.Union(
      [Type.Literal("sealed_unchanged"), Type.Literal("changed_after_sealing"), Type.Literal("not_sealed")],
      { description: "sealed_unchanged: the seal covers every byte of the file." },
    ),
    sealed_by_ferry: Type.Boolean({ description: "A seal by this service's sealing certificate was found." }),
    unchanged: Type.Boolean({ description: "Not one byte changed or was added after sealing." }),
    document_id: Type.Union([Type.String(), Type.Null()]),
    title: Type.Union([Type.String(), Type.Null()]),
    sealed_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    original_sha256: Type.Union([Type.String(), Type.Null()], {
      description: "SHA-256 of the file first uploaded.",
    }),
    sha256: Type.String({ description: "SHA-256 of the file checked." }),
    signers: Type.Array(Signer, { description: "Signers of the sealed revision (empty when not sealed)." }),
  },
  { $id: "DocumentVerification" },
);

const UploadBody = Type.Object({
  csrf_token: Type.Optional(Type.String({ description: "The page's form token (browsers only)." })),
  document: Type.String({ format: "binary", description: "The PDF to check (at most 50 MB)." }),
});

const html = (description: string) => ({ description, content: { "text/html": { schema: Type.String() } } });

/** Which answer the client asked for: JSON only when it prefers it to HTML. */
function wantsJson(request: FastifyRequest): boolean {
  const best = new Negotiator({
    headers: { accept: String(request.headers.accept ?? "text/html") },
  }).mediaType(["text/html", "application/json"]);
  return best === "application/json";
}

/** True when the request comes from a browser (it sends Origin or Fetch Metadata on a POST). */
function fromBrowser(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined || request.headers["sec-fetch-site"] !== undefined;
}

/** Builds the verify pages. */
export function verifyDocumentPages(deps: VerifyDocumentDeps): RouteModule {
  const { pdf, keyRing, rateLimiter, publicBaseUrl, sandbox } = deps;
  const allowedOrigin = new URL(publicBaseUrl).origin;
  const https = (request: FastifyRequest) =>
    request.protocol === "https" || publicBaseUrl.startsWith("https:");

  const csrfMac = (kid: string, secret: string) => {
    const key = createHmac("sha256", keyRing.derive(kid, "secrets"))
      .update("ferry/verify-document/csrf")
      .digest();
    return createHmac("sha256", key).update(secret).digest("base64url");
  };
  const cookieSecret = (request: FastifyRequest): string | undefined => {
    for (const pair of String(request.headers.cookie ?? "").split(";")) {
      const [name, value] = pair.trim().split("=");
      if (name === CSRF_COOKIE && value && /^[A-Za-z0-9_-]{24,64}$/.test(value)) return value;
    }
    return undefined;
  };
  /** The form's token; sets the browser's secret cookie first when it has none. */
  const csrfToken = (request: FastifyRequest, reply: FastifyReply): string => {
    let secret = cookieSecret(request);
    if (!secret) {
      secret = randomBytes(24).toString("base64url");
      const parts = [
        `${CSRF_COOKIE}=${secret}`,
        `Path=${VERIFY_DOCUMENT_PATH}`,
        "Max-Age=86400",
        "HttpOnly",
        "SameSite=Strict",
      ];
      if (https(request)) parts.push("Secure");
      reply.header("set-cookie", parts.join("; "));
    }
    const kid = keyRing.activeKid;
    return `${kid}.${csrfMac(kid, secret)}`;
  };
  const validCsrf = (request: FastifyRequest, token: string | undefined): boolean => {
    const secret = cookieSecret(request);
    if (!secret || !token) return false;
    const dot = token.indexOf(".");
    const kid = token.slice(0, dot);
    if (dot < 1 || !keyRing.kids().includes(kid)) return false;
    return constantTimeEqual(token, `${kid}.${csrfMac(kid, secret)}`);
  };
  /** A browser's post must come from this origin: Origin names it, or Fetch Metadata says same-origin. */
  const sameOrigin = (request: FastifyRequest): boolean => {
    const origin = request.headers.origin;
    if (
      origin !== undefined &&
      origin !== allowedOrigin &&
      origin !== `${request.protocol}://${request.host}`
    )
      return false;
    const site = request.headers["sec-fetch-site"];
    return site === undefined || site === "same-origin" || site === "none";
  };

  const page = (
    request: FastifyRequest,
    reply: FastifyReply,
    i18n: Translator,
    status: number,
    content: { result?: PresentedVerification; notice?: VerifyNotice },
  ) => {
    applyRecipientHeaders(reply, https(request));
    reply.header("vary", "accept, accept-language, cookie");
    return reply
      .code(status)
      .type("text/html; charset=utf-8")
      .send(
        renderDocument(
          <VerifyDocumentPage i18n={i18n} sandbox={sandbox} csrf={csrfToken(request, reply)} {...content} />,
        ),
      );
  };

  /** Answers a refused upload: the page with its notice, or the spec's error shape in JSON. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: AppError, notice: VerifyNotice) => {
    for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    if (wantsJson(request)) {
      applyRecipientHeaders(reply, https(request));
      return reply.code(error.status).send({ code: error.code, detail: error.detail });
    }
    return page(request, reply, pageTranslator(request), error.status, { notice });
  };

  /** Reads the form: the token field and the one file, at most 50 MB (larger: PDF_TOO_LARGE). */
  const readUpload = async (request: FastifyRequest) => {
    let token: string | undefined;
    let file: Buffer | undefined;
    try {
      for await (const part of request.parts({
        limits: { fileSize: PDF_LIMITS.maxBytes, files: 1, fields: 5 },
      })) {
        if (part.type === "file") {
          const bytes = await part.toBuffer();
          if (part.fieldname === "document") file = bytes;
        } else if (part.fieldname === "csrf_token") token = String(part.value);
      }
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (/FILE_TOO_LARGE|FST_REQ_FILE_TOO_LARGE/.test(code))
        throw new PdfError("PDF_TOO_LARGE", "The PDF is larger than 50 MB.");
      if (/LIMIT|TOO_LARGE/.test(code)) throw new AppError("PAYLOAD_TOO_LARGE", "The form is too large.");
      throw new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
    }
    return { token, file };
  };

  return async (app) => {
    app.get(
      VERIFY_DOCUMENT_PATH,
      {
        config: { public: true },
        schema: {
          operationId: "getVerifyDocumentPage",
          tags: ["verify"],
          summary: "The public page that checks whether a PDF carries this service's seal, unchanged (HTML)",
          response: { 200: html("The page with the upload form.") },
        },
      },
      async (request, reply) => page(request, reply, pageTranslator(request), 200, {}),
    );

    app.post(
      VERIFY_DOCUMENT_PATH,
      {
        config: { public: true },
        bodyLimit: PDF_LIMITS.maxBytes + 64 * 1024,
        validatorCompiler: () => () => true,
        schema: {
          operationId: "verifyDocument",
          tags: ["verify"],
          summary:
            "Check an uploaded PDF (multipart field `document`): sealed by this service, unchanged, its signers. Nothing is stored. HTML, or JSON with Accept: application/json",
          consumes: ["multipart/form-data"],
          body: UploadBody,
          response: {
            200: {
              description: "The result.",
              content: {
                "application/json": { schema: Verification },
                "text/html": { schema: Type.String() },
              },
            },
            ...errorResponses(400, 403, 413, 415, 429, 503),
          },
        },
      },
      async (request, reply) => {
        const i18n = pageTranslator(request);
        if (!sameOrigin(request))
          return refuse(
            request,
            reply,
            new AppError("NOT_AUTHORIZED", "The form did not come from this page."),
            "verifyDocument.errorForm",
          );
        try {
          await rateLimiter.consume("verify-document-ip", request.ip);
        } catch (err) {
          if (err instanceof AppError && err.code === "RATE_LIMIT_REACHED")
            return refuse(request, reply, err, "verifyDocument.errorTooMany");
          throw err;
        }
        if (!request.isMultipart())
          return refuse(
            request,
            reply,
            new AppError(
              "UNSUPPORTED_MEDIA_TYPE",
              "Send the PDF as multipart/form-data in the field `document`.",
            ),
            "verifyDocument.errorMissing",
          );
        let upload: Awaited<ReturnType<typeof readUpload>>;
        try {
          upload = await readUpload(request);
        } catch (err) {
          if (err instanceof PdfError) return refuse(request, reply, err, "verifyDocument.errorTooLarge");
          if (err instanceof AppError) return refuse(request, reply, err, "verifyDocument.errorMissing");
          throw err;
        }
        // A browser proves the form is this page's with its token; other clients hold no ambient authority.
        if (fromBrowser(request) && !validCsrf(request, upload.token))
          return refuse(
            request,
            reply,
            new AppError("NOT_AUTHORIZED", "The form expired or did not come from this page."),
            "verifyDocument.errorForm",
          );
        if (!upload.file || upload.file.length === 0)
          return refuse(
            request,
            reply,
            new AppError("INVALID_REQUEST", "Send the PDF in the field `document`."),
            "verifyDocument.errorMissing",
          );
        let result: PresentedVerification;
        try {
          result = presentVerification(await pdf.verifyDocument(upload.file));
        } catch (err) {
          if (!(err instanceof PdfError)) throw err;
          const notice: VerifyNotice =
            err.reason === "PDF_TOO_LARGE"
              ? "verifyDocument.errorTooLarge"
              : err.reason === "ENGINE_BUSY"
                ? "verifyDocument.errorBusy"
                : "verifyDocument.errorNotPdf";
          if (err.reason === "ENGINE_BUSY") reply.header("retry-after", "30");
          return refuse(request, reply, err, notice);
        }
        if (wantsJson(request)) {
          applyRecipientHeaders(reply, https(request));
          return reply.code(200).type("application/json; charset=utf-8").send(result);
        }
        return page(request, reply, i18n, 200, { result });
      },
    );
  };
}
