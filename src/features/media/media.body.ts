/**
 * Upload bodies as a stream of `UploadPart`s: multipart/form-data (the file part streamed, never
 * buffered), application/x-www-form-urlencoded (the `file` field's bytes percent-decoded as they
 * arrive, streamed to the same limit as a multipart file) and, for chunks,
 * application/octet-stream (the whole body is the chunk, streamed; its fields come from the query
 * string; ADR 0041).
 */
import { pipeline, Readable, Transform } from "node:stream";
import type { Multipart as MultipartPart } from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { refuseNul } from "../../http/nul-bytes.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { markBodyPieces } from "../../shared/owned-buffers.js";
import type { UploadPart } from "./media.context.js";

/** A form-urlencoded upload body handed on unread (see `registerStreamedFormParser`). */
class FormBody {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  /** The request's body bytes, not yet read. */
  get stream(): Readable {
    return this.#stream;
  }
}

/**
 * Replaces, in this plugin's scope only, the form-urlencoded parser with one that hands the body on
 * unread: `uploadParts` reads its fields and streams its `file` field's bytes (percent-decoded, not
 * UTF-8 decoded) to the upload's limit, as a multipart file part is streamed.
 */
export function registerStreamedFormParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/x-www-form-urlencoded");
  app.addContentTypeParser("application/x-www-form-urlencoded", (_request, payload, done) => {
    done(null, new FormBody(payload));
  });
}

/**
 * An application/octet-stream body handed on unread. The stream sits in a private field so that
 * walkers of `request.body` (the NUL guard) see an object without fields.
 */
class RawBody {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  /** The request's body bytes, not yet read. */
  get stream(): Readable {
    return this.#stream;
  }
}

/**
 * Lets the routes of this plugin scope take application/octet-stream bodies: the request stream is
 * handed on unread (neither buffered nor decoded). No limit is applied here: the route refuses a
 * declared length over its limit and the upload meter stops a body that grows past it. The body's
 * pieces are marked owned (ADR 0047): its one reader, the upload's meter and encryptor, frees
 * each once its digests have copied it and it is encrypted.
 */
export function registerRawBodyParser(app: FastifyInstance): void {
  app.addContentTypeParser("application/octet-stream", (_request, payload, done) => {
    done(null, new RawBody(markBodyPieces(payload)));
  });
}

/** True when the request's body is a form-urlencoded upload body left unread. */
export function isFormBody(request: FastifyRequest): boolean {
  return request.body instanceof FormBody;
}

/** True when the request's body is an application/octet-stream body left unread. */
export function isRawBody(request: FastifyRequest): boolean {
  return request.body instanceof RawBody;
}

function hex(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/** Percent-decodes bytes ("+" is a space); a malformed escape is kept literally. */
function decodeComponent(input: Buffer): Buffer {
  const out = Buffer.allocUnsafe(input.length);
  let o = 0;
  for (let i = 0; i < input.length; i++) {
    const b = input[i]!;
    if (b === 0x2b) {
      out[o++] = 0x20;
    } else if (b === 0x25 && i + 2 < input.length && hex(input[i + 1]!) >= 0 && hex(input[i + 2]!) >= 0) {
      out[o++] = hex(input[i + 1]!) * 16 + hex(input[i + 2]!);
      i += 2;
    } else {
      out[o++] = b;
    }
  }
  return out.subarray(0, o);
}

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PERCENT = 0x25;
/** The most bytes of a form field's name and value other than `file`. */
const FORM_FIELD_LIMIT = 64 * 1024;

/**
 * The parts of a form-urlencoded upload in arrival order: `a=1&file=%00%FF...&b=2`. Text fields are
 * UTF-8 (400 past 64 KiB); the first `file` field streams as its decoded bytes, failing with
 * `cap.tooLarge()` once more than `cap.bytes` have passed; a later `file` field is skipped (the
 * first occurrence of a name wins).
 */
async function* streamedFormParts(source: Readable, cap: RawChunkCap): AsyncGenerator<UploadPart> {
  const reader = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let buffer: Buffer = Buffer.alloc(0);
  let ended = false;
  const pull = async (): Promise<void> => {
    const next = await reader.next();
    if (next.done) ended = true;
    else buffer = buffer.length === 0 ? next.value : Buffer.concat([buffer, next.value]);
  };
  const firstOf = (stops: number[]): number => {
    let at = -1;
    for (const stop of stops) {
      const i = buffer.indexOf(stop);
      if (i !== -1 && (at === -1 || i < at)) at = i;
    }
    return at;
  };
  // Bytes up to the next of `stops` (consumed) or the end of the body; 400 past the field limit.
  const readUntil = async (stops: number[], field: string): Promise<{ bytes: Buffer; stop?: number }> => {
    for (;;) {
      const at = firstOf(stops);
      if (at !== -1) {
        const bytes = buffer.subarray(0, at);
        const stop = buffer[at];
        buffer = buffer.subarray(at + 1);
        return { bytes, stop };
      }
      if (buffer.length > FORM_FIELD_LIMIT)
        throw ValidationError.field(
          field,
          `Ensure this field has no more than ${FORM_FIELD_LIMIT} characters.`,
        );
      if (ended) {
        const bytes = buffer;
        buffer = Buffer.alloc(0);
        return { bytes };
      }
      await pull();
    }
  };
  let fileOpen = false;
  let fileSeen = false;
  // The file field's value, decoded piece by piece; an escape cut between pieces waits for the next.
  async function* fileBytes(counted: boolean): AsyncGenerator<Buffer> {
    let total = 0;
    try {
      for (;;) {
        const at = buffer.indexOf(AMPERSAND);
        let take: Buffer;
        const last = at !== -1 || ended;
        if (at !== -1) {
          take = buffer.subarray(0, at);
          buffer = buffer.subarray(at + 1);
        } else if (ended) {
          take = buffer;
          buffer = Buffer.alloc(0);
        } else {
          const n = buffer.length;
          const keep = n >= 1 && buffer[n - 1] === PERCENT ? 1 : n >= 2 && buffer[n - 2] === PERCENT ? 2 : 0;
          take = buffer.subarray(0, n - keep);
          buffer = buffer.subarray(n - keep);
        }
        if (take.length > 0 && counted) {
          const decoded = decodeComponent(take);
          total += decoded.length;
          if (total > cap.bytes) throw cap.tooLarge();
          yield decoded;
        }
        if (last) return;
        await pull();
      }
    } finally {
      fileOpen = false;
    }
  }
  for (;;) {
    // A file the reader left unfinished is read to its end before the next field.
    if (fileOpen) for await (const _ of fileBytes(false));
    if (buffer.length === 0) {
      if (ended) return;
      await pull();
      continue;
    }
    const { bytes: rawName, stop } = await readUntil([EQUALS, AMPERSAND], "non_field_errors");
    const name = decodeComponent(rawName).toString("utf8");
    refuseNul(name, "non_field_errors");
    if (stop !== EQUALS) {
      // `name` alone, or an empty pair: a field without a value.
      if (name !== "" && name !== "file" && name !== "__proto__") yield { kind: "field", name, value: "" };
      continue;
    }
    if (name === "file") {
      fileOpen = true;
      if (fileSeen) continue;
      fileSeen = true;
      yield { kind: "file", field: "file", stream: Readable.from(fileBytes(true), { objectMode: false }) };
      continue;
    }
    const { bytes } = await readUntil([AMPERSAND], name);
    if (name === "__proto__") continue;
    const value = decodeComponent(bytes).toString("utf8");
    refuseNul(value, name);
    yield { kind: "field", name, value };
  }
}

/**
 * The parts of a multipart upload in arrival order; file parts stream (busboy stops a file at
 * `fileLimit + 1` bytes so the service's own meter reports the limit). Malformed bodies are 400.
 */
async function* multipartParts(request: FastifyRequest, limits: UploadLimits): AsyncGenerator<UploadPart> {
  let iterator: AsyncIterator<MultipartPart>;
  // The body's pieces, so the encryptor frees each one once it has sealed the file's last slice of
  // it (the meter's `adoptLastView`); pieces the socket gave before this point stay unmarked.
  markBodyPieces(request.raw);
  try {
    iterator = request
      .parts({ limits: { fileSize: limits.fileBytes + 1, files: 5 } })
      [Symbol.asyncIterator]();
  } catch (err) {
    throw multipartError(err, limits);
  }
  for (;;) {
    let next: IteratorResult<MultipartPart>;
    try {
      next = await iterator.next();
    } catch (err) {
      throw multipartError(err, limits);
    }
    if (next.done) return;
    const part = next.value;
    refuseNul(part.fieldname, "non_field_errors");
    if (part.type === "file") {
      refuseNul(part.filename, part.fieldname);
      yield {
        kind: "file",
        field: part.fieldname,
        stream: part.file,
        filename: part.filename,
        mimetype: part.mimetype,
      };
    } else {
      const value = String(part.value ?? "");
      refuseNul(value, part.fieldname);
      yield { kind: "field", name: part.fieldname, value };
    }
  }
}

function multipartError(err: unknown, limits: UploadLimits): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code ?? "";
  // A file busboy cut short at the limit, still buffered when the next part was asked for.
  if (code === "FST_REQ_FILE_TOO_LARGE") return limits.fileTooLarge();
  if (/LIMIT/.test(code))
    return new AppError("PAYLOAD_TOO_LARGE", "Too many parts or fields in the multipart body.");
  return new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
}

/** How large an upload's file may be, and the errors past that. */
export interface UploadLimits {
  /** The most bytes of file in a multipart body. */
  fileBytes: number;
  fileTooLarge(): AppError;
  /** The most bytes of file in a form-urlencoded body (decoded). */
  formBytes: number;
  formTooLarge(): AppError;
}

/** The text fields a raw chunk body takes from the query string (the rest of a chunk form's fields). */
const RAW_CHUNK_FIELDS = ["current_chunk", "fingerprint"] as const;

/** The most bytes a raw chunk body may carry, and the error (413) for one that carries more. */
export interface RawChunkCap {
  bytes: number;
  tooLarge(): AppError;
}

/**
 * `source` failing with `cap.tooLarge()` as soon as more than `cap.bytes` have passed. Joined by
 * `pipeline`, which stops a request stream without closing its socket, so the 413 still goes out.
 */
function capped(source: Readable, cap: RawChunkCap): Readable {
  let bytes = 0;
  const limiter = new Transform({
    transform(piece: Buffer, _encoding, callback) {
      bytes += piece.length;
      if (bytes > cap.bytes) callback(cap.tooLarge());
      else callback(null, piece);
    },
  });
  // The limiter carries any error on to whoever reads it; the callback has nothing to add.
  return pipeline(source, limiter, () => {});
}

/**
 * The parts of a raw chunk body: `current_chunk` and `fingerprint` from the query string (before the
 * file, so the chunk is stored as it arrives), then the body as the file. No body at all (no
 * length, or 0, and no chunked encoding) is no file. Without `current_chunk` the chunk is refused
 * before a byte of it is read: unlike a form, a raw body has nowhere else to carry it. With `cap`,
 * a declared length over it is refused before anything else, and a longer stream fails as it passes.
 */
async function* readRawChunk(
  request: FastifyRequest,
  body: RawBody,
  cap: RawChunkCap | undefined,
): AsyncGenerator<UploadPart> {
  if (cap && Number(request.headers["content-length"] ?? "0") > cap.bytes) throw cap.tooLarge();
  const query = (request.query ?? {}) as Record<string, unknown>;
  let numbered = false;
  for (const name of RAW_CHUNK_FIELDS) {
    const value = query[name];
    // A repeated parameter counts once, as a repeated form field does (the first wins).
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first !== "string") continue;
    if (name === "current_chunk") numbered = true;
    yield { kind: "field", name, value: first };
  }
  if (!numbered) throw ValidationError.field("current_chunk", "This field is required.");
  const { headers } = request;
  const empty =
    headers["transfer-encoding"] === undefined &&
    (headers["content-length"] === undefined || headers["content-length"] === "0");
  if (!empty) yield { kind: "file", field: "file", stream: cap ? capped(body.stream, cap) : body.stream };
}

/**
 * The parts of a raw chunk body (see `readRawChunk`), or undefined when the request's body is not
 * one. For page chunk routes, which read their multipart bodies themselves; their chunk size is
 * `cap`, below the media service's own limit (MAX_CHUNK_BYTES).
 */
export function rawChunkParts(
  request: FastifyRequest,
  cap?: RawChunkCap,
): AsyncIterable<UploadPart> | undefined {
  return request.body instanceof RawBody ? readRawChunk(request, request.body, cap) : undefined;
}

/**
 * The upload parts of a chunk PUT: multipart, form-urlencoded, or a raw application/octet-stream
 * body (`current_chunk` and `fingerprint` in the query string); 415 for any other body.
 */
export function chunkParts(request: FastifyRequest, limits: UploadLimits): AsyncIterable<UploadPart> {
  return (
    rawChunkParts(request) ??
    uploadParts(
      request,
      limits,
      "Send the chunk as application/octet-stream (current_chunk in the query string), multipart/form-data or application/x-www-form-urlencoded.",
    )
  );
}

/** The upload parts of a request of either form type; 415 (with `unsupported`) for any other body. */
export function uploadParts(
  request: FastifyRequest,
  limits: UploadLimits,
  unsupported = "Send the upload as multipart/form-data (recommended) or application/x-www-form-urlencoded.",
): AsyncIterable<UploadPart> {
  if (request.isMultipart()) return multipartParts(request, limits);
  if (request.body instanceof FormBody)
    return streamedFormParts(request.body.stream, { bytes: limits.formBytes, tooLarge: limits.formTooLarge });
  throw new AppError("UNSUPPORTED_MEDIA_TYPE", unsupported);
}
