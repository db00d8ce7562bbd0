import type { RawRequest } from "./core.js";
import { FerryError, FerryIntegrityError } from "./errors.js";
import { createSha256 } from "./hash.js";
import { ProgressMeter, type TransferProgress } from "./progress.js";

export interface DownloadOptions {
  onProgress?: ((progress: TransferProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Continue from `<dest>.part` with a Range request when it exists (default true). */
  resume?: boolean | undefined;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  /** SHA-256 hex of the file (checked against the server's ETag when it sent one). */
  sha256: string;
  /** Bytes that were already on disk from an interrupted download. */
  resumedBytes: number;
}

/** What downloadToFile needs from the client. */
export interface DownloadHost {
  send(req: RawRequest): Promise<Response>;
}

/**
 * Streams `path` (a download operation's path) to the file `dest` through `<dest>.part`: an
 * interrupted download is resumed with `Range: bytes=<have>-` (and If-Range on the ETag), the
 * content is checked against the ETag (Ferry's ETag is the SHA-256), then renamed into place.
 */
export async function downloadToFile(
  host: DownloadHost,
  path: string,
  dest: string,
  opts: DownloadOptions = {},
): Promise<DownloadResult> {
  const fs = await import("node:fs/promises");
  const { createReadStream } = await import("node:fs");
  const partPath = `${dest}.part`;
  const etagPath = `${dest}.part.etag`;
  let have = 0;
  let etag: string | undefined;
  if (opts.resume !== false) {
    have = await fs.stat(partPath).then(
      (s) => s.size,
      () => 0,
    );
    etag = await fs.readFile(etagPath, "utf8").then(
      (t) => t.trim() || undefined,
      () => undefined,
    );
  }
  const headers: Record<string, string> = {};
  if (have > 0) {
    headers.range = `bytes=${have}-`;
    if (etag) headers["if-range"] = etag;
  }
  const res = await host.send({ method: "GET", path, headers, signal: opts.signal, operation: "download" });
  if (res.status >= 300) throw new FerryError(`The download answered ${res.status}.`);
  const partial = res.status === 206;
  if (!partial) have = 0;
  const newTag = res.headers.get("etag") ?? undefined;
  if (newTag) await fs.writeFile(etagPath, newTag);
  const length = Number(res.headers.get("content-length") ?? Number.NaN);
  const total = Number.isNaN(length) ? undefined : have + length;
  const hash = await createSha256();
  if (have > 0) {
    for await (const piece of createReadStream(partPath, { end: have - 1 })) hash.update(piece as Buffer);
  }
  const meter = new ProgressMeter(total, have);
  const out = await fs.open(partPath, have > 0 ? "r+" : "w");
  let written = have;
  try {
    if (!res.body) throw new FerryError("The download had no body.");
    for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
      await out.write(piece, 0, piece.length, written);
      written += piece.length;
      hash.update(piece);
      meter.add(piece.length);
      opts.onProgress?.(meter.snapshot());
    }
    await out.truncate(written);
  } finally {
    await out.close();
  }
  if (total !== undefined && written !== total) {
    throw new FerryError(`The download ended at ${written} of ${total} bytes; run it again to resume.`);
  }
  const sha256 = hash.hex();
  const expected = newTag?.replace(/^W\//, "").replace(/"/g, "");
  if (expected && /^[0-9a-f]{64}$/.test(expected) && expected !== sha256) {
    await fs.rm(partPath, { force: true });
    await fs.rm(etagPath, { force: true });
    throw new FerryIntegrityError(
      `The downloaded file's SHA-256 differs from the server's.`,
      expected,
      sha256,
    );
  }
  await fs.rename(partPath, dest);
  await fs.rm(etagPath, { force: true });
  return { path: dest, bytes: written, sha256, resumedBytes: partial ? have : 0 };
}
