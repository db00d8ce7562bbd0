import { createRequire } from "node:module";
import { PassThrough, Readable } from "node:stream";
import type { FastifyBaseLogger, FastifyReply } from "fastify";
import { AppError } from "../../shared/errors.js";
import type { MediaRow } from "./media.repository.js";
import { sendDownload } from "./media.routes.js";

/** An opened download of one file (the media feature's Download). */
interface OpenedDownload {
  body: NodeJS.ReadableStream;
  settle(complete: boolean): Promise<void>;
}

/** `name`, or `name (2).ext` when the zip already holds that name. */
function uniqueName(name: string, taken: Set<string>): string {
  const safe = name.replace(/[\\/]/g, "_").replace(/^\.+/, "_") || "file";
  let candidate = safe;
  const dot = safe.lastIndexOf(".");
  const stem = dot > 0 ? safe.slice(0, dot) : safe;
  const ext = dot > 0 ? safe.slice(dot) : "";
  for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}

/**
 * Streams every file of `files` that can still be downloaded as one zip named `<name>.zip`: stored (the files are sent as they
 * are, nothing is recompressed), each file opened only when the zip reaches it and decrypted on the
 * fly, nothing written to disk. Content-Length is known before the first byte. Each file counts as
 * a download of its own (ABB-0010, download limits); they settle as complete only when the whole
 * zip reached the connection, and `done` runs then. A file that can no longer be downloaded cuts
 * the response short (the browser reports a failed download). HEAD answers the headers only.
 */
export async function streamZip(
  reply: FastifyReply,
  opts: {
    files: MediaRow[];
    /** The zip's name without `.zip` (the feature's title, say). */
    name: string;
    logger: FastifyBaseLogger;
    open(mediaId: number): Promise<OpenedDownload>;
    done(): Promise<void>;
  },
): Promise<FastifyReply> {
  const files = opts.files.filter(
    (m) =>
      m.state === "available" &&
      (m.max_allowed_times_downloaded === null || m.times_downloaded < m.max_allowed_times_downloaded),
  );
  if (files.length === 0) throw new AppError("GONE", "No file can be downloaded any more.");
  // Loaded with the first zip download.
  const { ZipFile } = createRequire(import.meta.url)("yazl") as typeof import("yazl");
  const zip = new ZipFile();
  // HEAD: the zip's size and headers only. No file is opened, so nothing is claimed or counted
  // (the entries' sizes are known, so yazl computes the total without reading any).
  const headOnly = reply.request.method === "HEAD";
  const opened: OpenedDownload[] = [];
  const taken = new Set<string>();
  for (const file of files) {
    zip.addReadStreamLazy(
      uniqueName(file.name, taken),
      { compress: false, size: Number(file.bytes), mtime: new Date(file.created) },
      (cb) => {
        if (headOnly) return;
        opts.open(file.id).then(
          (download) => {
            opened.push(download);
            cb(null, download.body);
          },
          (err: unknown) => cb(err, undefined as unknown as NodeJS.ReadableStream),
        );
      },
    );
  }
  // yazl passes the total size to this callback (its type declarations omit the argument).
  const end = zip.end.bind(zip) as unknown as (options: undefined, sized: (size: number) => void) => void;
  const size = await new Promise<number>((resolve) => end(undefined, resolve));
  const title = opts.name.trim() || "files";
  const zipName = `${title.replace(/[^\p{L}\p{N} ._-]/gu, "_").slice(0, 100)}.zip`;
  const headers: Record<string, string> = {
    "content-type": "application/zip",
    "content-disposition": `attachment; filename="${zipName.replace(/[^\x20-\x7e]/g, "_").replace(/"/g, "_")}"; filename*=UTF-8''${encodeURIComponent(zipName)}`,
    "cache-control": "private, no-store",
  };
  if (size >= 0) headers["content-length"] = String(size);
  if (headOnly)
    return sendDownload(reply, { status: 200, headers, body: Readable.from([]), settle: async () => {} });
  const body = new PassThrough();
  zip.outputStream.pipe(body);
  zip.on("error", (err: unknown) => {
    opts.logger.warn({ err }, "zip of files cut short");
    body.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  return sendDownload(reply, {
    status: 200,
    headers,
    body: body as Readable,
    async settle(complete) {
      for (const download of opened) await download.settle(complete);
      if (complete) await opts.done();
    },
  });
}
