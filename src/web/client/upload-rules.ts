/** Shapes and rules shared by the pull page's uploader: sizes, refusals, server answers. */

/** A file's upload as the server reports it (GET /r/<identifier>/uploads). */
export interface ServerUpload {
  id: number;
  name: string;
  bytes: number;
  state: string;
  total_chunks: number;
  received_chunks: number[];
}

/** Settings read from the page (data-* attributes of <main>). */
export interface UploaderOptions {
  identifier: string;
  csrf: string;
  chunkBytes: number;
  maxFileBytes: number;
  extensions: string[];
}

/** Human size (powers of 1000, one decimal), the same as the server-rendered lists. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Why a file may not be uploaded, or undefined when it may. */
export function refusal(file: { name: string; size: number }, options: UploaderOptions): string | undefined {
  const dot = file.name.lastIndexOf(".");
  const ext = dot > 0 ? file.name.slice(dot + 1).toLowerCase() : "";
  if (options.extensions.length > 0 && !options.extensions.includes(ext))
    return `not accepted: allowed types are ${options.extensions.join(", ")}`;
  if (file.size > options.maxFileBytes) return `too large: the limit is ${formatBytes(options.maxFileBytes)}`;
  return undefined;
}

/** A failed upload call: `status` 0 for network errors and aborts. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A readable message from an error body in the API's shapes. */
export function describeError(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    if (typeof parsed.detail === "string") return parsed.detail;
    const first = Object.values(parsed).flat()[0];
    if (typeof first === "string") return first;
  } catch {
    // not JSON
  }
  return `upload failed (${status})`;
}

export async function errorText(res: Response): Promise<string> {
  return describeError(await res.text(), res.status);
}
