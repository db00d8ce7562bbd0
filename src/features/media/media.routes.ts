import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../../config/config.js";
import { requireAuth } from "../../http/auth.js";
import { suspendIdleTimeout } from "../../http/idle-timeout.js";
import {
  authErrors,
  binaryResponse,
  ErrorBody,
  errorResponses,
  jwtSecurity,
  PaginatedOf,
} from "../../http/openapi.js";
import type { AppError } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { releaseWhenWritten } from "../../shared/owned-buffers.js";
import { paginate, parsePageRequest } from "../../shared/pagination.js";
import {
  chunkParts,
  isFormBody,
  isRawBody,
  registerRawBodyParser,
  registerStreamedFormParser,
  uploadParts,
} from "./media.body.js";
import type { CallMeta } from "./media.context.js";
import {
  MediaChunkBody,
  MediaChunkQuery,
  MediaCreateBody,
  MediaIdParams,
  MediaListQuery,
  MediaSchema,
} from "./media.schemas.js";
import type { MediaService } from "./media.service.js";
import { chunkTooLarge, fileTooLarge } from "./upload-rules.js";

const uploadTypes = ["multipart/form-data", "application/x-www-form-urlencoded"];
const chunkTypes = ["application/octet-stream", ...uploadTypes];
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
 * Sends a download: headers, the streamed body, and the outcome recorded once the response ends.
 * It is complete when every byte was handed to the connection (whether the client read them is
 * unknown, hence the grace period of limited files): the response finished, or, with a
 * Content-Length, the body's bytes were all written before the connection closed. A client that
 * has its Content-Length may close before the body stream's own end. Shared with the recipient pages.
 * Buffers of `body` marked owned are freed once written: `body` must not keep them (ADR 0047).
 * A HEAD request gets the status and headers only, and never settles: it is not a download.
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
  if (reply.request.method === "HEAD") {
    // An empty stream keeps the Content-Length set here (Fastify's HEAD answer drains it).
    if (download.body instanceof Readable && !download.body.readableEnded) download.body.destroy();
    return reply.code(download.status).headers(download.headers).send(Readable.from([]));
  }
  const response = reply.raw;
  const length = download.headers["content-length"];
  const expected = length === undefined ? undefined : Number(length);
  let handed = 0;
  let finished = false;
  if (expected !== undefined) {
    // Listening once the body is piped leaves its flow to the pipe; each chunk is counted after
    // the pipe wrote it, and only while the connection could still take it.
    response.once("pipe", (source: NodeJS.ReadableStream) => {
      source.on("data", (chunk: Buffer) => {
        if (response.socket && !response.socket.destroyed) handed += chunk.length;
      });
    });
  }
  response.once("finish", () => {
    finished = true;
  });
  response.once("close", () => {
    void download.settle(finished || handed === expected);
  });
  // The decrypted pieces are freed as soon as the socket has written them (ADR 0047).
  releaseWhenWritten(response);
  return reply.code(download.status).headers(download.headers).send(download.body);
}

/**
 * Lets the routes registered on `app` (one plugin scope) take form-urlencoded uploads, whose `file`
 * field streams as its decoded bytes to the route's limit, as a multipart file part does.
 */
export function registerUploadParsers(app: FastifyInstance): void {
  registerStreamedFormParser(app);
}

/**
 * Refuses a multipart body that announces more than `max` bytes (a raw body, `rawMax`; a
 * form-urlencoded one, three times `max`, as percent-encoding triples a byte at most) before
 * reading any of it.
 */
function guardUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  max: number,
  tooLarge: AppError,
  rawMax = max,
): void {
  const declared = Number(request.headers["content-length"] ?? "0");
  if (
    (request.isMultipart() && declared > max) ||
    (isRawBody(request) && declared > rawMax) ||
    (isFormBody(request) && declared > 3 * max)
  ) {
    reply.header("connection", "close");
    throw tooLarge;
  }
}

/** Rethrows an upload error; an unread request body would otherwise be drained, so the client is told to stop. */
function onUploadError(request: FastifyRequest, reply: FastifyReply, error: unknown): never {
  if (!request.raw.complete) reply.header("connection", "close");
  throw error;
}

/**
 * Receives a new upload (a whole file or the first chunk) and answers 201 with the media. Used by
 * POST /v1/media/ and by the container push file route, whose scopes call `registerUploadParsers`.
 */
export async function receiveUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  media: MediaService,
  config: Config,
): Promise<FastifyReply> {
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
      uploadParts(request, {
        fileBytes: config.MAX_FILE_BYTES,
        fileTooLarge: () => fileTooLarge(config.MAX_FILE_BYTES),
        formBytes: config.MAX_FILE_BYTES,
        formTooLarge: () => fileTooLarge(config.MAX_FILE_BYTES),
      }),
      callMeta(request),
    );
    return reply.code(201).send(view);
  } catch (error) {
    return onUploadError(request, reply, error);
  }
}

/** /v1/media/ routes (the spec's Medias section; docs/media.md). */
export function mediaRoutes(media: MediaService, config: Config): RouteModule {
  return async (app) => {
    const tags = ["media"];
    const common = { config: { scope: "media" as const } };
    registerUploadParsers(app);
    registerRawBodyParser(app);

    app.post(
      "/v1/media/",
      {
        ...common,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "uploadMedia",
          tags,
          summary: "Upload a file, or the first chunk of a chunked upload, to a draft push request",
          description:
            "Multipart/form-data and form-urlencoded (the `file` field's percent-encoded bytes) both stream files of any size up to MAX_FILE_BYTES (default 10 GiB); multipart is a third of the size on the wire. For a chunked upload send `total_chunks` and `current_chunk` here and the other chunks by PUT /v1/media/{id}, in any order. `content_type` defaults to the file part's type, `name` to its file name.",
          security: jwtSecurity,
          consumes: uploadTypes,
          body: MediaCreateBody,
          response: { 201: MediaSchema, ...errorResponses(400, 404, 413, 415, 422), ...authErrors },
        },
      },
      async (request, reply) => receiveUpload(request, reply, media, config),
    );

    app.put(
      "/v1/media/:id/",
      {
        ...common,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "uploadMediaChunk",
          tags,
          summary: "Upload one chunk of a chunked upload (at most 4 MiB); re-sending a chunk replaces it",
          description:
            "Send the chunk either as the whole body (`Content-Type: application/octet-stream`, with `current_chunk` and optionally `fingerprint` in the query string; the cheapest for the server) or as a form (`multipart/form-data` or `application/x-www-form-urlencoded`, with the `MediaChunkInput` fields; the query string is then ignored). The media becomes `available` (with `sha256` and `file_checksum`) once every chunk is present. Answers 201 with the Media object.",
          security: jwtSecurity,
          consumes: chunkTypes,
          params: MediaIdParams,
          querystring: MediaChunkQuery,
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
            config.MAX_CHUNK_BYTES,
          );
          const { id } = request.params;
          const view = await media.putChunk(
            auth,
            id,
            chunkParts(request, {
              fileBytes: config.MAX_CHUNK_BYTES,
              fileTooLarge: () => chunkTooLarge(config.MAX_CHUNK_BYTES),
              formBytes: config.MAX_CHUNK_BYTES,
              formTooLarge: () => chunkTooLarge(config.MAX_CHUNK_BYTES),
            }),
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
          operationId: "listMedia",
          tags,
          summary: "List the account's media, newest first (filter with ?request=<id>)",
          security: jwtSecurity,
          querystring: MediaListQuery,
          response: { 200: PaginatedOf(MediaSchema), ...errorResponses(400, 404), ...authErrors },
        },
      },
      async (request) => {
        const { query } = request;
        const page = parsePageRequest(query);
        const { results, count } = await media.list(requireAuth(request), page, { request: query.request });
        return paginate(results, count, page, config.publicBaseUrl, "/v1/media/", query);
      },
    );

    app.get(
      "/v1/media/:id/",
      {
        ...common,
        schema: {
          operationId: "getMedia",
          tags,
          summary: "Read a media's information (not its content)",
          security: jwtSecurity,
          params: MediaIdParams,
          response: { 200: MediaSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => media.get(requireAuth(request), request.params.id),
    );

    app.get(
      "/v1/media/:id/download",
      {
        ...common,
        schema: {
          operationId: "downloadMedia",
          tags,
          summary: "Download the file's content (bytes whatever the Accept header says)",
          description:
            "Streams the decrypted content with Content-Length, Content-Type, Content-Disposition (attachment, original name), and ETag (the SHA-256). Single byte ranges (`Range: bytes=a-b`, with If-Range) answer 206. Files of pull requests can be downloaded once: a new download is sent whole and counted when its transfer ends, complete or cut; for DOWNLOAD_GRACE_SECONDS after that the same API key may resume it with Range (or, if the transfer was cut, fetch it whole again) without counting again, then the file is destroyed. A concurrent new download gets 409; later ones, and other API keys, 410. If stored data fails its integrity check the response is aborted (before the first byte: a 500 JSON error), never completed with wrong bytes. HEAD answers the same status and headers (Content-Length, ETag, Content-Range) without a body, and is never a download: nothing is claimed or counted.",
          security: jwtSecurity,
          params: MediaIdParams,
          response: {
            200: binaryResponse("The file content."),
            206: binaryResponse("The requested byte range."),
            ...errorResponses(404, 409, 410, 416),
            500: ErrorBody,
            ...authErrors,
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
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
          operationId: "deleteMedia",
          tags,
          summary: "Delete a media: its encrypted blobs and data key are destroyed",
          security: jwtSecurity,
          params: MediaIdParams,
          response: { 204: Type.Null({ description: "Deleted." }), ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await media.delete(requireAuth(request), request.params.id, callMeta(request));
        return reply.code(204).send(null);
      },
    );
  };
}
