import type { FileHandle } from "node:fs/promises";
import type { RawRequest } from "./core.js";
import { FerryApiError, FerryError, FerryIntegrityError } from "./errors.js";
import { createSha256, type Sha256 } from "./hash.js";
import { ProgressMeter, type TransferProgress } from "./progress.js";

export interface DownloadOptions {
  onProgress?: ((progress: TransferProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Continue from `<dest>.part` with a Range request when it exists (default true). */
  resume?: boolean | undefined;
  /**
   * How many times a transfer cut midway (connection reset, short body, the server still busy
   * with the cut one) is resumed at once with `Range` from the bytes on disk (default 5).
   */
  retries?: number | undefined;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  /** SHA-256 hex of the file (checked against the server's ETag when it sent one). */
  sha256: string;
  /** Bytes that were already on disk from an interrupted download. */
  resumedBytes: number;
  /** Transfers cut midway and resumed with Range during this call. */
  resumes: number;
}

/** What downloadToFile needs from the client. */
export interface DownloadHost {
  send(req: RawRequest): Promise<Response>;
}

/** The local file system could not hold the download (no request was sent, or the bytes stay in `.part`). */
export class FerryDestinationError extends FerryError {
  override name = "FerryDestinationError";
}

/** A transfer that ended before its last byte (or before an answer): resumed with Range. */
class CutTransfer extends Error {
  constructor(
    message: string,
    options?: { cause?: unknown },
    readonly beforeAnswer = false,
  ) {
    super(message, options);
  }
}

const RESUME_BACKOFF_MS = [250, 500, 1000, 2000, 4000];

/**
 * A destination opened before any request is sent: its folders exist, and `<dest>.part` (where the
 * bytes go until they are complete and verified) is open for writing. A download-once file is
 * counted by the server as soon as it is sent, so a destination that cannot hold it must fail
 * here, while the server still keeps the file.
 */
export interface DownloadTarget {
  readonly path: string;
  /** Bytes held in `.part` from an earlier run. */
  readonly held: number;
  /** Closes the part file (removing it when it holds nothing). */
  close(): Promise<void>;
}

interface OpenTarget extends DownloadTarget {
  handle: FileHandle;
  partPath: string;
  etagPath: string;
  /** The ETag of the bytes in `.part`, from an earlier run. */
  etag: string | undefined;
}

function destinationError(action: string, path: string, e: unknown): FerryDestinationError {
  const code = (e as NodeJS.ErrnoException)?.code;
  return new FerryDestinationError(
    `Cannot ${action} ${path}${code ? ` (${code})` : ""}: ${(e as Error)?.message ?? String(e)}`,
    { cause: e },
  );
}

/**
 * Opens `dest` for a download (Node): creates its folders, refuses a folder as the file, and
 * creates (or, with `resume`, reopens) `<dest>.part` next to it. Throws FerryDestinationError.
 */
export async function openDownloadTarget(dest: string, resume = true): Promise<DownloadTarget> {
  const fs = await import("node:fs/promises");
  const { constants } = await import("node:fs");
  const { dirname, resolve } = await import("node:path");
  const path = resolve(dest);
  const existing = await fs.stat(path).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw new FerryDestinationError(`${path} is a folder: give the path of the file to write.`);
  }
  try {
    await fs.mkdir(dirname(path), { recursive: true });
  } catch (e) {
    throw destinationError("create the folder of", path, e);
  }
  const partPath = `${path}.part`;
  const etagPath = `${path}.part.etag`;
  let handle: FileHandle;
  try {
    handle = await fs.open(partPath, constants.O_RDWR | constants.O_CREAT);
  } catch (e) {
    throw destinationError("write", partPath, e);
  }
  let etag: string | undefined;
  let held = 0;
  try {
    if (resume) {
      held = (await handle.stat()).size;
      etag = await fs.readFile(etagPath, "utf8").then(
        (t) => t.trim() || undefined,
        () => undefined,
      );
    } else {
      await handle.truncate(0);
      await fs.rm(etagPath, { force: true });
    }
  } catch (e) {
    await handle.close();
    throw destinationError("write", partPath, e);
  }
  const target: OpenTarget = {
    path,
    held,
    handle,
    partPath,
    etagPath,
    etag,
    async close() {
      const size = await handle.stat().then(
        (s) => s.size,
        () => -1,
      );
      await handle.close().catch(() => {});
      if (size === 0) {
        await fs.rm(partPath, { force: true });
        await fs.rm(etagPath, { force: true });
      }
    },
  };
  return target;
}

/** The SHA-256 an ETag stands for (Ferry's ETag is the file's SHA-256), or undefined. */
function sha256OfEtag(etag: string | undefined): string | undefined {
  const value = etag?.replace(/^W\//, "").replace(/"/g, "");
  return value && /^[0-9a-f]{64}$/.test(value) ? value : undefined;
}

/** The first byte of a 206 answer's Content-Range (`bytes a-b/size`), or undefined. */
function rangeStart(res: Response): number | undefined {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(res.headers.get("content-range") ?? "");
  return m ? Number(m[1]) : undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Errors of a connection that broke (rather than a server that cannot be reached). */
const BROKEN_CONNECTION = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET"]);

/**
 * Whether a failed attempt is resumed: a body cut short, or a connection that broke before the
 * answer; once a transfer was cut, also an unreachable server (restarting), the server answering
 * 409 (it has not yet noticed the cut) or a 5xx.
 */
function resumable(e: unknown, afterCut: boolean): boolean {
  if (e instanceof CutTransfer) {
    if (!e.beforeAnswer || afterCut) return true;
    const cause = e.cause as NodeJS.ErrnoException | undefined;
    const code = cause?.code ?? (cause?.cause as NodeJS.ErrnoException | undefined)?.code;
    return code !== undefined && BROKEN_CONNECTION.has(code);
  }
  return e instanceof FerryApiError && afterCut && (e.status === 409 || e.status >= 500);
}

/**
 * Streams `path` (a download operation's path) to the file `dest`. The destination is opened
 * first (folders created, `<dest>.part` created next to it), so a destination that cannot be
 * written fails before the server counts a download. Bytes go to `<dest>.part`; a transfer cut
 * midway is resumed at once with `Range: bytes=<held>-` and `If-Range` on the ETag (within the
 * server's grace period the resume is the same download), up to `retries` times; a later call
 * resumes from `.part` too. The whole file is checked against the ETag's SHA-256, then renamed
 * into place.
 */
export async function downloadToFile(
  host: DownloadHost,
  path: string,
  dest: string,
  opts: DownloadOptions = {},
): Promise<DownloadResult> {
  const target = (await openDownloadTarget(dest, opts.resume !== false)) as OpenTarget;
  try {
    return await downloadInto(host, path, target, opts);
  } finally {
    await target.close();
  }
}

/** Downloads into a target opened by openDownloadTarget (which the caller closes). */
export async function downloadInto(
  host: DownloadHost,
  path: string,
  opened: DownloadTarget,
  opts: DownloadOptions = {},
): Promise<DownloadResult> {
  const target = opened as OpenTarget;
  const fs = await import("node:fs/promises");
  const retries = opts.retries ?? 5;
  const state: TransferState = {
    written: target.held,
    total: undefined,
    etag: target.etag,
    hash: await createSha256(),
  };
  if (state.written > 0) {
    const held = target.handle.createReadStream({ start: 0, end: state.written - 1, autoClose: false });
    for await (const piece of held) state.hash.update(piece as Buffer);
  }
  const resumedBytes = state.written;
  const meter = { current: undefined as ProgressMeter | undefined };
  let resumes = 0;
  let rangeRefused = false;
  // Bytes from an earlier run that already make the whole file need no request.
  let digest: string | undefined;
  if (state.written > 0 && sha256OfEtag(state.etag) === state.hash.copy().hex()) digest = state.hash.hex();
  while (digest === undefined) {
    try {
      await transfer(host, path, target, state, opts, meter);
      if (state.total !== undefined && state.written < state.total) throw new CutTransfer("short body");
      digest = state.hash.hex();
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? e;
      if (e instanceof FerryApiError && e.status === 416 && state.written > 0 && !rangeRefused) {
        // The bytes on disk are not a prefix the server can continue: start over, once.
        rangeRefused = true;
        state.written = 0;
        state.hash = await createSha256();
        await target.handle.truncate(0);
        continue;
      }
      if (!resumable(e, resumes > 0) || resumes >= retries) {
        if (!(e instanceof CutTransfer)) throw e;
        if (e.beforeAnswer && resumes === 0) throw e.cause;
        const of = state.total === undefined ? "" : ` of ${state.total}`;
        throw new FerryError(
          `The download was cut at ${state.written}${of} bytes, ${resumes} resume(s) tried; the bytes stay in ${target.partPath}: run it again to resume.`,
          { cause: e.cause },
        );
      }
      resumes++;
      await sleep(RESUME_BACKOFF_MS[Math.min(resumes, RESUME_BACKOFF_MS.length) - 1]!, opts.signal);
    }
  }
  const expected = sha256OfEtag(state.etag);
  if (expected && expected !== digest) {
    await target.handle.truncate(0);
    await fs.rm(target.etagPath, { force: true });
    throw new FerryIntegrityError(
      `The downloaded file's SHA-256 differs from the server's.`,
      expected,
      digest,
    );
  }
  try {
    await target.handle.sync();
    await fs.rename(target.partPath, target.path);
  } catch (e) {
    throw destinationError("move the download into", target.path, e);
  }
  await fs.rm(target.etagPath, { force: true });
  return { path: target.path, bytes: state.written, sha256: digest, resumedBytes, resumes };
}

/** Where a download stands: bytes in `.part`, their hash, the file's size and ETag once known. */
interface TransferState {
  written: number;
  total: number | undefined;
  etag: string | undefined;
  hash: Sha256;
}

/**
 * One request, with `Range` from the bytes held (and `If-Range` on their ETag); `state` follows
 * every byte written, so a cut leaves it where the bytes on disk end. A 200 answer starts the
 * file over. A body that fails midway throws CutTransfer (its cause the network error).
 */
async function transfer(
  host: DownloadHost,
  path: string,
  target: OpenTarget,
  state: TransferState,
  opts: DownloadOptions,
  meter: { current: ProgressMeter | undefined },
): Promise<void> {
  const fs = await import("node:fs/promises");
  const headers: Record<string, string> = {};
  if (state.written > 0) {
    headers.range = `bytes=${state.written}-`;
    if (state.etag) headers["if-range"] = state.etag;
  }
  let res: Response;
  try {
    res = await host.send({ method: "GET", path, headers, signal: opts.signal, operation: "download" });
  } catch (e) {
    if (e instanceof FerryError) throw e;
    throw new CutTransfer("no answer", { cause: e }, true);
  }
  const drop = () => res.body?.cancel().catch(() => {});
  if (res.status >= 300) {
    await drop();
    throw new FerryError(`The download answered ${res.status}.`);
  }
  if (res.status === 206) {
    if (rangeStart(res) !== state.written) {
      await drop();
      throw new FerryError(`The server resumed the download at another byte than ${state.written}.`);
    }
  } else if (state.written > 0) {
    state.written = 0;
    state.hash = await createSha256();
    await target.handle.truncate(0);
  }
  const etag = res.headers.get("etag") ?? undefined;
  if (etag !== state.etag) {
    try {
      if (etag) await fs.writeFile(target.etagPath, etag);
      else await fs.rm(target.etagPath, { force: true });
    } catch (e) {
      await drop();
      throw destinationError("write", target.etagPath, e);
    }
    state.etag = etag;
  }
  const length = Number(res.headers.get("content-length") ?? Number.NaN);
  state.total = Number.isNaN(length) ? undefined : state.written + length;
  meter.current ??= new ProgressMeter(state.total, state.written);
  if (!res.body) throw new CutTransfer("no body");
  const reader = res.body as unknown as AsyncIterable<Uint8Array>;
  try {
    for await (const piece of reader) {
      try {
        await target.handle.write(piece, 0, piece.length, state.written);
      } catch (e) {
        throw destinationError("write", target.partPath, e);
      }
      state.written += piece.length;
      state.hash.update(piece);
      meter.current.add(piece.length);
      opts.onProgress?.(meter.current.snapshot());
    }
  } catch (e) {
    if (e instanceof FerryError) {
      await drop();
      throw e;
    }
    throw new CutTransfer("cut", { cause: e });
  }
  await target.handle.truncate(state.written);
}
