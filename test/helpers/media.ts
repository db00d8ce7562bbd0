/**
 * Test helpers for media: request factories through the API, multipart bodies, deterministic
 * byte streams, and tampering with a stored blob.
 */
import { createCipheriv, createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import type { UploadPart } from "../../src/features/media/index.js";
import type { TestAccount, TestApp } from "./app.js";

/** Creates a request through POST /v1/request/ and returns its id. */
export async function createRequest(
  t: TestApp,
  owner: TestAccount,
  body: { type: "push" | "pull"; is_draft?: boolean },
): Promise<number> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/request/",
    headers: owner.headers,
    payload: body,
  });
  if (res.statusCode !== 201) throw new Error(`request create failed: ${res.statusCode} ${res.body}`);
  return res.json().id as number;
}

/** A file part of a multipart body. */
interface FilePart {
  data: Buffer;
  filename?: string;
  type?: string;
  /** Field name (default "file"). */
  field?: string;
}

/** Builds a multipart/form-data body; `fileFirst` puts the file before the text fields. */
export function multipart(
  fields: Record<string, string | number>,
  file?: FilePart,
  opts: { fileFirst?: boolean } = {},
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----ferry${Math.random().toString(16).slice(2)}`;
  const pieces: Buffer[] = [];
  const addFields = () => {
    for (const [name, value] of Object.entries(fields)) {
      pieces.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
      );
    }
  };
  const addFile = () => {
    if (!file) return;
    pieces.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? "file"}"; filename="${file.filename ?? "blob.bin"}"\r\nContent-Type: ${file.type ?? "application/octet-stream"}\r\n\r\n`,
      ),
    );
    pieces.push(file.data, Buffer.from("\r\n"));
  };
  if (opts.fileFirst) {
    addFile();
    addFields();
  } else {
    addFields();
    addFile();
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(pieces),
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  };
}

/** A form-urlencoded body with `file` as raw (percent-encoded) bytes. */
export function urlencoded(
  fields: Record<string, string | number>,
  file?: Buffer,
): { payload: string; headers: Record<string, string> } {
  const parts = Object.entries(fields).map(
    ([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`,
  );
  if (file) {
    parts.push(`file=${file.toString("hex").replace(/../g, "%$&")}`);
  }
  return { payload: parts.join("&"), headers: { "content-type": "application/x-www-form-urlencoded" } };
}

/** `n` deterministic pseudo-random bytes for `seed` (AES-256-CTR keystream keyed by the seed). */
export function bytesOf(n: number, seed = "ferry"): Buffer {
  const key = createHash("sha256").update(seed).digest();
  return createCipheriv("aes-256-ctr", key, Buffer.alloc(16)).update(Buffer.alloc(n));
}

/**
 * A deterministic stream of `total` bytes in 64 KiB pieces, never held whole: a 64 KiB block
 * derived from `seed` with the piece number stamped into its first bytes.
 */
export function deterministicStream(total: number, seed = "big"): Readable {
  const block = bytesOf(64 * 1024, seed);
  let sent = 0;
  let piece = 0;
  return new Readable({
    read() {
      if (sent >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(block.length, total - sent);
      const out = Buffer.from(block.subarray(0, n));
      if (n >= 4) out.writeUInt32BE(piece >>> 0, 0);
      piece++;
      sent += n;
      this.push(out);
    },
  });
}

/** SHA-256 hex of a stream's bytes. */
export async function sha256OfStream(stream: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
  const hash = createHash("sha256");
  for await (const piece of stream) hash.update(piece);
  return hash.digest("hex");
}

/** SHA-256 hex of a buffer. */
export function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Upload parts for the service API (recipient uploads): the fields, then the file. */
export async function* partsOf(
  fields: Record<string, string | number>,
  data: Buffer,
): AsyncGenerator<UploadPart> {
  for (const [name, value] of Object.entries(fields)) yield { kind: "field", name, value: String(value) };
  yield {
    kind: "file",
    field: "file",
    stream: Readable.from([data], { objectMode: false }),
    filename: String(fields.name ?? "f.bin"),
  };
}

/** Flips the lowest bit of the byte at `offset` of the file at `path` (tampering with a stored blob). */
export async function flipByte(path: string, offset: number): Promise<void> {
  const handle = await open(path, "r+");
  try {
    const one = Buffer.alloc(1);
    await handle.read(one, 0, 1, offset);
    one[0] = one[0]! ^ 0x01;
    await handle.write(one, 0, 1, offset);
  } finally {
    await handle.close();
  }
}
