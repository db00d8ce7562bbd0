/**
 * Reading an upload body: its text fields and its one `file` part. The file is stored as it
 * arrives when the fields sent before it give its chunk number; otherwise up to one chunk of it is
 * held in memory until the rest of the body says which chunk it is.
 */
import { Readable } from "node:stream";
import { ValidationError } from "../../shared/errors.js";
import type { UploadPart } from "./media.context.js";
import { bufferUpTo, type StoredPart } from "./media.streams.js";

const TEXT_PART_LIMIT = 64 * 1024;

/** How a use case stores the file of an upload body. */
interface UploadFileHandlers {
  /**
   * At the file part, with the fields sent before it: the chunk number to store the file as while
   * it arrives, or undefined to hold it until the rest of the body is read. Throws to refuse.
   */
  chunkBeforeFile(fields: Record<string, string>): Promise<number | undefined>;
  /** Stores `source` as chunk `chunk`; `fields` are the fields read so far. */
  store(chunk: number, source: Readable, fields: Record<string, string>): Promise<StoredPart>;
  /** The held file outgrew one chunk before its chunk number came: stores all of it, or throws. */
  storeOversized(source: Readable): Promise<StoredPart>;
}

/**
 * One upload body. `read` takes every part; `store` then gives the stored file. Whatever fails,
 * `stored` is the blob written so far (for the caller to discard).
 */
export class UploadBody {
  /** The text fields (the first occurrence of a name wins). */
  readonly fields: Record<string, string> = {};
  filename: string | undefined;
  mimetype: string | undefined;
  /** The file once stored. */
  stored: StoredPart | undefined;
  #held: Buffer[] | undefined;

  constructor(
    private readonly chunkBytes: number,
    private readonly handlers: UploadFileHandlers,
  ) {}

  /** Reads every part: 400 for a text part over 64 KiB, for no file and for a second file. */
  async read(parts: AsyncIterable<UploadPart>): Promise<void> {
    let hasFile = false;
    for await (const part of parts) {
      if (part.kind === "field") {
        this.fields[part.name] ??= part.value;
      } else if (part.field !== "file") {
        this.fields[part.field] ??= await readText(part.stream, part.field);
      } else {
        if (hasFile) throw ValidationError.field("file", "Send one file per request.");
        hasFile = true;
        this.filename = part.filename;
        this.mimetype = part.mimetype;
        await this.#receive(part.stream);
      }
    }
    if (!hasFile) throw ValidationError.field("file", "No file was submitted.");
  }

  /** The stored file; a held file is stored first, as chunk `chunk`. */
  async store(chunk: number): Promise<StoredPart> {
    if (this.#held) {
      const source = Readable.from(this.#held.splice(0), { objectMode: false });
      this.#held = undefined;
      this.stored = await this.handlers.store(chunk, source, this.fields);
    }
    return this.stored!;
  }

  async #receive(stream: Readable): Promise<void> {
    const chunk = await this.handlers.chunkBeforeFile(this.fields);
    if (chunk !== undefined) {
      this.stored = await this.handlers.store(chunk, stream, this.fields);
      return;
    }
    // The chunk number may still come after the file: hold a chunk-sized start in memory.
    const { pieces, rest } = await bufferUpTo(stream, this.chunkBytes);
    if (rest) this.stored = await this.handlers.storeOversized(rest);
    else this.#held = pieces;
  }
}

async function readText(stream: Readable, field: string): Promise<string> {
  const pieces: Buffer[] = [];
  let total = 0;
  for await (const piece of stream) {
    total += (piece as Buffer).length;
    if (total > TEXT_PART_LIMIT) {
      stream.destroy();
      throw ValidationError.field(field, `Ensure this field has no more than ${TEXT_PART_LIMIT} characters.`);
    }
    pieces.push(piece as Buffer);
  }
  return Buffer.concat(pieces).toString("utf8");
}
