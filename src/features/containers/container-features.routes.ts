import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../../config/config.js";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import {
  authErrors,
  binaryResponse,
  errorResponses,
  IdParams,
  jwtSecurity,
  NoContent,
  PageQuery,
} from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import {
  callMeta,
  MediaSchema,
  type MediaService,
  receiveUpload,
  registerUploadParsers,
  sendDownload,
} from "../media/index.js";
import {
  MediaTagInput,
  MediaTagSchema,
  Page,
  PullFeatureInput,
  PullFeatureSchema,
  PullFileSchema,
  PushFeatureInput,
  PushFeatureSchema,
  PushFileInput,
  PushPullFeatureInput,
  PushPullFeatureSchema,
} from "./containers.schemas.js";
import { type FeatureKind, type FeaturesService, KIND_PATHS } from "./features.service.js";

const checkedByService = () => () => true;
const config = { scope: "containers" as const };
const security = jwtSecurity;

const KIND_DOCS: Record<
  FeatureKind,
  {
    name: string;
    schema: typeof PullFeatureSchema | typeof PushFeatureSchema | typeof PushPullFeatureSchema;
    input: unknown;
  }
> = {
  pushpull: { name: "PushPullFeature", schema: PushPullFeatureSchema, input: PushPullFeatureInput },
  pull: { name: "PullFeature", schema: PullFeatureSchema, input: PullFeatureInput },
  push: { name: "PushFeature", schema: PushFeatureSchema, input: PushFeatureInput },
};

/**
 * Features of containers: pushpull (`/v1/module_container_pushpull/`), P2 pull
 * (`/v1/module_container_pull/`) and P2 push (`/v1/module_container_push/`), their files, media
 * tags, and the download aliases clients use.
 */
export function containerFeatureRoutes(deps: {
  features: FeaturesService;
  media: MediaService;
  config: Config;
}): RouteModule {
  const { features, media } = deps;
  return async (app) => {
    const tags = ["container features"];

    for (const kind of ["pushpull", "pull", "push"] as const) {
      const path = KIND_PATHS[kind];
      const { name, schema, input } = KIND_DOCS[kind];
      app.post(
        path,
        {
          config,
          validatorCompiler: checkedByService,
          schema: {
            operationId: `create${name}`,
            tags,
            summary: `Add a ${kind} feature to a container`,
            security,
            body: input as typeof PullFeatureInput,
            response: { 201: schema, ...errorResponses(400, 415, 422), ...authErrors },
          },
        },
        async (request, reply) =>
          reply
            .code(201)
            .send(await features.create(requireAuth(request), kind, await readFormLikeBody(request))),
      );
      app.get(
        path,
        {
          config,
          schema: {
            operationId: `list${name}s`,
            tags,
            summary: `List ${kind} features, oldest first`,
            security,
            querystring: Type.Object({
              ...PageQuery.properties,
              container: Type.Optional(Type.String({ description: "Only this container's features." })),
            }),
            response: { 200: Page(schema, `${name}Page`), ...errorResponses(400, 404), ...authErrors },
          },
        },
        async (request) => features.list(requireAuth(request), kind, request.query),
      );
      app.get(
        `${path}:id/`,
        {
          config,
          schema: {
            operationId: `get${name}`,
            tags,
            summary: `Read a ${kind} feature`,
            security,
            params: IdParams,
            response: { 200: schema, ...errorResponses(404), ...authErrors },
          },
        },
        async (request) => features.get(requireAuth(request), kind, request.params.id),
      );
      app.patch(
        `${path}:id/`,
        {
          config,
          validatorCompiler: checkedByService,
          schema: {
            operationId: `update${name}`,
            tags,
            summary: `Change a ${kind} feature (422 once it is complete or expired)`,
            security,
            params: IdParams,
            body: Type.Partial(input as typeof PullFeatureInput),
            response: { 200: schema, ...errorResponses(400, 404, 415, 422), ...authErrors },
          },
        },
        async (request) =>
          features.update(requireAuth(request), kind, request.params.id, await readFormLikeBody(request)),
      );
      app.delete(
        `${path}:id/`,
        {
          config,
          schema: {
            operationId: `delete${name}`,
            tags,
            summary: `Delete a ${kind} feature with its files`,
            security,
            params: IdParams,
            response: { 204: NoContent, ...errorResponses(404), ...authErrors },
          },
        },
        async (request, reply) => {
          await features.delete(requireAuth(request), kind, request.params.id);
          return reply.code(204).send(null);
        },
      );
    }

    app.get(
      "/v1/module_container_pull/pull/:id/pull_file/",
      {
        config,
        schema: {
          operationId: "listPullFiles",
          tags,
          summary: "The files recipients sent to a pull feature, as a bare list with absolute download URLs",
          security,
          params: IdParams,
          response: { 200: Type.Array(PullFileSchema), ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => features.pullFiles(requireAuth(request), request.params.id),
    );

    app.get(
      "/v1/module_container_pushpull/pushpullfeature/:id/media/",
      {
        config,
        schema: {
          operationId: "listFeatureMedia",
          tags,
          summary: "The files of a feature of any kind (Media objects)",
          security,
          params: IdParams,
          response: { 200: Type.Array(MediaSchema), ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => features.files(requireAuth(request), request.params.id),
    );

    // Push files take the same bodies as POST /v1/media/, form-urlencoded included.
    await app.register(async (uploads) => {
      registerUploadParsers(uploads);
      uploads.post(
        "/v1/module_container_push/pushfile/",
        {
          config,
          validatorCompiler: checkedByService,
          schema: {
            operationId: "uploadPushFile",
            tags,
            summary:
              "Upload a file (or its first chunk) to a push feature; further chunks by PUT /v1/media/{id}",
            description:
              "multipart/form-data (or form-urlencoded, to the same MAX_FILE_BYTES) with `push` (the feature id), `file`, and optionally `name`, `total_chunks`, `current_chunk`. The file becomes a media of the container (`request` is the container id) and of the feature.",
            security,
            consumes: ["multipart/form-data", "application/x-www-form-urlencoded"],
            body: PushFileInput,
            response: { 201: MediaSchema, ...errorResponses(400, 404, 413, 415, 422), ...authErrors },
          },
        },
        async (request, reply) => receiveUpload(request, reply, media, deps.config),
      );
    });

    app.post(
      "/v1/module_container_pushpull/mediatag/",
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "createMediaTag",
          tags,
          summary: "Name a file a pushpull feature expects (422 once the feature is complete or expired)",
          security,
          body: MediaTagInput,
          response: { 201: MediaTagSchema, ...errorResponses(400, 415, 422), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await features.createTag(requireAuth(request), await readFormLikeBody(request))),
    );
    app.patch(
      "/v1/module_container_pushpull/mediatag/:id/",
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "renameMediaTag",
          tags,
          summary: "Rename a media tag",
          security,
          params: IdParams,
          body: Type.Object({ name: Type.String() }),
          response: { 200: MediaTagSchema, ...errorResponses(400, 404, 415, 422), ...authErrors },
        },
      },
      async (request) =>
        features.renameTag(requireAuth(request), request.params.id, await readFormLikeBody(request)),
    );
    app.delete(
      "/v1/module_container_pushpull/mediatag/:id/",
      {
        config,
        schema: {
          operationId: "deleteMediaTag",
          tags,
          summary: "Delete a media tag",
          security,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404, 422), ...authErrors },
        },
      },
      async (request, reply) => {
        await features.deleteTag(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    const download = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const file = await media.download(
        requireAuth(request),
        request.params.id,
        { range: request.headers.range, ifRange: request.headers["if-range"] as string | undefined },
        callMeta(request),
      );
      return sendDownload(reply, file);
    };
    const downloadAliases = [
      ["/v1/module_container_pushpull/media/:id/download/", "downloadFeatureMedia"],
      [
        "/v1/module_container_pushpull/mediadatacollection/:id/download/",
        "downloadFeatureMediaCollectionAlias",
      ],
      ["/v1/module_container_pushpull/:id/download/", "downloadFeatureMediaAlias"],
    ] as const;
    for (const [url, operationId] of downloadAliases) {
      app.get(
        url,
        {
          config,
          schema: {
            operationId,
            hide: operationId !== "downloadFeatureMedia",
            tags,
            summary: "Download a file of a container (the raw bytes whatever the Accept header says)",
            description:
              "The same answer as GET /v1/media/{id}/download, for the paths container clients use.",
            security,
            params: IdParams,
            response: {
              200: binaryResponse("The file content."),
              206: binaryResponse("The requested byte range."),
              ...errorResponses(404, 409, 410, 416),
              ...authErrors,
            },
          },
        },
        download,
      );
    }
  };
}
