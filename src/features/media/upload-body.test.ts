import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { bytesOf } from "../../../test/helpers/media.js";
import type { UploadPart } from "./media.context.js";
import type { StoredPart } from "./media.streams.js";
import { UploadBody } from "./upload-body.js";

const CHUNK = 1000;

const field = (name: string, value: string): UploadPart => ({ kind: "field", name, value });
const file = (data: Buffer, name = "file"): UploadPart => ({
  kind: "file",
  field: name,
  stream: Readable.from([data], { objectMode: false }),
  filename: "a.bin",
  mimetype: "text/plain",
});

async function* partsOf(...parts: UploadPart[]): AsyncGenerator<UploadPart> {
  yield* parts;
}

/** A body whose handlers store chunks in memory; `chunkBeforeFile` reads `current_chunk`. */
function bodyRecording(oversized: "store" | "refuse" = "store") {
  const stored: { chunk: number | "whole"; data: Buffer; fields: Record<string, string> }[] = [];
  const keep = async (chunk: number | "whole", source: Readable, fields: Record<string, string>) => {
    const pieces: Buffer[] = [];
    for await (const piece of source) pieces.push(piece as Buffer);
    const data = Buffer.concat(pieces);
    stored.push({ chunk, data, fields: { ...fields } });
    return { key: `k${chunk}`, store: "memory", header: "", plainBytes: data.length } satisfies StoredPart;
  };
  const body = new UploadBody(CHUNK, {
    chunkBeforeFile: async (fields) =>
      fields.current_chunk === undefined ? undefined : Number(fields.current_chunk),
    store: (chunk, source, fields) => keep(chunk, source, fields),
    storeOversized: async (source) => {
      if (oversized === "refuse") {
        source.destroy();
        throw new Error("too large");
      }
      return keep("whole", source, {});
    },
  });
  return { body, stored };
}

describe("UploadBody", () => {
  it("keeps the first value of a field sent twice", async () => {
    const { body } = bodyRecording();
    await body.read(partsOf(field("name", "a.txt"), field("name", "b.txt"), file(bytesOf(3))));
    expect(body.fields).toEqual({ name: "a.txt" });
  });

  it("reads text sent as a file part under another name as a field", async () => {
    const { body } = bodyRecording();
    await body.read(partsOf(file(Buffer.from("notes.txt"), "name"), file(bytesOf(3))));
    expect(body.fields).toEqual({ name: "notes.txt" });
  });

  it("records the file part's name and type", async () => {
    const { body } = bodyRecording();
    await body.read(partsOf(file(bytesOf(3))));
    expect({ filename: body.filename, mimetype: body.mimetype }).toEqual({
      filename: "a.bin",
      mimetype: "text/plain",
    });
  });

  it("stores the file as it arrives when the fields before it give its chunk number", async () => {
    const { body, stored } = bodyRecording();
    const data = bytesOf(5 * CHUNK);
    await body.read(partsOf(field("current_chunk", "2"), file(data), field("total_chunks", "3")));
    expect(stored).toEqual([{ chunk: 2, data, fields: { current_chunk: "2" } }]);
    expect(body.stored).toMatchObject({ key: "k2", plainBytes: data.length });
    expect(await body.store(2)).toBe(body.stored);
  });

  it("holds a file sent before its chunk number and stores it as the chunk given later", async () => {
    const { body, stored } = bodyRecording();
    const data = bytesOf(CHUNK);
    await body.read(partsOf(file(data), field("current_chunk", "3")));
    expect(stored).toEqual([]);
    expect(body.stored).toBeUndefined();
    expect(await body.store(3)).toMatchObject({ key: "k3", plainBytes: CHUNK });
    expect(stored).toEqual([{ chunk: 3, data, fields: { current_chunk: "3" } }]);
  });

  it("stores a held file that outgrows one chunk whole, every byte included", async () => {
    const { body, stored } = bodyRecording();
    const data = bytesOf(CHUNK + 1);
    await body.read(partsOf(file(data), field("current_chunk", "1")));
    expect(stored).toEqual([{ chunk: "whole", data, fields: {} }]);
    expect(await body.store(1)).toMatchObject({ key: "kwhole" });
  });

  it("fails with the handler's error when it refuses a held file that outgrows one chunk", async () => {
    const { body, stored } = bodyRecording("refuse");
    await expect(body.read(partsOf(file(bytesOf(CHUNK + 1))))).rejects.toThrow("too large");
    expect(stored).toEqual([]);
  });

  it("answers 400 to a body without a file", async () => {
    const { body } = bodyRecording();
    await expect(body.read(partsOf(field("name", "a.txt")))).rejects.toMatchObject({
      status: 400,
      fields: { file: ["No file was submitted."] },
    });
  });

  it("answers 400 to a second file and leaves the stored first one for the caller to discard", async () => {
    const { body } = bodyRecording();
    const parts = partsOf(field("current_chunk", "1"), file(bytesOf(3)), file(bytesOf(4)));
    await expect(body.read(parts)).rejects.toMatchObject({
      status: 400,
      fields: { file: ["Send one file per request."] },
    });
    expect(body.stored).toMatchObject({ key: "k1", plainBytes: 3 });
  });

  it("answers 400 to a text part over 64 KiB", async () => {
    const { body } = bodyRecording();
    const long = file(Buffer.alloc(64 * 1024 + 1, "a"), "name");
    await expect(body.read(partsOf(long, file(bytesOf(3))))).rejects.toMatchObject({
      status: 400,
      fields: { name: ["Ensure this field has no more than 65536 characters."] },
    });
  });
});
