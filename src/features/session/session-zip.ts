import type { FastifyBaseLogger, FastifyReply } from "fastify";
import type { SessionFeatureView } from "../containers/index.js";
import { streamZip } from "../media/index.js";

/** An opened download of one file (the media feature's Download). */
interface OpenedDownload {
  body: NodeJS.ReadableStream;
  settle(complete: boolean): Promise<void>;
}

/**
 * Streams every available file of a push feature as one zip named after the feature (the media
 * feature's `streamZip`: stored, decrypted on the fly, each file a download of its own). `done`
 * runs once the whole zip reached the connection.
 */
export function streamFeatureZip(
  reply: FastifyReply,
  opts: {
    feature: SessionFeatureView;
    logger: FastifyBaseLogger;
    open(mediaId: number): Promise<OpenedDownload>;
    done(): Promise<void>;
  },
): Promise<FastifyReply> {
  return streamZip(reply, {
    files: opts.feature.files,
    name: opts.feature.row.title,
    logger: opts.logger,
    open: opts.open,
    done: opts.done,
  });
}
