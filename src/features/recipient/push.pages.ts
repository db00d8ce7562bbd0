import { Type } from "typebox";
import { errorResponses } from "../../http/openapi.js";
import type { Router } from "../../shared/feature.js";
import { sendDownload, streamZip } from "../media/index.js";
import { htmlResponse, pagePath, refusedDownloadResponse, refuseForeignDownload } from "./recipient-http.js";
import { pageCaller } from "./recipient-session.js";
import type { PageDeps } from "./request.pages.js";

const fileBytes = (description: string) => ({
  description,
  content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
});

/**
 * Downloads of a push request's files. A request with two-factor needs the two-factor session
 * first (without it: back to the page); a link that is not a push page answers the 404 page.
 */
export async function registerPushDownloads(app: Router, deps: PageDeps): Promise<void> {
  const { recipient, session } = deps;

  app.get(
    "/r/:identifier/files/:mediaId/download",
    {
      config: { public: true },
      schema: {
        operationId: "downloadRecipientFile",
        tags: ["recipient"],
        summary:
          "Download one file of a push request (needs the two-factor session when the request has two-factor)",
        params: Type.Object({ identifier: Type.String(), mediaId: Type.Integer({ minimum: 1 }) }),
        response: {
          200: fileBytes("The file's bytes."),
          206: fileBytes("A byte range of the file."),
          303: Type.Null({
            description:
              "Two-factor needed first, or the download was started by another site: back to the page.",
          }),
          403: refusedDownloadResponse,
          404: htmlResponse("Unknown link or file."),
        },
      },
    },
    async (request, reply) => {
      if (refuseForeignDownload(request, reply, pagePath(request.params.identifier))) return reply;
      const ctx = await session.load(request, reply);
      if (!ctx) return reply;
      const kind = recipient.pageKind(ctx, session.hasSession(request, ctx));
      if (kind === "tfa") return reply.redirect(pagePath(ctx.request.identifier), 303);
      if (kind !== "push") return session.notFoundPage(reply);
      const download = await recipient.media.openDownload(
        ctx.request.id,
        request.params.mediaId,
        request.headers.range,
        pageCaller(request),
      );
      return sendDownload(reply, download);
    },
  );

  app.get(
    "/r/:identifier/files/zip",
    {
      config: { public: true },
      schema: {
        operationId: "downloadRecipientZip",
        tags: ["recipient"],
        summary:
          "Download every file of a push request as one zip (stored, streamed; each file counts as a download of its own)",
        params: Type.Object({ identifier: Type.String() }),
        response: {
          200: {
            description: "The zip, with Content-Length.",
            content: { "application/zip": { schema: Type.String({ format: "binary" }) } },
          },
          303: Type.Null({
            description:
              "Two-factor needed first, or the download was started by another site: back to the page.",
          }),
          403: refusedDownloadResponse,
          404: htmlResponse("Unknown link."),
          410: errorResponses(410)[410]!,
        },
      },
    },
    async (request, reply) => {
      if (refuseForeignDownload(request, reply, pagePath(request.params.identifier))) return reply;
      const ctx = await session.load(request, reply);
      if (!ctx) return reply;
      const kind = recipient.pageKind(ctx, session.hasSession(request, ctx));
      if (kind === "tfa") return reply.redirect(pagePath(ctx.request.identifier), 303);
      if (kind !== "push") return session.notFoundPage(reply);
      const files = (await recipient.media.listRequestMedia(ctx.request.id)).filter(
        (m) => m.uploaded_by === "owner",
      );
      const caller = pageCaller(request);
      return streamZip(reply, {
        files,
        name: `Files from ${ctx.account.name}`,
        logger: request.log,
        open: (mediaId) => recipient.media.openDownload(ctx.request.id, mediaId, undefined, caller),
        done: async () => {},
      });
    },
  );
}
