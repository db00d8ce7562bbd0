import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { Type } from "typebox";
import type { Config } from "../../config/config.js";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, INTEGER_ID, jwtSecurity } from "../../http/openapi.js";
import { notFound, unprocessable } from "../../shared/errors.js";
import type { RouteModule } from "../../shared/feature.js";
import { parseId } from "../../shared/ids.js";
import type { LifecycleService } from "../lifecycle/index.js";
import { RequestSchema, type RequestsService } from "../requests/index.js";
import type { RecipientService, UploadPiece } from "./recipient.service.js";

/** Largest generated file of the complete helper. */
const MAX_GENERATED_BYTES = 10 * 1024 * 1024;

const RequestIdParams = Type.Object({ id: Type.String({ description: INTEGER_ID }) });

const GeneratedFile = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, examples: ["statement.pdf"] }),
  content_type: Type.Optional(Type.String({ maxLength: 200, examples: ["application/pdf"] })),
  content: Type.Optional(Type.String({ maxLength: 1_000_000, description: "Text content of the file." })),
  bytes: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_GENERATED_BYTES,
      description:
        "Size of deterministic pseudo-random content (used when `content` is absent; default 1024).",
    }),
  ),
});

const CompleteBody = Type.Object({
  receiver_message: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
  files: Type.Optional(Type.Array(GeneratedFile, { maxItems: 10 })),
});

/** Deterministic bytes for a generated file: SHA-256 counter stream seeded by the name. */
function generatedBytes(name: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  let offset = 0;
  for (let i = 0; offset < size; i++) {
    const block = createHash("sha256").update(`${name}:${i}`).digest();
    offset += block.copy(out, offset);
  }
  return out;
}

async function* filePieces(name: string, contentType: string, body: Buffer): AsyncGenerator<UploadPiece> {
  yield { kind: "field", name: "name", value: name };
  yield { kind: "field", name: "content_type", value: contentType };
  yield { kind: "file", field: "file", stream: Readable.from([body]), filename: name, mimetype: contentType };
}

/**
 * Sandbox helpers (sandbox deployments only, 404 in live): expire a push request or complete a
 * pull request as if its recipient had uploaded files and submitted, so integrators can drive
 * callbacks from automated tests without a browser.
 */
export function sandboxRecipientRoutes(deps: {
  config: Config;
  lifecycle: LifecycleService;
  requests: RequestsService;
  recipient: RecipientService;
}): RouteModule {
  return async (app) => {
    const { config, lifecycle, recipient, requests } = deps;

    app.post(
      "/v1/sandbox/request/:id/expire/",
      {
        config: { scope: "sandbox" },
        schema: {
          operationId: "sandboxExpireRequest",
          tags: ["sandbox"],
          summary: "Expire a sent push request now: files destroyed, request_complete sent (sandbox only)",
          security: jwtSecurity,
          params: RequestIdParams,
          response: { 200: RequestSchema, ...authErrors, ...errorResponses(404, 422) },
        },
      },
      async (request) => {
        if (!config.isSandbox) throw notFound("Sandbox helper");
        const auth = requireAuth(request);
        const id = parseId(request.params.id);
        if (id === undefined) throw notFound("Request");
        return lifecycle.expirePushRequestNow(auth.accountId, id);
      },
    );

    app.post(
      "/v1/sandbox/request/:id/complete/",
      {
        config: { scope: "sandbox" },
        bodyLimit: 12 * 1024 * 1024,
        schema: {
          operationId: "sandboxCompleteRequest",
          tags: ["sandbox"],
          summary:
            "Complete an open pull request as its recipient would, with optional generated files (sandbox only)",
          security: jwtSecurity,
          params: RequestIdParams,
          body: CompleteBody,
          response: { 200: RequestSchema, ...authErrors, ...errorResponses(400, 404, 413, 422) },
        },
      },
      async (request) => {
        if (!config.isSandbox) throw notFound("Sandbox helper");
        const auth = requireAuth(request);
        const id = parseId(request.params.id);
        if (id === undefined) throw notFound("Request");
        const body = request.body;
        // 404 for absent or foreign ids, before any file is generated.
        const view = await requests.getRequestView(undefined, auth.accountId, id);
        if (view.type !== "pull") throw unprocessable("Only a pull request is completed by its recipient.");
        if (view.is_draft || view.complete) throw unprocessable("The request is not open.");
        const media = recipient.media;
        for (const file of body.files ?? []) {
          const bytes =
            file.content !== undefined
              ? Buffer.from(file.content, "utf8")
              : generatedBytes(file.name, file.bytes ?? 1024);
          await media.createUpload(
            id,
            filePieces(file.name, file.content_type ?? "application/octet-stream", bytes),
            {
              ip: request.ip,
              method: request.method,
              path: request.url.split("?")[0] ?? "",
            },
          );
        }
        return lifecycle.completePullRequest(auth.accountId, id, {
          receiverMessage: body.receiver_message ?? null,
        });
      },
    );
  };
}
