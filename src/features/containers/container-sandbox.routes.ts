import { Type } from "typebox";
import type { Config } from "../../config/config.js";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import { authErrors, errorResponses, IdParams, jwtSecurity } from "../../http/openapi.js";
import { notFound } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { callMeta } from "../media/index.js";
import type { ContainerSandbox } from "./container-sandbox.service.js";
import {
  ContainerSchema,
  PullFeatureSchema,
  PushFeatureSchema,
  PushPullFeatureSchema,
  ReplySchema,
  SandboxFilesInput,
} from "./containers.schemas.js";

/** The sandbox helpers of containers (404 on a live deployment). */
export function containerSandboxRoutes(sandbox: ContainerSandbox, config: Config): RouteModule {
  return async (app) => {
    const tags = ["sandbox"];
    const common = { config: { scope: "sandbox" as const }, validatorCompiler: () => () => true };
    const sandboxOnly = () => {
      if (!config.isSandbox) throw notFound("Sandbox helper");
    };

    app.post(
      "/v1/sandbox/container/:id/open/",
      {
        ...common,
        schema: {
          operationId: "sandboxOpenContainerSession",
          tags,
          summary: "Open a recipient's session as they would (session_opened; sandbox only)",
          description:
            "Body: optional `recipient_item` (default: the first notified item). The container must have been sent. The first open of each item sends `session_opened`.",
          security: jwtSecurity,
          params: IdParams,
          body: Type.Object({ recipient_item: Type.Optional(Type.Union([Type.Integer(), Type.String()])) }),
          response: { 200: ContainerSchema, ...errorResponses(400, 404, 422), ...authErrors },
        },
      },
      async (request) => {
        sandboxOnly();
        return sandbox.open(
          requireAuth(request),
          request.params.id,
          await readFormLikeBody(request),
          callMeta(request),
        );
      },
    );

    app.post(
      "/v1/sandbox/container/:id/reply/",
      {
        ...common,
        schema: {
          operationId: "sandboxReplyInContainerChat",
          tags,
          summary: "Write a chat reply as a recipient would (message_reply; sandbox only)",
          security: jwtSecurity,
          params: IdParams,
          body: Type.Object({ recipient: Type.Union([Type.Integer(), Type.String()]), body: Type.String() }),
          response: { 201: ReplySchema, ...errorResponses(400, 404, 422), ...authErrors },
        },
      },
      async (request, reply) => {
        sandboxOnly();
        const view = await sandbox.reply(
          requireAuth(request),
          request.params.id,
          await readFormLikeBody(request),
          callMeta(request),
        );
        return reply.code(201).send(view);
      },
    );

    app.post(
      "/v1/sandbox/feature/:id/complete/",
      {
        ...common,
        bodyLimit: 2 * 1024 * 1024,
        schema: {
          operationId: "sandboxCompleteFeature",
          tags,
          summary:
            "Complete a feature as its recipient would: a pull receives files and is submitted, a push is downloaded",
          description:
            "At most SANDBOX_MAX_GENERATED_BYTES (default 20 MiB) of files per call, all checked before any is stored and generated in pieces as they are stored. The container must have been sent.",
          security: jwtSecurity,
          params: IdParams,
          body: SandboxFilesInput,
          response: {
            200: Type.Union([PushPullFeatureSchema, PullFeatureSchema, PushFeatureSchema]),
            ...errorResponses(400, 404, 413, 422),
            ...authErrors,
          },
        },
      },
      async (request) => {
        sandboxOnly();
        return sandbox.completeFeature(
          requireAuth(request),
          request.params.id,
          await readFormLikeBody(request),
          callMeta(request),
        );
      },
    );
  };
}
