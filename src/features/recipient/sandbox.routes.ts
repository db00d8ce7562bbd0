import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { Type } from "typebox";
import type { Config } from "../../config/config.js";
import { requireAuth } from "../../http/auth.js";
import { authErrors, errorResponses, INTEGER_ID, jwtSecurity } from "../../http/openapi.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
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

/** Bytes generated per read: the event loop gets a turn between pieces as they are stored. */
const GENERATED_PIECE = 64 * 1024;

/**
 * Deterministic bytes for a generated file (SHA-256 counter stream seeded by the name), produced
 * in 64 KiB pieces as the store reads them, never as one buffer.
 */
function generatedStream(name: string, size: number): Readable {
  let block = 0;
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const piece = Buffer.alloc(Math.min(left, GENERATED_PIECE));
      for (let offset = 0; offset < piece.length; block++) {
        offset += createHash("sha256").update(`${name}:${block}`).digest().copy(piece, offset);
      }
      left -= piece.length;
      // Pushed on the next turn: a store that reads synchronously still lets requests through.
      setImmediate(() => this.push(piece));
    },
  });
}

async function* filePieces(name: string, contentType: string, body: Readable): AsyncGenerator<UploadPiece> {
  yield { kind: "field", name: "name", value: name };
  yield { kind: "field", name: "content_type", value: contentType };
  yield { kind: "file", field: "file", stream: body, filename: name, mimetype: contentType };
}

/**
 * The size of each file a completion sends, checked before any is stored (so a refused file never
 * leaves the ones before it stored): each within the request's and the deployment's file limit,
 * all together within SANDBOX_MAX_GENERATED_BYTES.
 */
function checkedSizes(
  files: { content?: string; bytes?: number }[],
  maxFileBytes: number,
  maxTotalBytes: number,
): number[] {
  let total = 0;
  const problems: Record<string, string[]> = {};
  const sizes = files.map((file, i) => {
    const size = file.content !== undefined ? Buffer.byteLength(file.content, "utf8") : (file.bytes ?? 1024);
    if (size > maxFileBytes)
      problems[`files.${i}`] = [`The file is larger than the request's limit of ${maxFileBytes} bytes.`];
    total += size;
    return size;
  });
  if (total > maxTotalBytes)
    problems.files = [
      `At most ${maxTotalBytes} bytes of files per call (SANDBOX_MAX_GENERATED_BYTES); these add up to ${total}.`,
    ];
  if (Object.keys(problems).length) throw new ValidationError(problems);
  return sizes;
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
        const files = body.files ?? [];
        const maxFileBytes = Math.min(config.MAX_FILE_BYTES, view.max_file_bytes || Number.MAX_SAFE_INTEGER);
        const sizes = checkedSizes(files, maxFileBytes, config.SANDBOX_MAX_GENERATED_BYTES);
        for (const [i, file] of files.entries()) {
          const stream =
            file.content !== undefined
              ? Readable.from([Buffer.from(file.content, "utf8")], { objectMode: false })
              : generatedStream(file.name, sizes[i]!);
          await media.createUpload(
            id,
            filePieces(file.name, file.content_type ?? "application/octet-stream", stream),
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
