import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { errorResponses } from "../../http/openapi.js";
import { AppError } from "../../shared/errors.js";
import type { Router } from "../../shared/feature.js";
import { longCache } from "../../web/security-headers.js";
import type { SessionFeatureView } from "../containers/index.js";
import { type CallMeta, type MediaService, registerRawBodyParser, sendDownload } from "../media/index.js";
import {
  CHUNK_BODY_LIMIT,
  ChunkBodies,
  ChunkBody,
  htmlResponse,
  pageCaller,
  presentUpload,
  RawChunkQuery,
  refusedDownloadResponse,
  refuseForeignDownload,
  UploadFile,
  UploadList,
  uploadPieces,
} from "../recipient/index.js";
import { actionSource, type SessionPage, type SessionPages, sessionBase } from "./session.context.js";
import { uploadRulesOf } from "./session.render.js";
import { streamFeatureZip } from "./session-zip.js";

const tags = ["session"];
const FeatureParams = Type.Object({ token: Type.String(), featureId: Type.Integer({ minimum: 1 }) });
const FileParams = Type.Object({
  token: Type.String(),
  featureId: Type.Integer({ minimum: 1 }),
  mediaId: Type.Integer({ minimum: 1 }),
});
const fileBytes = (description: string, type = "application/octet-stream") => ({
  description,
  content: { [type]: { schema: Type.String({ format: "binary" }) } },
});
const jsonErrors = errorResponses(400, 403, 404, 413, 422, 429);

/** A path id of an upload route (their validator is off, so params arrive as text); 404 when malformed. */
function positiveId(raw: string): number {
  const n = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(n) || n < 1)
    throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
  return n;
}

function meta(request: FastifyRequest): CallMeta {
  const caller = pageCaller(request);
  return {
    ip: caller.ip,
    method: caller.method,
    path: caller.path,
    contentType: caller.contentType ?? "",
    ...(caller.holdConnection ? { holdConnection: caller.holdConnection } : {}),
  };
}

/**
 * Files of a session: downloads of push features (one file, or all of a feature as one zip), the
 * upload endpoints of pull features the page's uploader uses (authorised by the link, the code
 * session and the X-CSRF-Token header), and the branding assets.
 */
export async function registerSessionFiles(
  app: Router,
  deps: { kit: SessionPages; media: MediaService },
): Promise<void> {
  const { kit, media } = deps;
  const { sessions, config } = kit.deps;

  /** A push feature the session shows, for a download; sends the 404 page or redirects otherwise. */
  const downloadable = async (
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    featureId: number,
  ): Promise<{ page: SessionPage; feature: SessionFeatureView } | undefined> => {
    if (refuseForeignDownload(request, reply, sessionBase(token))) return undefined;
    const page = await kit.load(request, reply, token);
    if (!page) return undefined;
    if (!kit.unlocked(request, page)) {
      reply.redirect(page.base, 303);
      return undefined;
    }
    const feature = await sessions.feature(page.session, featureId);
    if (feature?.row.direction !== "push") {
      kit.notFoundPage(reply);
      return undefined;
    }
    return { page, feature };
  };

  app.get(
    "/s/:token/features/:featureId/files/:mediaId/download",
    {
      config: { public: true },
      schema: {
        operationId: "downloadSessionFile",
        tags,
        summary:
          "Download one file of a push feature (counted; the feature completes once every file was downloaded)",
        params: FileParams,
        response: {
          200: fileBytes("The file's bytes."),
          206: fileBytes("A byte range of the file."),
          303: Type.Null({
            description:
              "The code is needed first, or the download was started by another site: back to the session.",
          }),
          403: refusedDownloadResponse,
          404: htmlResponse("Unknown link or file."),
          410: htmlResponse("Expired, or downloaded as often as allowed."),
        },
      },
    },
    async (request, reply) => {
      const { token, featureId, mediaId } = request.params;
      const found = await downloadable(request, reply, token, featureId);
      if (!found) return reply;
      const { page } = found;
      const download = await media.recipientDownload(
        page.session.container.id,
        mediaId,
        { range: request.headers.range },
        meta(request),
        { featureId, recipientId: page.session.recipient.id },
      );
      return sendDownload(reply, {
        ...download,
        async settle(complete) {
          await download.settle(complete);
          if (complete) await sessions.downloaded(page.session, featureId, actionSource(pageCaller(request)));
        },
      });
    },
  );

  app.get(
    "/s/:token/features/:featureId/download.zip",
    {
      config: { public: true },
      schema: {
        operationId: "downloadSessionFeatureZip",
        tags,
        summary:
          "Download every file of a push feature as one zip, streamed (each file counted as downloaded)",
        params: FeatureParams,
        response: {
          200: fileBytes("The zip (files stored, not recompressed).", "application/zip"),
          303: Type.Null({
            description:
              "The code is needed first, or the download was started by another site: back to the session.",
          }),
          403: refusedDownloadResponse,
          404: htmlResponse("Unknown link or feature."),
          410: htmlResponse("No file is available any more."),
        },
      },
    },
    async (request, reply) => {
      const { token, featureId } = request.params;
      const found = await downloadable(request, reply, token, featureId);
      if (!found) return reply;
      const { page, feature } = found;
      return streamFeatureZip(reply, {
        feature,
        logger: request.log,
        open: (mediaId) =>
          media.recipientDownload(page.session.container.id, mediaId, {}, meta(request), {
            featureId,
            recipientId: page.session.recipient.id,
          }),
        done: () => sessions.downloaded(page.session, featureId, actionSource(pageCaller(request))),
      });
    },
  );

  /** The pull feature of an upload call: session unlocked, CSRF header valid, feature open. */
  const uploadFeature = async (
    request: FastifyRequest,
    token: string,
    featureId: number,
  ): Promise<{ page: SessionPage; feature: SessionFeatureView }> => {
    const page = await kit.resolve(request, token);
    if (!page) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    const header = request.headers["x-csrf-token"];
    kit.checkCsrf(request, page, typeof header === "string" ? header : undefined);
    if (!kit.unlocked(request, page)) throw new AppError("NOT_AUTHORIZED", "Enter the code first.");
    const feature = await sessions.feature(page.session, featureId);
    if (feature?.row.direction !== "pull") throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    if (feature.state !== "pending")
      throw new AppError("UNPROCESSABLE_ENTITY", "This request no longer accepts files.");
    return { page, feature };
  };
  const limits = { maxFile: config.MAX_FILE_BYTES, maxChunk: config.MAX_CHUNK_BYTES };

  /** The upload state of one of this recipient's files of a feature. */
  const uploadState = async (page: SessionPage, featureId: number, mediaId: number) => {
    const feature = await sessions.feature(page.session, featureId);
    const row = feature?.files.find((m) => m.id === mediaId);
    if (!row) throw new AppError("RESOURCE_NOT_FOUND", "Not found.");
    return presentUpload(row, await media.receivedChunks(row.id));
  };

  app.get(
    "/s/:token/features/:featureId/uploads",
    {
      config: { public: true },
      schema: {
        operationId: "listSessionUploads",
        tags,
        summary: "This recipient's files of a pull feature, with the chunks the server holds (resume state)",
        params: FeatureParams,
        response: { 200: UploadList, ...jsonErrors },
      },
    },
    async (request) => {
      const { feature } = await uploadFeature(request, request.params.token, request.params.featureId);
      const files = [];
      for (const row of feature.files) files.push(presentUpload(row, await media.receivedChunks(row.id)));
      return { chunk_bytes: uploadRulesOf(feature, limits).chunkBytes, files };
    },
  );

  app.post(
    "/s/:token/features/:featureId/uploads",
    {
      config: { public: true },
      bodyLimit: CHUNK_BODY_LIMIT,
      validatorCompiler: () => () => true,
      schema: {
        operationId: "startSessionUpload",
        tags,
        summary: "Start an upload to a pull feature with one chunk (multipart; header X-CSRF-Token)",
        consumes: ["multipart/form-data"],
        params: Type.Object({ token: Type.String(), featureId: Type.String() }),
        body: ChunkBody,
        response: { 201: UploadFile, ...jsonErrors },
      },
    },
    async (request, reply) => {
      const featureId = positiveId(request.params.featureId);
      const { page, feature } = await uploadFeature(request, request.params.token, featureId);
      const pieces = uploadPieces(request, uploadRulesOf(feature, limits), true);
      const view = await media.recipientCreate(page.session.container.id, pieces, meta(request), {
        featureId,
        recipientId: page.session.recipient.id,
      });
      return reply.code(201).send(await uploadState(page, featureId, view.id));
    },
  );

  // Its own scope: only this route takes application/octet-stream bodies (ADR 0041).
  await app.register(async (scope: Router) => {
    registerRawBodyParser(scope);
    scope.put(
      "/s/:token/features/:featureId/uploads/:mediaId",
      {
        config: { public: true },
        bodyLimit: CHUNK_BODY_LIMIT,
        validatorCompiler: () => () => true,
        schema: {
          operationId: "putSessionUploadChunk",
          tags,
          summary:
            "Send (or re-send) one chunk of an upload to a pull feature (the raw body with ?current_chunk=, or multipart; header X-CSRF-Token)",
          consumes: ["application/octet-stream", "multipart/form-data"],
          params: Type.Object({ token: Type.String(), featureId: Type.String(), mediaId: Type.String() }),
          querystring: RawChunkQuery,
          body: ChunkBodies,
          response: { 200: UploadFile, ...jsonErrors },
        },
      },
      async (request) => {
        const featureId = positiveId(request.params.featureId);
        const mediaId = positiveId(request.params.mediaId);
        const { page, feature } = await uploadFeature(request, request.params.token, featureId);
        const pieces = uploadPieces(request, uploadRulesOf(feature, limits), false);
        await media.recipientPutChunk(page.session.container.id, mediaId, pieces, meta(request), {
          featureId,
          recipientId: page.session.recipient.id,
        });
        return uploadState(page, featureId, mediaId);
      },
    );
  });

  app.delete(
    "/s/:token/features/:featureId/uploads/:mediaId",
    {
      config: { public: true },
      schema: {
        operationId: "deleteSessionUpload",
        tags,
        summary:
          "Remove one of this recipient's files of a pull feature before Submit (its stored bytes are destroyed; header X-CSRF-Token)",
        params: Type.Object({ token: Type.String(), featureId: Type.String(), mediaId: Type.String() }),
        response: { 204: Type.Null({ description: "Removed." }), ...errorResponses(403, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const featureId = positiveId(request.params.featureId);
      const mediaId = positiveId(request.params.mediaId);
      const { page } = await uploadFeature(request, request.params.token, featureId);
      await media.recipientRemove(page.session.container.id, mediaId, meta(request), {
        featureId,
        recipientId: page.session.recipient.id,
      });
      return reply.code(204).send(null);
    },
  );

  // Branding assets and the requester's picture: served through the token, not page calls.
  const asset = async (request: FastifyRequest, token: string): Promise<SessionPage | undefined> => {
    const page = await kit.resolve(request, token);
    request.sessionPage = undefined;
    return page;
  };
  const TokenParams = Type.Object({ token: Type.String() });
  app.get(
    "/s/:token/brand.css",
    { config: { public: true }, schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const page = await asset(request, request.params.token);
      if (!page?.branding?.css)
        return reply.code(404).type("text/css; charset=utf-8").send("/* no branding */");
      return reply.type("text/css; charset=utf-8").send(page.branding.css);
    },
  );
  app.get(
    "/s/:token/logo",
    { config: { public: true }, schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const b = (await asset(request, request.params.token))?.branding;
      if (!b?.logo_base64 || !b.logo_content_type)
        return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      return reply.type(b.logo_content_type).send(Buffer.from(b.logo_base64, "base64"));
    },
  );
  app.get(
    "/s/:token/fonts/:name",
    {
      config: { public: true },
      schema: { hide: true, params: Type.Object({ token: Type.String(), name: Type.String() }) },
    },
    async (request, reply) => {
      const page = await asset(request, request.params.token);
      const font = page ? await kit.deps.branding.font(page.account.id, request.params.name) : undefined;
      if (!font) return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      longCache(reply);
      return reply.type(font.content_type).send(Buffer.from(font.data_base64, "base64"));
    },
  );
  app.get(
    "/s/:token/avatar",
    { config: { public: true }, schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const page = await asset(request, request.params.token);
      const avatar = page ? await kit.avatar(page) : undefined;
      if (!avatar) return reply.code(404).type("text/plain; charset=utf-8").send("Not found.");
      return reply.type(avatar.type).send(avatar.bytes);
    },
  );
}
