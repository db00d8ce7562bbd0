import type { CallMeta, MediaService } from "../media/index.js";
import type { PageCaller, RecipientMediaPort } from "./recipient.service.js";

function meta(caller: PageCaller): CallMeta {
  return {
    ip: caller.ip,
    method: caller.method,
    path: caller.path,
    contentType: caller.contentType ?? "",
    ...(caller.holdConnection ? { holdConnection: caller.holdConnection } : {}),
  };
}

/**
 * The media service seen through the recipient pages' port: recipient uploads, push downloads and
 * the chunk list that resumable uploads ask for.
 */
export function recipientMediaPort(media: MediaService): RecipientMediaPort {
  return {
    listRequestMedia: (requestId) => media.rowsOfRequest(requestId),
    receivedChunks: (mediaId) => media.receivedChunks(mediaId),
    async createUpload(requestId, parts, caller) {
      return (await media.recipientCreate(requestId, parts, meta(caller))).id;
    },
    async putChunk(requestId, mediaId, parts, caller) {
      await media.recipientPutChunk(requestId, mediaId, parts, meta(caller));
    },
    removeUpload: (requestId, mediaId, caller) => media.recipientRemove(requestId, mediaId, meta(caller)),
    openDownload: (requestId, mediaId, range, caller) =>
      media.recipientDownload(requestId, mediaId, { range }, meta(caller)),
  };
}
