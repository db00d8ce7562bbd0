import { Type } from "typebox";
import { errorResponses } from "../../http/openapi.js";
import { AppError } from "../../shared/errors.js";
import type { Router } from "../../shared/feature.js";
import { registerRawBodyParser } from "../media/index.js";
import type { MediaRow, RecipientContext } from "./recipient.service.js";
import { htmlResponse, IdentifierParams, pagePath } from "./recipient-http.js";
import { type LinkRequest, pageCaller } from "./recipient-session.js";
import type { PageDeps } from "./request.pages.js";
import { uploadPieces } from "./upload-body.js";

export const UploadFile = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  bytes: Type.Integer(),
  content_type: Type.String(),
  size: Type.Union([Type.Integer(), Type.Null()], {
    description:
      "The file's size declared with its first chunk: the upload completes only at exactly this size.",
  }),
  fingerprint: Type.Union([Type.String(), Type.Null()], {
    description:
      "The page's fingerprint of the file (ADR 0022): an unfinished upload is resumed only by a file with the same one.",
  }),
  state: Type.String({ examples: ["uploading", "available"] }),
  total_chunks: Type.Integer(),
  received_chunks: Type.Array(Type.Integer(), { description: "1-based chunk numbers the server holds." }),
});

export const UploadList = Type.Object({
  chunk_bytes: Type.Integer({ description: "Chunk size the page uploads with (at most 4 MiB)." }),
  files: Type.Array(UploadFile),
});

export const ChunkBody = Type.Object({
  name: Type.Optional(Type.String({ description: "File name with extension (first chunk only)." })),
  content_type: Type.Optional(Type.String()),
  size: Type.Optional(
    Type.Integer({
      description:
        "Total bytes of the file (first chunk only); the chunks must add up to it (422 for a chunk that would make them differ).",
    }),
  ),
  fingerprint: Type.Optional(
    Type.String({
      maxLength: 128,
      description:
        "The page's fingerprint of the file, recorded with the first chunk; a later chunk with another is refused (409).",
    }),
  ),
  total_chunks: Type.Optional(Type.Integer({ minimum: 1 })),
  current_chunk: Type.Integer({ minimum: 1 }),
  file: Type.String({
    format: "binary",
    description: "The chunk's bytes (at most 4 MiB), after the other fields.",
  }),
});

/** Query of a later chunk sent as the raw body (ignored for multipart; ADR 0041). */
export const RawChunkQuery = Type.Object({
  current_chunk: Type.Optional(
    Type.Integer({ minimum: 1, description: "With an application/octet-stream body: the chunk's number." }),
  ),
  fingerprint: Type.Optional(
    Type.String({
      maxLength: 128,
      description: "With an application/octet-stream body: the upload's fingerprint.",
    }),
  ),
});

/** Request bodies of a later chunk by content type: the raw bytes, or the multipart form. */
export const ChunkBodies = {
  content: {
    "application/octet-stream": {
      schema: Type.String({
        format: "binary",
        description: "The chunk's bytes; `current_chunk` and `fingerprint` in the query string.",
      }),
    },
    "multipart/form-data": { schema: ChunkBody },
  },
};

const jsonErrors = errorResponses(400, 403, 404, 409, 413, 422, 429);

/** A chunk body may hold one chunk of at most 4 MiB plus its fields. */
export const CHUNK_BODY_LIMIT = 4 * 1024 * 1024 + 64 * 1024;

export function presentUpload(row: MediaRow, received: number[]) {
  return {
    id: row.id,
    name: row.name,
    bytes: Number(row.bytes),
    content_type: row.content_type,
    size: row.declared_bytes === null ? null : Number(row.declared_bytes),
    fingerprint: row.fingerprint,
    state: row.state,
    total_chunks: row.total_chunks,
    received_chunks: received,
  };
}

/** Submit of a pull request: completes it with the recipient's optional reply message. */
export async function registerPullSubmit(app: Router, deps: PageDeps): Promise<void> {
  const { recipient, session } = deps;

  app.post(
    "/r/:identifier/submit",
    {
      config: { public: true },
      schema: {
        operationId: "submitRecipientRequest",
        tags: ["recipient"],
        summary:
          "Submit a pull request with an optional reply message (completes it; 303 to the completed page)",
        consumes: ["application/x-www-form-urlencoded"],
        params: IdentifierParams,
        body: Type.Object({
          csrf_token: Type.String(),
          receiver_message: Type.Optional(Type.String({ maxLength: 10000 })),
          confirm_empty: Type.Optional(
            Type.String({ description: "`1` to submit without any file (the page asks for it first)." }),
          ),
        }),
        response: {
          303: Type.Null({
            description:
              "To the completed page, or back to the page with `?error=uploading|empty|closed` when refused (a reload never posts again).",
          }),
          404: htmlResponse("Unknown link."),
        },
      },
    },
    async (request, reply) => {
      const ctx = await session.load(request, reply);
      if (!ctx) return reply;
      session.checkFormCsrf(request, ctx, request.body.csrf_token);
      const path = pagePath(ctx.request.identifier);
      if (recipient.pageKind(ctx, session.hasSession(request, ctx)) !== "pull")
        return reply.redirect(path, 303);
      const message = request.body.receiver_message ?? "";
      const result = await recipient.submit(ctx, message, request.body.confirm_empty === "1");
      if (!result.ok) return reply.redirect(`${path}?error=${result.reason}#submit-form`, 303);
      return reply.redirect(path, 303);
    },
  );
}

/**
 * The JSON upload endpoints the pull page's script uses to send files in chunks and to resume
 * them, authorised by the link, the two-factor session and the CSRF token in the X-CSRF-Token
 * header.
 */
export async function registerPullUploads(app: Router, deps: PageDeps): Promise<void> {
  const { recipient, session } = deps;

  /** The link of an upload call: pull page visible (two-factor passed) and CSRF header valid. */
  const authoriseUpload = async (request: LinkRequest): Promise<RecipientContext> => {
    const ctx = await session.resolve(request);
    if (!ctx) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    const token = request.headers["x-csrf-token"];
    if (!session.validCsrf(request, ctx, typeof token === "string" ? token : undefined))
      throw new AppError("NOT_AUTHORIZED", "Missing or invalid CSRF token. Reload the page.");
    const kind = recipient.pageKind(ctx, session.hasSession(request, ctx));
    if (kind === "tfa") throw new AppError("NOT_AUTHORIZED", "Verify the two-factor code first.");
    if (kind !== "pull") throw new AppError("UNPROCESSABLE_ENTITY", "This request no longer accepts files.");
    return ctx;
  };

  const uploadState = async (ctx: RecipientContext, mediaId: number) => {
    const row = (await recipient.media.listRequestMedia(ctx.request.id)).find((m) => m.id === mediaId);
    if (!row) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    return presentUpload(row, await recipient.media.receivedChunks(row.id));
  };

  app.get(
    "/r/:identifier/uploads",
    {
      config: { public: true },
      schema: {
        operationId: "listRecipientUploads",
        tags: ["recipient"],
        summary: "Files the recipient uploaded so far, with the chunks the server holds (resume state)",
        params: IdentifierParams,
        response: { 200: UploadList, ...jsonErrors },
      },
    },
    async (request) => {
      const ctx = await authoriseUpload(request);
      const rows = (await recipient.media.listRequestMedia(ctx.request.id)).filter(
        (m) => m.uploaded_by === "recipient" && m.state !== "removed",
      );
      const files = [];
      for (const row of rows) files.push(presentUpload(row, await recipient.media.receivedChunks(row.id)));
      return { chunk_bytes: recipient.uploadRules(ctx).chunkBytes, files };
    },
  );

  app.post(
    "/r/:identifier/uploads",
    {
      config: { public: true },
      bodyLimit: CHUNK_BODY_LIMIT,
      validatorCompiler: () => () => true,
      schema: {
        operationId: "startRecipientUpload",
        tags: ["recipient"],
        summary: "Start a recipient upload with one chunk (multipart; header X-CSRF-Token)",
        consumes: ["multipart/form-data"],
        params: IdentifierParams,
        body: ChunkBody,
        response: { 201: UploadFile, ...jsonErrors },
      },
    },
    async (request, reply) => {
      const ctx = await authoriseUpload(request);
      const pieces = uploadPieces(request, recipient.uploadRules(ctx), true);
      const id = await recipient.media.createUpload(ctx.request.id, pieces, pageCaller(request));
      return reply.code(201).send(await uploadState(ctx, id));
    },
  );

  // Its own scope: only this route takes application/octet-stream bodies (ADR 0041).
  await app.register(async (scope: Router) => {
    registerRawBodyParser(scope);
    scope.put(
      "/r/:identifier/uploads/:mediaId",
      {
        config: { public: true },
        bodyLimit: CHUNK_BODY_LIMIT,
        validatorCompiler: () => () => true,
        schema: {
          operationId: "putRecipientUploadChunk",
          tags: ["recipient"],
          summary:
            "Send (or re-send) one chunk of a recipient upload (the raw body with ?current_chunk=, or multipart; header X-CSRF-Token)",
          consumes: ["application/octet-stream", "multipart/form-data"],
          params: Type.Object({ identifier: Type.String(), mediaId: Type.String() }),
          querystring: RawChunkQuery,
          body: ChunkBodies,
          response: { 200: UploadFile, ...jsonErrors },
        },
      },
      async (request) => {
        const ctx = await authoriseUpload(request);
        const mediaId = Number(request.params.mediaId);
        if (!Number.isSafeInteger(mediaId) || mediaId < 1)
          throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
        const pieces = uploadPieces(request, recipient.uploadRules(ctx), false);
        await recipient.media.putChunk(ctx.request.id, mediaId, pieces, pageCaller(request));
        return uploadState(ctx, mediaId);
      },
    );
  });

  app.delete(
    "/r/:identifier/uploads/:mediaId",
    {
      config: { public: true },
      schema: {
        operationId: "deleteRecipientUpload",
        tags: ["recipient"],
        summary:
          "Remove one of the recipient's files, finished or not, before Submit (its stored bytes are destroyed; header X-CSRF-Token)",
        params: Type.Object({ identifier: Type.String(), mediaId: Type.String() }),
        response: {
          204: Type.Null({ description: "Removed." }),
          ...errorResponses(403, 404, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const ctx = await authoriseUpload(request);
      const mediaId = Number(request.params.mediaId);
      if (!Number.isSafeInteger(mediaId) || mediaId < 1)
        throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
      await recipient.media.removeUpload(ctx.request.id, mediaId, pageCaller(request));
      return reply.code(204).send(null);
    },
  );
}
