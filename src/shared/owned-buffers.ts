/**
 * Buffers freed as soon as the connection has taken them, instead of at V8's next collection
 * (ADR 0047). A download's plaintext comes out of `decipher.update` as fresh 64 KiB buffers that
 * die within milliseconds, yet their memory returns to malloc only when a scavenge finds them: V8
 * lets about 32 MB of young array buffers pile up before it runs one, and glibc keeps what they
 * occupied. Detaching a buffer's ArrayBuffer frees its memory at once.
 *
 * The rule: only a buffer marked with `markOwned` is ever freed, and only by `releaseWhenWritten`
 * once the socket reports it written. A buffer is marked only by the code that made it, when that
 * buffer object is the one and only view of its memory; whatever passes the same object on (a
 * stream, a transform) must not keep it or derive a view from it. Anything derived (a slice, a
 * concatenation) is a new object, unmarked, and left to the collector — except the last view a
 * body parser hands on of a marked request body piece (`adoptLastView`).
 */
import { IncomingMessage, type ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const owned = new WeakSet<Buffer>();
/** The request body pieces marked by `markBodyPieces`, by their memory. */
const bodyPieces = new WeakMap<ArrayBufferLike, Buffer>();

/**
 * Marks `buffer`, the only view of its memory, as freeable once written; returns it. A buffer that
 * is visibly not (a slice, or a small buffer in Node's shared pool) is left unmarked.
 */
export function markOwned(buffer: Buffer): Buffer {
  if (buffer.length > 0 && buffer.byteOffset === 0 && buffer.buffer.byteLength === buffer.length)
    owned.add(buffer);
  return buffer;
}

/** Whether `chunk` is a buffer marked with `markOwned` and not yet freed. */
export function isOwned(chunk: unknown): chunk is Buffer {
  return typeof chunk === "object" && chunk !== null && owned.has(chunk as Buffer);
}

type Transfer = (this: ArrayBuffer, length: number) => ArrayBuffer;
let transfer: Transfer | null | undefined;

/**
 * `ArrayBuffer.prototype.transfer`, which detaches a buffer and frees its memory when asked for
 * length 0. Node 20's V8 (11.3) has it behind a flag that is read only when a context is created,
 * so it is taken from a fresh context (it works on any context's ArrayBuffer). Null where neither
 * gives it: buffers are then left to the collector, as before.
 */
function detacher(): Transfer | null {
  if (transfer !== undefined) return transfer;
  const native = (ArrayBuffer.prototype as { transfer?: Transfer }).transfer;
  if (typeof native === "function") {
    transfer = native;
    return transfer;
  }
  try {
    setFlagsFromString("--harmony-rab-gsab-transfer");
    const staged = runInNewContext("ArrayBuffer.prototype.transfer") as unknown;
    transfer = typeof staged === "function" ? (staged as Transfer) : null;
  } catch {
    transfer = null;
  }
  return transfer;
}

/** Frees an owned buffer's memory now; afterwards it reads as empty. Does nothing to other buffers. */
export function releaseOwned(buffer: Buffer): void {
  if (!owned.delete(buffer)) return;
  const detach = detacher();
  if (detach && buffer.buffer.byteLength > 0) detach.call(buffer.buffer as ArrayBuffer, 0);
}

type Write = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;

/**
 * Makes `response` free each owned buffer written to it once the socket has written it (the
 * write's callback without an error: the kernel has the bytes, or TLS has encrypted them). A
 * write that fails or never completes leaves its buffer to the collector.
 */
export function releaseWhenWritten(response: ServerResponse): void {
  const write = response.write as Write;
  (response as { write: Write }).write = function (this: ServerResponse, chunk, encoding, callback) {
    if (!isOwned(chunk)) return write.call(this, chunk, encoding, callback);
    const done = (typeof encoding === "function" ? encoding : callback) as
      | ((error?: Error | null) => void)
      | undefined;
    const written = (error?: Error | null) => {
      if (!error) releaseOwned(chunk);
      done?.(error);
    };
    return typeof encoding === "function" || encoding === undefined
      ? write.call(this, chunk, written)
      : write.call(this, chunk, encoding, written);
  };
}

/**
 * Marks as owned each piece of a request's body as Node's HTTP parser pushes it: the parser copies
 * every piece out of the socket's read buffer into memory of its own, which no one else sees. For
 * a body read by one consumer that copies out what it needs before handing a piece on (an upload's
 * meter and encryptor, which frees each piece once sealed), either directly or through a parser
 * that hands on views of the pieces in order and keeps none once it has handed on a piece's last
 * byte (busboy: see `adoptLastView`). Any other stream (a test's injected request, whose pieces
 * are its caller's buffers) is returned untouched.
 */
export function markBodyPieces<T extends Readable>(body: T): T {
  if (!(body instanceof IncomingMessage)) return body;
  const push = body.push;
  body.push = function (this: IncomingMessage, chunk: unknown, encoding?: BufferEncoding) {
    // markOwned takes only a piece that is the one view of its memory, as the parser's copies are.
    if (Buffer.isBuffer(chunk) && isOwned(markOwned(chunk))) bodyPieces.set(chunk.buffer, chunk);
    return push.call(this, chunk, encoding);
  };
  return body;
}

/**
 * Makes `view` owned in place of the marked body piece it ends: a multipart parser (busboy) hands
 * on slices of each piece, and the slice that reaches the piece's last byte is the last it makes of
 * that piece — by then it has searched the whole piece for the boundary and copied whatever it
 * keeps (a possible start of the boundary, a part's headers). Slices before it in the same stream
 * are consumed first, and slices that went to other parts were consumed or discarded before this
 * part began, so once this one is consumed the piece's memory may be freed. Returns `view`; any
 * other buffer is left as it is.
 */
export function adoptLastView(view: Buffer): Buffer {
  const piece = bodyPieces.get(view.buffer);
  if (piece === undefined || piece === view || view.length === 0) return view;
  if (view.byteOffset + view.length !== piece.length || !owned.delete(piece)) return view;
  bodyPieces.delete(view.buffer);
  owned.add(view);
  return view;
}
