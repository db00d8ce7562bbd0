import type { FastifyRequest } from "fastify";
import { refuseNul } from "../../http/nul-bytes.js";
import { AppError, ValidationError } from "../../shared/errors.js";
import { rawChunkParts } from "../media/index.js";
import type { UploadPiece } from "./recipient.service.js";
import type { UploadRules } from "./views/pages.js";

/** Extension of a file name, lower case without the dot ("" when none). */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/** 413 for a chunk over the page's chunk size. */
function chunkTooLarge(rules: UploadRules): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", `A chunk may hold at most ${rules.chunkBytes} bytes.`);
}

/** Checks the first chunk's fields against the request's upload rules; throws ValidationError. */
function checkFirstChunk(fields: Record<string, string>, rules: UploadRules): void {
  const name = (fields.name ?? "").trim();
  const size = Number(fields.size);
  const totalChunks = Number(fields.total_chunks ?? 1);
  const problems: Record<string, string[]> = {};
  if (!name) problems.name = ["This field is required."];
  else if (rules.extensions.length && !rules.extensions.includes(extensionOf(name)))
    problems.name = [`Files of this type are not accepted. Allowed: ${rules.extensions.join(", ")}.`];
  if (fields.size === undefined || !Number.isSafeInteger(size) || size < 0)
    problems.size = ["A valid integer is required."];
  else if (size > rules.maxFileBytes) problems.size = [`The file is larger than ${rules.maxFileLabel}.`];
  else {
    const expected = Math.max(1, Math.ceil(size / rules.chunkBytes));
    if (totalChunks !== expected)
      problems.total_chunks = [`Expected ${expected} chunks of ${rules.chunkBytes} bytes.`];
  }
  if (Object.keys(problems).length) throw new ValidationError(problems);
}

/**
 * The multipart body of an upload call as the media service's pieces. When the file part of a
 * first chunk arrives, the fields before it are checked against the request's rules (declared size,
 * chunk count, extension) so a file the page should have refused is stopped before its bytes are
 * stored. A first chunk's `size` becomes the media's declared size (`total_bytes`), so the upload
 * completes only at that size; `fingerprint` goes through as sent (ADR 0022). A later chunk may
 * instead be the raw application/octet-stream body, its fields in the query string (ADR 0041).
 */
export async function* uploadPieces(
  request: FastifyRequest,
  rules: UploadRules,
  first: boolean,
): AsyncGenerator<UploadPiece> {
  // A later chunk as the raw body (ADR 0041), capped at the page's chunk size as a multipart file
  // part is: a declared length over it is refused before any byte is read, a longer stream (chunked
  // transfer encoding) as soon as it passes it.
  const raw = first
    ? undefined
    : rawChunkParts(request, {
        bytes: rules.chunkBytes,
        tooLarge: () => chunkTooLarge(rules),
      });
  if (raw) {
    yield* raw;
    return;
  }
  if (!request.isMultipart())
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      first
        ? "Send chunks as multipart/form-data."
        : "Send chunks as multipart/form-data or application/octet-stream.",
    );
  const fields: Record<string, string> = {};
  try {
    for await (const part of request.parts({ limits: { fileSize: rules.chunkBytes, files: 1 } })) {
      refuseNul(part.fieldname, "non_field_errors");
      if (part.type !== "file") {
        refuseNul(String(part.value), part.fieldname);
        // The declared size is `size` here: a `total_bytes` of the client's own is not the page's.
        if (part.fieldname === "total_bytes") continue;
        fields[part.fieldname] = String(part.value);
        yield { kind: "field", name: part.fieldname, value: String(part.value) };
        if (first && part.fieldname === "size")
          yield { kind: "field", name: "total_bytes", value: String(part.value) };
        continue;
      }
      refuseNul(part.filename, part.fieldname);
      if (first) checkFirstChunk(fields, rules);
      yield {
        kind: "file",
        field: part.fieldname,
        stream: part.file,
        filename: part.filename,
        mimetype: part.mimetype,
      };
      if (part.file.truncated) throw chunkTooLarge(rules);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as { code?: string }).code ?? "";
    if (/LIMIT|TOO_LARGE/.test(code)) throw chunkTooLarge(rules);
    throw new AppError("INVALID_REQUEST", "Malformed multipart body (missing or wrong boundary).");
  }
}
