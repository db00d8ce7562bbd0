import type { RawRequest } from "./core.js";
import { FerryApiError, FerryError, FerryIntegrityError } from "./errors.js";
import type { components } from "./generated/schema.js";
import { createSha256, sha256Hex } from "./hash.js";
import { ProgressMeter, type TransferProgress } from "./progress.js";

type Media = components["schemas"]["Media"];

/** The largest chunk the server takes (MAX_CHUNK_BYTES default, 4 MiB). */
export const MAX_CHUNK_BYTES = 4 * 1024 * 1024;

/** Where an upload goes: a draft push request, or a container feature that takes the owner's files. */
export type UploadTarget = { request: number } | { feature: number };

/** A file: a path (Node), a Blob/File, or a stream of bytes (give `size` and `name`). */
export type UploadSource = string | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface UploadOptions {
  /** Bytes per chunk, at most 4 MiB (default 4 MiB). */
  chunkSize?: number | undefined;
  /** Chunks in flight (default 4). */
  concurrency?: number | undefined;
  onProgress?: ((progress: TransferProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** File name (default: the path's or File's name). */
  name?: string | undefined;
  contentType?: string | undefined;
  /** Size in bytes: required for streams. */
  size?: number | undefined;
  /** Continue an unfinished upload of the same file (same fingerprint) if the server has one (default true). */
  resume?: boolean | undefined;
}

export interface UploadResult {
  media: Media;
  /** SHA-256 hex the client computed (equal to media.sha256). */
  sha256: string;
  /** Chunks sent by this run, and chunks the server already held. */
  chunksSent: number;
  chunksResumed: number;
}

/** What uploadFile needs from the client. */
export interface UploadHost {
  send(req: RawRequest): Promise<Response>;
}

type Alloc = (index: number, length: number) => Uint8Array;

const plainAlloc: Alloc = (_index, length) => new Uint8Array(length);

interface Opened {
  name: string;
  size: number;
  lastModified: number;
  contentType: string | undefined;
  /**
   * The file's chunks in order. `alloc(index, length)` gives the memory chunk `index` (1-based) is
   * read into, so that it can sit inside its request body without another copy.
   */
  chunks(chunkSize: number, alloc?: Alloc): AsyncGenerator<Uint8Array>;
  close(): Promise<void>;
}

async function openSource(source: UploadSource, opts: UploadOptions): Promise<Opened> {
  if (typeof source === "string") {
    const fs = await import("node:fs/promises");
    const { basename } = await import("node:path");
    const handle = await fs.open(source, "r");
    const stat = await handle.stat();
    return {
      name: opts.name ?? basename(source),
      size: stat.size,
      lastModified: Math.floor(stat.mtimeMs),
      contentType: opts.contentType,
      async *chunks(chunkSize, alloc = plainAlloc) {
        for (let pos = 0; pos < stat.size || pos === 0; pos += chunkSize) {
          const length = Math.min(chunkSize, stat.size - pos);
          const buf = alloc(pos / chunkSize + 1, length);
          let got = 0;
          while (got < length) {
            const { bytesRead } = await handle.read(buf, got, length - got, pos + got);
            if (bytesRead === 0) throw new FerryError(`${source} became shorter while it was read`);
            got += bytesRead;
          }
          yield buf;
          if (stat.size === 0) return;
        }
      },
      close: () => handle.close(),
    };
  }
  if (source instanceof Blob) {
    return {
      name: opts.name ?? (source as File).name ?? "file",
      size: source.size,
      lastModified: (source as File).lastModified ?? 0,
      contentType: opts.contentType ?? (source.type || undefined),
      async *chunks(chunkSize, alloc = plainAlloc) {
        for (let pos = 0; pos < source.size || pos === 0; pos += chunkSize) {
          const bytes = new Uint8Array(await source.slice(pos, pos + chunkSize).arrayBuffer());
          const buf = alloc(pos / chunkSize + 1, bytes.length);
          buf.set(bytes);
          yield buf;
          if (source.size === 0) return;
        }
      },
      close: async () => {},
    };
  }
  if (opts.size === undefined || opts.name === undefined) {
    throw new FerryError("uploadFile: a stream needs the `size` and `name` options");
  }
  const size = opts.size;
  const iterable: AsyncIterable<Uint8Array> =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<Uint8Array>)
      : readerIterable(source as ReadableStream<Uint8Array>);
  return {
    name: opts.name,
    size,
    lastModified: 0,
    contentType: opts.contentType,
    async *chunks(chunkSize) {
      let buf = new Uint8Array(Math.min(chunkSize, size));
      let used = 0;
      let total = 0;
      for await (const piece of iterable) {
        let off = 0;
        while (off < piece.length) {
          const take = Math.min(buf.length - used, piece.length - off);
          buf.set(piece.subarray(off, off + take), used);
          used += take;
          off += take;
          if (used === buf.length && buf.length > 0) {
            total += used;
            yield buf;
            buf = new Uint8Array(Math.min(chunkSize, Math.max(0, size - total)));
            used = 0;
            if (buf.length === 0 && off < piece.length)
              throw new FerryError("the stream is longer than `size`");
          }
        }
      }
      if (total + used !== size) throw new FerryError(`the stream had ${total + used} bytes, not ${size}`);
      if (used > 0 || size === 0) yield buf.subarray(0, used);
    },
    close: async () => {},
  };
}

async function* readerIterable(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";
const encoder = new TextEncoder();

/** Memory for a body that is written whole (not zero-filled on Node). */
function allocate(length: number): Uint8Array<ArrayBuffer> {
  return isNode ? (Buffer.allocUnsafe(length) as Uint8Array<ArrayBuffer>) : new Uint8Array(length);
}

/**
 * A multipart/form-data body of text fields then one file part of `length` bytes, as one buffer
 * (fetch sends it as is; a Blob body would be streamed in small reads, far slower): `file` is the
 * view the file part's bytes go in.
 */
function multipartBody(
  fields: Record<string, string | number | undefined>,
  name: string,
  length: number,
  pool?: BufferPool,
) {
  const boundary = `----ferry-sdk-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  let head = "";
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  }
  const safe = name.replace(/["\r\n\\]/g, "_");
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safe}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const headBytes = encoder.encode(head);
  const tailBytes = encoder.encode(`\r\n--${boundary}--\r\n`);
  const total = headBytes.length + length + tailBytes.length;
  const base = pool?.take(total) ?? allocate(total);
  const body = base.subarray(0, total);
  body.set(headBytes, 0);
  body.set(tailBytes, headBytes.length + length);
  return {
    body,
    file: body.subarray(headBytes.length, headBytes.length + length),
    contentType: `multipart/form-data; boundary=${boundary}`,
    release: () => pool?.give(base),
  };
}

/** Chunk bodies for reuse: a few large buffers instead of one per chunk (less garbage collection). */
class BufferPool {
  private free: Uint8Array<ArrayBuffer>[] = [];
  constructor(
    private readonly capacity: number,
    private readonly max: number,
  ) {}
  take(length: number): Uint8Array<ArrayBuffer> | undefined {
    if (length > this.capacity) return undefined;
    return this.free.pop() ?? allocate(this.capacity);
  }
  give(buffer: Uint8Array<ArrayBuffer>): void {
    if (buffer.length === this.capacity && this.free.length < this.max) this.free.push(buffer);
  }
}

/**
 * A raw chunk body (application/octet-stream, the chunk number in the query string): the chunk's
 * bytes are the whole body, which the server streams without parsing a form.
 */
function rawChunkBody(length: number, pool?: BufferPool) {
  const base = pool?.take(length) ?? allocate(length);
  const body = base.subarray(0, length);
  return {
    body,
    file: body,
    contentType: "application/octet-stream",
    release: () => pool?.give(base),
  };
}

/** multipartBody with the file part's bytes copied in. */
function multipart(fields: Record<string, string | number | undefined>, name: string, bytes: Uint8Array) {
  const m = multipartBody(fields, name, bytes.length);
  m.file.set(bytes);
  return m;
}

/** The fingerprint of ADR 0022: SHA-256 of "ferry-upload-v1\n<name>\n<size>\n<lastModified>\n<SHA-256 of chunk 1>". */
export async function uploadFingerprint(
  name: string,
  size: number,
  lastModified: number,
  firstChunk: Uint8Array,
): Promise<string> {
  const first = await sha256Hex(firstChunk);
  return sha256Hex(new TextEncoder().encode(`ferry-upload-v1\n${name}\n${size}\n${lastModified}\n${first}`));
}

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Finds an unfinished upload of this file (same fingerprint, size and chunk count). */
async function findUnfinished(
  host: UploadHost,
  target: UploadTarget,
  fingerprint: string,
  size: number,
  totalChunks: number,
  signal: AbortSignal | undefined,
): Promise<Media | undefined> {
  const query = "request" in target ? `request=${target.request}&` : "";
  for (let page = 1; ; page++) {
    const res = await host.send({
      method: "GET",
      path: `/v1/media/?${query}page=${page}&page_size=100`,
      signal,
      operation: "listMedia",
    });
    const list = await json<{ results: Media[]; links: { next: string | null } }>(res);
    const hit = list.results.find(
      (m) =>
        m.state === "uploading" &&
        m.fingerprint === fingerprint &&
        m.total_bytes === size &&
        m.total_chunks === totalChunks &&
        ("feature" in target ? m.feature === target.feature : m.request === target.request),
    );
    if (hit) return hit;
    if (!list.links.next) return undefined;
  }
}

/**
 * Uploads a file in chunks with several in flight, resuming an unfinished upload of the same file,
 * and checks the server's SHA-256 against the client's.
 */
export async function uploadFile(
  host: UploadHost,
  target: UploadTarget,
  source: UploadSource,
  opts: UploadOptions = {},
): Promise<UploadResult> {
  const chunkSize = opts.chunkSize ?? MAX_CHUNK_BYTES;
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK_BYTES) {
    throw new FerryError(`chunkSize must be an integer from 1 to ${MAX_CHUNK_BYTES}`);
  }
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const file = await openSource(source, opts);
  const abort = new AbortController();
  const onAbort = () => abort.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  const signal = abort.signal;
  try {
    const totalChunks = Math.max(1, Math.ceil(file.size / chunkSize));
    const hash = await createSha256();
    // Chunks 2.. are read straight into their PUT bodies (raw: the body is the chunk); chunk 1
    // (read before it is known whether it is sent by POST or PUT) is sent from its own memory.
    const bodies = new Map<number, ReturnType<typeof rawChunkBody>>();
    const pool = new BufferPool(chunkSize, concurrency + 2);
    const chunks = file.chunks(chunkSize, (index, length) => {
      if (index === 1) return allocate(length);
      const m = rawChunkBody(length, pool);
      bodies.set(index, m);
      return m.file;
    });
    const first = (await chunks.next()).value as Uint8Array;
    hash.update(first);
    const fingerprint = await uploadFingerprint(file.name, file.size, file.lastModified, first);
    const common = { fingerprint };

    let media: Media | undefined;
    let held = new Set<number>();
    if (opts.resume !== false && totalChunks > 1) {
      const found = await findUnfinished(host, target, fingerprint, file.size, totalChunks, signal);
      if (found) {
        const res = await host.send({
          method: "GET",
          path: `/v1/media/${found.id}/`,
          signal,
          operation: "getMedia",
        });
        const detail = await json<Media & { received_chunks?: number[] }>(res);
        media = detail;
        held = new Set(detail.received_chunks ?? []);
      }
    }
    const heldBytes = [...held].reduce(
      (sum, n) => sum + (n === totalChunks ? file.size - (totalChunks - 1) * chunkSize : chunkSize),
      0,
    );
    const meter = new ProgressMeter(file.size, heldBytes);
    let done = held.size;
    let sent = 0;
    const report = () => opts.onProgress?.(meter.snapshot({ chunks: done, totalChunks }));
    report();
    let completed: Media | undefined;
    const note = (m: Media, bytes: number) => {
      meter.add(bytes);
      done++;
      sent++;
      if (m.state === "available") completed = m;
      report();
    };

    if (!media) {
      const form = multipart(
        {
          ...("request" in target ? { request: target.request } : { feature: target.feature }),
          name: file.name,
          content_type: file.contentType,
          total_chunks: totalChunks,
          current_chunk: 1,
          total_bytes: file.size,
          ...common,
        },
        file.name,
        first,
      );
      const res = await host.send({
        method: "POST",
        path: "/v1/media/",
        headers: { "content-type": form.contentType },
        body: () => form.body,
        signal,
        operation: "uploadMedia",
      });
      media = await json<Media>(res);
      held.add(1);
      note(media, first.length);
    } else if (!held.has(1)) {
      // chunk 1 goes with the others below
    }
    const mediaId = media.id;
    // Chunks after the first are sent as raw bodies (ADR 0041): the server streams them without
    // parsing a form. A server from before raw bodies answers 415 to one: that chunk and the rest go
    // as multipart forms.
    const chunkQuery = `fingerprint=${encodeURIComponent(fingerprint)}`;
    let rawBodies = true;
    const putChunk = async (
      index: number,
      body: Uint8Array<ArrayBuffer>,
      contentType: string,
      raw: boolean,
    ) =>
      host.send({
        method: "PUT",
        path: raw ? `/v1/media/${mediaId}?current_chunk=${index}&${chunkQuery}` : `/v1/media/${mediaId}`,
        headers: { "content-type": contentType },
        body: () => body,
        signal,
        operation: "uploadMediaChunk",
      });
    const putChunkAsForm = async (index: number, bytes: Uint8Array) => {
      const form = multipart({ current_chunk: index, ...common }, file.name, bytes);
      try {
        return await putChunk(index, form.body, form.contentType, false);
      } finally {
        form.release();
      }
    };
    const sendChunk = async (index: number, bytes: Uint8Array) => {
      const chunk = bodies.get(index) ?? {
        // Chunks come from `allocate` or `new Uint8Array`: backed by an ArrayBuffer.
        body: bytes as Uint8Array<ArrayBuffer>,
        contentType: "application/octet-stream",
        release() {},
      };
      bodies.delete(index);
      try {
        let res: Response;
        if (!rawBodies) {
          res = await putChunkAsForm(index, bytes);
        } else {
          try {
            res = await putChunk(index, chunk.body, chunk.contentType, true);
          } catch (err) {
            if (!(err instanceof FerryApiError && err.status === 415)) throw err;
            rawBodies = false;
            res = await putChunkAsForm(index, bytes);
          }
        }
        note(await json<Media>(res), bytes.length);
      } finally {
        chunk.release();
      }
    };

    let failure: unknown;
    const inFlight = new Set<Promise<void>>();
    const start = (index: number, bytes: Uint8Array) => {
      const p: Promise<void> = sendChunk(index, bytes).then(
        () => {
          inFlight.delete(p);
        },
        (e) => {
          inFlight.delete(p);
          if (failure === undefined) failure = e;
          abort.abort(e);
        },
      );
      inFlight.add(p);
    };
    if (!held.has(1)) start(1, first);
    let index = 1;
    for await (const bytes of chunks) {
      index++;
      if (failure !== undefined) break;
      signal.throwIfAborted();
      hash.update(bytes);
      if (held.has(index)) {
        bodies.get(index)?.release();
        bodies.delete(index);
        continue;
      }
      start(index, bytes);
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (failure !== undefined) throw failure;
    signal.throwIfAborted();

    if (!completed) {
      const res = await host.send({
        method: "GET",
        path: `/v1/media/${mediaId}/`,
        signal,
        operation: "getMedia",
      });
      completed = await json<Media>(res);
    }
    const sha256 = hash.hex();
    if (completed.state !== "available" || completed.sha256 !== sha256) {
      throw new FerryIntegrityError(
        `The server's SHA-256 of ${file.name} (${completed.sha256 ?? completed.state}) differs from the file's (${sha256}).`,
        sha256,
        completed.sha256 ?? "",
      );
    }
    const { received_chunks: _held, ...plain } = completed as Media & { received_chunks?: number[] };
    return { media: plain, sha256, chunksSent: sent, chunksResumed: totalChunks - sent };
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    await file.close();
  }
}
