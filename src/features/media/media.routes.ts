import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Container } from "../../app/container.js";
import { requireAuth } from "../../http/auth.js";
import { suspendIdleTimeout } from "../../http/idle-timeout.js";
import { authErrors, errorResponses, jwtSecurity, PaginatedOf } from "../../http/openapi.js";
import { AppError } from "../../shared/errors.js";
import { paginate, parsePageRequest } from "../../shared/pagination.js";
import { registerRawFormParser, uploadParts } from "./media.body.js";
import type { CallMeta } from "./media.context.js";
import {
  MediaChunkBody,
  MediaCreateBody,
  MediaIdParams,
  MediaListQuery,
  MediaSchema,
} from "./media.schemas.js";
import { chunkTooLarge, fileTooLarge } from "./upload-media.service.js";

const uploadTypes = ["multipart/form-data", "application/x-www-form-urlencoded"];
// Upload bodies are streamed and checked by the service; Ajv only documents them.
const checkedByService = () => () => true;
// Room for multipart boundaries and the text fields around the file.
const MULTIPART_OVERHEAD = 1024 * 1024;

/** The call's origin for the audit log. */
export function callMeta(request: FastifyRequest): CallMeta {
  return {
    ip: request.ip,
    method: request.method,
    path: request.url.split("?")[0] ?? "",
    contentType: request.headers["content-type"]?.split(";")[0] ?? "",
    holdConnection: () => suspendIdleTimeout(request),
  };
}

/**
 * Sends a download: headers, the streamed body, and the outcome recorded once the response ends
 * (complete only when every byte reached the connection). Shared with the recipient pages.
 */
export function sendDownload(
  reply: FastifyReply,
  download: {
    status: number;
    headers: Record<string, string>;
    body: NodeJS.ReadableStream;
    settle(complete: boolean): Promise<void>;
  },
): FastifyReply {
  let finished = false;
  reply.raw.once("finish", () => {
    finished = true;
  });
  reply.raw.once("close", () => {
    void download.settle(finished);
  });
  return reply.code(download.status).headers(download.headers).send(download.body);
}

/** /v1/media/ routes (spec: Medias; DESIGN §3). */
export async function mediaRoutes(
  app: FastifyInstance,
  { container }: { container: Container },
): Promise<void> {
  const { media, config } = container;
  const tags = ["media"];
  const common = { config: { scope: "media" as const } };
  // Percent-encoding triples a byte at most: a chunk-sized file fits in three chunk sizes.
  const formTooLarge = () =>
    new AppError(
      "PAYLOAD_TOO_LARGE",
      `A form-urlencoded upload carries at most ${config.MAX_CHUNK_BYTES} bytes of file. Send larger files as multipart/form-data, or in chunks.`,
    );
  registerRawFormParser(app, 3 * config.MAX_CHUNK_BYTES + 64 * 1024, formTooLarge);

  /** Refuses a body that announces more than `max` bytes before reading it, and closes the connection on upload errors. */
  const guardUpload = (request: FastifyRequest, reply: FastifyReply, max: number, tooLarge: AppError) => {
    const declared = Number(request.headers["content-length"] ?? "0");
    if (request.isMultipart() && declared > max) {
      reply.header("connection", "close");
      throw tooLarge;
    }
  };
  const onUploadError = (request: FastifyRequest, reply: FastifyReply, error: unknown): never => {
    // An unread request body would otherwise be drained: stop the client sending it.
    if (!request.raw.complete) reply.header("connection", "close");
    throw error;
  };

  app.post(
    "/v1/media/",
    {
      ...common,
      validatorCompiler: checkedByService,
      schema: {
        tags,
        summary: "Upload a file, or the first chunk of a chunked upload, to a draft push request",
        description:
          "Multipart/form-data streams files of any size up to MAX_FILE_BYTES (default 10 GiB); form-urlencoded carries the `file` field's raw bytes and is limited to MAX_CHUNK_BYTES (4 MiB). For a chunked upload send `total_chunks` and `current_chunk` here and the other chunks by PUT /v1/media/{id}, in any order. `content_type` defaults to the file part's type, `name` to its file name.",
        security: jwtSecurity,
        consumes: uploadTypes,
        body: MediaCreateBody,
        response: { 201: MediaSchema, ...errorResponses(400, 404, 413, 415, 422), ...authErrors },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      try {
        guardUpload(
          request,
          reply,
          config.MAX_FILE_BYTES + MULTIPART_OVERHEAD,
          fileTooLarge(config.MAX_FILE_BYTES),
        );
        const view = await media.create(
          auth,
          uploadParts(request, config.MAX_FILE_BYTES, config.MAX_CHUNK_BYTES, formTooLarge),
          callMeta(request),
        );
        return reply.code(201).send(view);
      } catch (error) {
        return onUploadError(request, reply, error);
      }
    },
  );

  app.put(
    "/v1/media/:id/",
    {
      ...common,
      validatorCompiler: checkedByService,
      schema: {
        tags,
        summary: "Upload one chunk of a chunked upload (at most 4 MiB); re-sending a chunk replaces it",
        description:
          "The media becomes `available` (with `sha256` and `file_checksum`) once every chunk is present. Answers 201 with the Media object.",
        security: jwtSecurity,
        consumes: uploadTypes,
        params: MediaIdParams,
        body: MediaChunkBody,
        response: { 201: MediaSchema, ...errorResponses(400, 404, 410, 413, 415, 422), ...authErrors },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      try {
        guardUpload(
          request,
          reply,
          config.MAX_CHUNK_BYTES + 64 * 1024,
          chunkTooLarge(config.MAX_CHUNK_BYTES),
        );
        const { id } = request.params as { id: string };
        const view = await media.putChunk(
          auth,
          id,
          uploadParts(request, config.MAX_CHUNK_BYTES, config.MAX_CHUNK_BYTES, () =>
            chunkTooLarge(config.MAX_CHUNK_BYTES),
          ),
          callMeta(request),
        );
        return reply.code(201).send(view);
      } catch (error) {
        return onUploadError(request, reply, error);
      }
    },
  );

  app.get(
    "/v1/media/",
    {
      ...common,
      schema: {
        tags,
        summary: "List the account's media, newest first (filter with ?request=<id>)",
        security: jwtSecurity,
        querystring: MediaListQuery,
        response: { 200: PaginatedOf(MediaSchema), ...errorResponses(400, 404), ...authErrors },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      const page = parsePageRequest(query);
      const filter = { request: query.request === undefined ? undefined : String(query.request) };
      const { results, count } = await media.list(requireAuth(request), page, filter);
      return paginate(results, count, page, config.publicBaseUrl, "/v1/media/", query);
    },
  );

  app.get(
    "/v1/media/:id/",
    {
      ...common,
      schema: {
        tags,
        summary: "Read a media's information (not its content)",
        security: jwtSecurity,
        params: MediaIdParams,
        response: { 200: MediaSchema, ...errorResponses(404), ...authErrors },
      },
    },
    async (request) => media.get(requireAuth(request), (request.params as { id: string }).id),
  );

  app.get(
    "/v1/media/:id/download",
    {
      ...common,
      exposeHeadRoute: false,
      schema: {
        tags,
        summary: "Download the file's content (bytes whatever the Accept header says)",
        description:
          "Streams the decrypted content with Content-Length, Content-Type, Content-Disposition (attachment, original name), and ETag (the SHA-256). Single byte ranges (`Range: bytes=a-b`, with If-Range) answer 206, except for download-once files, which are always sent whole. Files of pull requests can be downloaded once: a complete transfer destroys them, an interrupted one leaves them downloadable, a concurrent attempt gets 409, later ones 410. If stored data fails its integrity check the response is aborted (before the first byte: a 500 JSON error), never completed with wrong bytes.",
        security: jwtSecurity,
        params: MediaIdParams,
        response: {
          200: Type.String({ format: "binary", description: "The file content." }),
          206: Type.String({ format: "binary", description: "The requested byte range." }),
          ...errorResponses(404, 409, 410, 416),
          500: Type.Object({ code: Type.String(), detail: Type.String() }),
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const download = await media.download(
        requireAuth(request),
        id,
        { range: request.headers.range, ifRange: request.headers["if-range"] as string | undefined },
        callMeta(request),
      );
      return sendDownload(reply, download);
    },
  );

  app.delete(
    "/v1/media/:id/",
    {
      ...common,
      schema: {
        tags,
        summary: "Delete a media: its encrypted blobs and data key are destroyed",
        security: jwtSecurity,
        params: MediaIdParams,
        response: { 204: Type.Null({ description: "Deleted." }), ...errorResponses(404), ...authErrors },
      },
    },
    async (request, reply) => {
      await media.delete(requireAuth(request), (request.params as { id: string }).id, callMeta(request));
      return reply.code(204).send();
    },
  );
}
