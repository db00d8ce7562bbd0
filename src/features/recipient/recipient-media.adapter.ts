import type { Database } from "../../db/database.js";
import { listParts } from "../media/media.repository.js";
import type { MediaService } from "../media/media.service.js";
import type { PageCaller, RecipientMediaPort } from "./recipient.service.js";

function meta(caller: PageCaller) {
  return {
    ip: caller.ip,
    method: caller.method,
    path: caller.path,
    contentType: caller.contentType ?? "",
    ...(caller.holdConnection ? { holdConnection: caller.holdConnection } : {}),
  };
}

/**
 * The media service (issue 4) seen through the recipient pages' port: recipient uploads, push
 * downloads and the chunk list that resumable uploads ask for. `listParts` is the media feature's
 * read of `media_parts` (the service has no method for it yet).
 */
export function recipientMediaPort(media: MediaService, database: Database): RecipientMediaPort {
  return {
    listRequestMedia: (requestId) => media.rowsOfRequest(requestId),
    async receivedChunks(mediaId) {
      return (await listParts(database.db, mediaId)).map((p) => Number(p.part_index));
    },
    async createUpload(requestId, parts, caller) {
      return (await media.recipientCreate(requestId, parts, meta(caller))).id;
    },
    async putChunk(requestId, mediaId, parts, caller) {
      await media.recipientPutChunk(requestId, mediaId, parts, meta(caller));
    },
    openDownload: (requestId, mediaId, range, caller) =>
      media.recipientDownload(requestId, mediaId, { range }, meta(caller)),
  };
}
