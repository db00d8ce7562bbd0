import { Type } from "typebox";
import { INTEGER_ID } from "../../http/openapi.js";

/** The Media object in responses (see media.presenter.ts). */
export const MediaSchema = Type.Object(
  {
    id: Type.Integer({ examples: [31] }),
    request: Type.Integer({
      description: "ID of the owning request, or of the container whose feature holds the file.",
      examples: [12],
    }),
    feature: Type.Union([Type.Integer(), Type.Null()], {
      description: "ID of the container feature holding the file; null for a request's file.",
      examples: [null],
    }),
    recipient: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "ID of the container recipient who uploaded the file in their session; null for the owner's files and requests' files.",
      examples: [null],
    }),
    name: Type.String({ description: "Original file name (sanitised).", examples: ["contract.pdf"] }),
    content_type: Type.String({ examples: ["application/pdf"] }),
    bytes: Type.Integer({
      description: "Plaintext size; while uploading, the bytes received so far.",
      examples: [48213],
    }),
    extension: Type.String({ description: "Lower-case extension without the dot.", examples: ["pdf"] }),
    total_chunks: Type.Integer({ examples: [1] }),
    current_chunk: Type.Integer({ description: "Chunks received so far.", examples: [1] }),
    received_chunks: Type.Optional(
      Type.Array(Type.Integer(), {
        description:
          "Only in GET /v1/media/{id}/: the 1-based numbers of the chunks the server holds, so that a client resumes an upload with the missing ones.",
        examples: [[1, 2, 4]],
      }),
    ),
    total_bytes: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "The size declared with the first chunk (`total_bytes`): the media becomes available only at exactly this many bytes. Null when the upload declared none.",
      examples: [48213],
    }),
    fingerprint: Type.Union([Type.String(), Type.Null()], {
      description:
        "The uploader's fingerprint of the file, given with the first chunk; later chunks that carry another are refused. Null when none was given.",
      examples: [null],
    }),
    file_checksum: Type.Union([Type.String(), Type.Null()], {
      description: "MD5 hex of the content (for compatible clients); null while uploading.",
      examples: ["9e107d9d372bb6826bd81d3542a419d6"],
    }),
    sha256: Type.Union([Type.String(), Type.Null()], {
      description: "SHA-256 hex of the content; null while uploading.",
      examples: ["d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"],
    }),
    state: Type.Union([Type.Literal("uploading"), Type.Literal("available"), Type.Literal("removed")]),
    times_downloaded: Type.Integer({ examples: [0] }),
    max_allowed_times_downloaded: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "Downloads allowed before the file is destroyed (1 for files of pull requests); null = unlimited.",
      examples: [null],
    }),
    removed_at: Type.Union([Type.String(), Type.Null()], { examples: [null] }),
    created: Type.String({ examples: ["2026-01-15T10:00:00.000000Z"] }),
    updated: Type.String({ examples: ["2026-01-15T10:00:00.000000Z"] }),
  },
  {
    title: "Media",
    description: "A file attached to a request. The content comes from the download endpoint.",
  },
);

/** Body of POST /v1/media/ (documentation; the service checks it, file parts are streamed). */
export const MediaCreateBody = Type.Object(
  {
    request: Type.Optional(
      Type.Integer({
        description:
          "ID of the draft push request the file belongs to (a numeric string is accepted). Required unless `feature` names a container feature.",
      }),
    ),
    feature: Type.Optional(
      Type.Integer({
        description:
          "ID of a container feature that takes the owner's files (a push, or a pushpull of type push); `push` and `pushpull` are accepted too.",
      }),
    ),
    content_type: Type.Optional(
      Type.String({
        description:
          "Media type of the file, e.g. application/pdf. Default: the file part's type (multipart), else application/octet-stream.",
        maxLength: 255,
      }),
    ),
    name: Type.Optional(
      Type.String({
        description:
          "File name with extension; path separators and control characters are removed. Default: the file part's file name.",
        maxLength: 255,
      }),
    ),
    file: Type.String({
      format: "binary",
      description:
        "The file (whole) or the first chunk sent (chunked). Multipart: a file part; form-urlencoded: the field's raw bytes, percent-encoded (streamed to MAX_FILE_BYTES, as multipart).",
    }),
    total_chunks: Type.Optional(
      Type.Integer({ minimum: 1, description: "Number of chunks (default 1: a whole file)." }),
    ),
    current_chunk: Type.Optional(
      Type.Integer({ minimum: 1, description: "Which chunk `file` is, 1..total_chunks (default 1)." }),
    ),
    total_bytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "The whole file's size in bytes (optional; recommended for chunked uploads). The media then becomes available only when its chunks add up to exactly this: a chunk that would take the sum past it, or a last chunk that leaves it different, is refused with 422 and the media keeps the chunks it had. A whole file must have exactly this size. 413 over MAX_FILE_BYTES.",
      }),
    ),
    fingerprint: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          "The client's fingerprint of the file (optional; 1 to 128 printable ASCII characters, no spaces), e.g. a digest of its name, size, modification time and first chunk. Recorded with the media; a later chunk that carries a different one is refused with 409, so a resuming client never adds one file's chunks to another's upload.",
      }),
    ),
  },
  { title: "MediaUploadInput" },
);

/** Form body of PUT /v1/media/{id} (multipart or form-urlencoded; documentation). */
export const MediaChunkForm = Type.Object(
  {
    file: Type.String({
      format: "binary",
      description: "The chunk's bytes, at most 4 MiB (MAX_CHUNK_BYTES).",
    }),
    current_chunk: Type.Integer({
      minimum: 1,
      description: "Which chunk this is, 1..total_chunks; re-sending a chunk replaces it.",
    }),
    fingerprint: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          "The fingerprint the upload was started with (optional). When given and different from the media's (or the media has none), the chunk is refused with 409 and nothing is stored.",
      }),
    ),
  },
  { title: "MediaChunkInput" },
);

/**
 * Request bodies of PUT /v1/media/{id} by content type (documentation; the service checks them):
 * the chunk's bytes as the whole body, or the chunk form.
 */
export const MediaChunkBody = {
  content: {
    "application/octet-stream": {
      schema: Type.String({
        format: "binary",
        description:
          "The chunk's bytes as the whole body, at most 4 MiB (MAX_CHUNK_BYTES); `current_chunk` (and `fingerprint`) go in the query string.",
      }),
    },
    "multipart/form-data": { schema: MediaChunkForm },
    "application/x-www-form-urlencoded": { schema: MediaChunkForm },
  },
};

/** Query of PUT /v1/media/{id}: the chunk's fields when the body is the raw chunk (ignored for forms). */
export const MediaChunkQuery = Type.Object({
  current_chunk: Type.Optional(
    Type.Integer({
      minimum: 1,
      description:
        "With an application/octet-stream body (required then): which chunk the body is, 1..total_chunks; re-sending a chunk replaces it.",
      examples: [3],
    }),
  ),
  fingerprint: Type.Optional(
    Type.String({
      maxLength: 128,
      description:
        "With an application/octet-stream body: the fingerprint the upload was started with (optional), as the form field of that name.",
    }),
  ),
});

/** Path parameter of media item routes. */
export const MediaIdParams = Type.Object({
  id: Type.String({ description: INTEGER_ID, examples: ["31"] }),
});

/** Query of GET /v1/media/. */
export const MediaListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: "1-based page number." })),
  page_size: Type.Optional(
    Type.Integer({ minimum: 1, default: 10, description: "Items per page (max 100)." }),
  ),
  request: Type.Optional(Type.String({ description: "Only media of this request id.", examples: ["12"] })),
});
