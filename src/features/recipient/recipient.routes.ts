import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Container } from "../../app/container.js";
import { errorResponses } from "../../http/openapi.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { applyRecipientHeaders } from "../../web/security-headers.js";
import { IdentifierParams, pageCaller, registerRecipientPages } from "./recipient.pages.js";
import type { MediaRow, RecipientContext, UploadPiece } from "./recipient.service.js";
import { registerRecipientAssets } from "./recipient-assets.pages.js";
import { isHttps, readCookies, sendPage } from "./recipient-http.js";
import { CSRF_COOKIE, SESSION_COOKIE } from "./recipient-tokens.js";
import type { UploadRules } from "./views/pages.js";
import { NotFoundPage } from "./views/pages.js";

const UploadFile = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  bytes: Type.Integer(),
  content_type: Type.String(),
  state: Type.String({ examples: ["uploading", "available"] }),
  total_chunks: Type.Integer(),
  received_chunks: Type.Array(Type.Integer(), { description: "1-based chunk numbers the server holds." }),
});

const UploadList = Type.Object({
  chunk_bytes: Type.Integer({ description: "Chunk size the page uploads with (at most 4 MiB)." }),
  files: Type.Array(UploadFile),
});

const jsonErrors = errorResponses(400, 403, 404, 413, 422, 429);

function presentUpload(row: MediaRow, received: number[]) {
  return {
    id: row.id,
    name: row.name,
    bytes: Number(row.bytes),
    content_type: row.content_type,
    state: row.state,
    total_chunks: row.total_chunks,
    received_chunks: received,
  };
}

/** Extension of a file name, lower case without the dot ("" when none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/** Checks the first chunk's fields against the request's upload rules; throws ValidationError. */
export function checkFirstChunk(fields: Record<string, string>, rules: UploadRules): void {
  const name = (fields.name ?? "").trim();
  const size = Number(fields.size);
  const totalChunks = Number(fields.total_chunks ?? 1);
  const problems: Record<string, string[]> = {};
  if (!name) problems.name = ["This field is required."];
  else if (rules.extensions.length && !rules.extensions.includes(extensionOf(name)))
    problems.name = [`Files of this type are not accepted. Allowed: ${rules.extensions.join(", ")}.`];
  if (fields.size === undefined || !Number.isSafeInteger(size) || size < 0)
    problems.size = ["A valid integer is required."];
  else if (size > rules.maxFileBytes) problems.size = [`The file is larger than ${rules.maxFileLabel}.`];
  else {
    const expected = Math.max(1, Math.ceil(size / rules.chunkBytes));
    if (totalChunks !== expected)
      problems.total_chunks = [`Expected ${expected} chunks of ${rules.chunkBytes} bytes.`];
  }
  if (Object.keys(problems).length) throw new ValidationError(problems);
}

/**
 * Recipient routes (issue 7), public and outside /v1/: security headers on every response,
 * per-IP and per-identifier rate limits, AAA-0011 per call, the HTML pages and the JSON upload
 * endpoints the pull page's script uses (authorised by the link, the two-factor session and the
 * CSRF token).
 */
export async function recipientRoutes(
  app: FastifyInstance,
  { container }: { container: Container },
): Promise<void> {
  const { recipient, recipientTokens: tokens, rateLimiter, clock, config } = container;
  app.decorateRequest("recipientCtx", undefined);
  app.decorateRequest("recipientPageLoaded", false);

  app.addHook("onRequest", async (request, reply) => {
    if (!request.url.startsWith("/r/")) return;
    try {
      await rateLimiter.consume("recipient-ip", request.ip);
      const identifier = request.url.slice(3).split(/[/?#]/, 1)[0] ?? "";
      await rateLimiter.consume("recipient-id", identifier);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== "RATE_LIMIT_REACHED") throw err;
      applyRecipientHeaders(reply, isHttps(request, config.publicBaseUrl));
      reply.headers(err.headers);
      if (request.method === "GET" && !request.url.includes("/uploads")) {
        return reply
          .code(429)
          .type("text/html; charset=utf-8")
          .send(
            "<!doctype html><title>Too many requests</title><p>Too many requests. Wait a minute, then reload the page.</p>",
          );
      }
      throw err;
    }
  });

  app.addHook("onSend", async (request, reply, payload) => {
    if (!request.url.startsWith("/r/")) return payload;
    applyRecipientHeaders(reply, isHttps(request, config.publicBaseUrl));
    const ctx = request.recipientCtx;
    if (ctx) {
      try {
        await recipient.recordCall(ctx, pageCaller(request), reply.statusCode, request.recipientPageLoaded);
      } catch (err) {
        request.log.error({ err }, "audit write failed for recipient page call");
      }
    }
    return payload;
  });

  // 404 page for any other path under /r/ (e.g. a link cut short).
  app.get("/r/*", { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    sendPage(reply, 404, NotFoundPage({ chrome: recipient.chrome(undefined) })),
  );

  await registerRecipientPages(app, container);
  await registerRecipientAssets(app, container);

  /** Resolves a link for an upload call: pull page visible (two-factor passed) and CSRF header valid. */
  const authoriseUpload = async (request: FastifyRequest): Promise<RecipientContext> => {
    const { identifier } = request.params as { identifier: string };
    const ctx = await recipient.resolve(identifier, request.hostname);
    if (!ctx) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    request.recipientCtx = ctx;
    const cookies = readCookies(request);
    const token = request.headers["x-csrf-token"];
    if (
      !tokens.verifyCsrf(
        ctx.request.identifier,
        cookies[CSRF_COOKIE],
        typeof token === "string" ? token : undefined,
      )
    )
      throw new AppError("NOT_AUTHORIZED", "Missing or invalid CSRF token. Reload the page.");
    const session = tokens.verifySession(
      ctx.request.id,
      ctx.request.identifier,
      cookies[SESSION_COOKIE],
      Math.floor(clock.now().getTime() / 1000),
    );
    const kind = recipient.pageKind(ctx, session);
    if (kind === "tfa") throw new AppError("NOT_AUTHORIZED", "Verify the two-factor code first.");
    if (kind !== "pull") throw new AppError("UNPROCESSABLE_ENTITY", "This request no longer accepts files.");
    return ctx;
  };

  const listUploads = async (ctx: RecipientContext) => {
    const media = recipient.media();
    const rows = (await media.listRequestMedia(ctx.request.id)).filter(
      (m) => m.uploaded_by === "recipient" && m.state !== "removed",
    );
    const files = [];
    for (const row of rows) files.push(presentUpload(row, await media.receivedChunks(row.id)));
    return { chunk_bytes: recipient.uploadRules(ctx).chunkBytes, files };
  };

  const uploadState = async (ctx: RecipientContext, mediaId: number) => {
    const media = recipient.media();
    const row = (await media.listRequestMedia(ctx.request.id)).find((m) => m.id === mediaId);
    if (!row) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    return presentUpload(row, await media.receivedChunks(row.id));
  };

  app.get(
    "/r/:identifier/uploads",
    {
      config: { public: true },
      schema: {
        tags: ["recipient"],
        summary: "Files the recipient uploaded so far, with the chunks the server holds (resume state)",
        params: IdentifierParams,
        response: { 200: UploadList, ...jsonErrors },
      },
    },
    async (request) => listUploads(await authoriseUpload(request)),
  );

  /**
   * The multipart body as the media service's pieces. When the file part arrives, the fields before
   * it are checked against the request's rules (declared size, chunk count, extension) so a file
   * the page should have refused is stopped before its bytes are stored.
   */
  async function* uploadPieces(
    request: FastifyRequest,
    ctx: RecipientContext,
    first: boolean,
  ): AsyncGenerator<UploadPiece> {
    if (!request.isMultipart())
      throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send chunks as multipart/form-data.");
    const rules = recipient.uploadRules(ctx);
    const fields: Record<string, string> = {};
    try {
      for await (const part of request.parts({ limits: { fileSize: rules.chunkBytes, files: 1 } })) {
        if (part.type !== "file") {
          fields[part.fieldname] = String(part.value);
          yield { kind: "field", name: part.fieldname, value: String(part.value) };
          continue;
        }
        if (first) checkFirstChunk(fields, rules);
        yield {
          kind: "file",
          field: part.fieldname,
          stream: part.file,
          filename: part.filename,
          mimetype: part.mimetype,
        };
        if (part.file.truncated)
          throw new AppError("PAYLOAD_TOO_LARGE", `A chunk may hold at most ${rules.chunkBytes} bytes.`);
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      const code = (err as { code?: string }).code ?? "";
      if (/LIMIT|TOO_LARGE/.test(code))
        throw new AppError("PAYLOAD_TOO_LARGE", `A chunk may hold at most ${rules.chunkBytes} bytes.`);
      throw new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
    }
  }

  const ChunkBody = Type.Object({
    name: Type.Optional(Type.String({ description: "File name with extension (first chunk only)." })),
    content_type: Type.Optional(Type.String()),
    size: Type.Optional(Type.Integer({ description: "Total bytes of the file (first chunk only)." })),
    total_chunks: Type.Optional(Type.Integer({ minimum: 1 })),
    current_chunk: Type.Integer({ minimum: 1 }),
    file: Type.String({
      format: "binary",
      description: "The chunk's bytes (at most 4 MiB), after the other fields.",
    }),
  });

  app.post(
    "/r/:identifier/uploads",
    {
      config: { public: true },
      bodyLimit: 4 * 1024 * 1024 + 64 * 1024,
      validatorCompiler: () => () => true,
      schema: {
        tags: ["recipient"],
        summary: "Start a recipient upload with one chunk (multipart; header X-CSRF-Token)",
        consumes: ["multipart/form-data"],
        params: IdentifierParams,
        body: ChunkBody,
        response: { 201: UploadFile, ...jsonErrors },
      },
    },
    async (request, reply: FastifyReply) => {
      const ctx = await authoriseUpload(request);
      const media = recipient.media();
      const id = await media.createUpload(
        ctx.request.id,
        uploadPieces(request, ctx, true),
        pageCaller(request),
      );
      return reply.code(201).send(await uploadState(ctx, id));
    },
  );

  app.put(
    "/r/:identifier/uploads/:mediaId",
    {
      config: { public: true },
      bodyLimit: 4 * 1024 * 1024 + 64 * 1024,
      validatorCompiler: () => () => true,
      schema: {
        tags: ["recipient"],
        summary: "Send (or re-send) one chunk of a recipient upload (multipart; header X-CSRF-Token)",
        consumes: ["multipart/form-data"],
        params: Type.Object({ identifier: Type.String(), mediaId: Type.String() }),
        body: ChunkBody,
        response: { 200: UploadFile, ...jsonErrors },
      },
    },
    async (request) => {
      const ctx = await authoriseUpload(request);
      const mediaId = Number((request.params as { mediaId: string }).mediaId);
      if (!Number.isSafeInteger(mediaId) || mediaId < 1)
        throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
      await recipient
        .media()
        .putChunk(ctx.request.id, mediaId, uploadPieces(request, ctx, false), pageCaller(request));
      return uploadState(ctx, mediaId);
    },
  );
}
