import type { CallOptions } from "./core.js";
import {
  type DownloadOptions,
  type DownloadResult,
  type DownloadTarget,
  downloadInto,
  downloadToFile,
} from "./download.js";
import { FerryApi, type OperationId } from "./generated/api.js";
import type { components } from "./generated/schema.js";
import {
  type UploadOptions,
  type UploadResult,
  type UploadSource,
  type UploadTarget,
  uploadFile,
} from "./upload.js";

type Schemas = components["schemas"];

/** Operations that answer a page of `results` (links.next, or next_marker for the audit search). */
type PagedOperation = {
  [K in OperationId]: FerryApi[K] extends (...a: never[]) => Promise<{ results: unknown[] }> ? K : never;
}[OperationId];

type ArgsOf<K extends PagedOperation> = Parameters<FerryApi[K]>[0];
type ItemOf<K extends PagedOperation> =
  Awaited<ReturnType<FerryApi[K]>> extends { results: (infer T)[] } ? T : never;

/**
 * Ferry's API client: one typed method per operation (FerryApi), plus pagination, resumable
 * parallel uploads, resumable downloads and waiting for a request to complete.
 */
export class FerryClient extends FerryApi {
  /** Iterates over every item of a list operation, page after page. */
  async *paginate<K extends PagedOperation>(
    operation: K,
    args?: ArgsOf<K>,
    options?: CallOptions,
  ): AsyncGenerator<ItemOf<K>> {
    let query: Record<string, unknown> = { ...(args as object) };
    for (;;) {
      const page = (await this.call(operation, query, options)) as {
        results: ItemOf<K>[];
        links?: { next: string | null };
        next_marker?: unknown;
      };
      yield* page.results;
      if (page.links) {
        if (!page.links.next) return;
        const next = new URL(page.links.next, this.baseUrl);
        query = { ...query, page: Number(next.searchParams.get("page") ?? Number(query.page ?? 1) + 1) };
      } else if (page.next_marker) {
        query = { ...query, marker: page.next_marker };
      } else {
        return;
      }
    }
  }

  /**
   * Uploads a file to a draft push request (or a container feature) in chunks of at most 4 MiB
   * with `concurrency` in flight; resumes an unfinished upload of the same file; checks the SHA-256.
   */
  uploadFile(target: UploadTarget, source: UploadSource, options?: UploadOptions): Promise<UploadResult> {
    return uploadFile(this, target, source, options);
  }

  /**
   * Streams a media's content to the file `dest` (Node). The destination is opened first (folders
   * created, `<dest>.part` created next to it), so a destination that cannot be written fails
   * before the download is asked for (and counted); a transfer cut midway resumes at once with
   * Range; the file is checked against the server's SHA-256 and renamed into place.
   */
  downloadFile(mediaId: number, dest: string, options?: DownloadOptions): Promise<DownloadResult> {
    return downloadToFile(this, `/v1/media/${mediaId}/download`, dest, options);
  }

  /** As downloadFile, into a destination opened beforehand with `openDownloadTarget` (not closed here). */
  downloadInto(mediaId: number, target: DownloadTarget, options?: DownloadOptions): Promise<DownloadResult> {
    return downloadInto(this, `/v1/media/${mediaId}/download`, target, options);
  }

  /** Polls a request until it is complete (or `signal` aborts); returns it. */
  async waitForComplete(
    id: number,
    options: { intervalMs?: number; signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<Schemas["Request"]> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const request = await this.getRequest({ id }, { signal: options.signal });
      if (request.complete) return request;
      if (Date.now() > deadline) throw new Error(`Request ${id} is not complete yet.`);
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 2000));
      options.signal?.throwIfAborted();
    }
  }
}
