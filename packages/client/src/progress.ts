/** Progress of an upload or a download. */
export interface TransferProgress {
  /** Bytes done, counting those an earlier run had done (`resumedBytes`). */
  bytes: number;
  /** The file's size (undefined for a download of unknown length). */
  totalBytes: number | undefined;
  /** Bytes already on the server (upload) or on disk (download) when this run started. */
  resumedBytes: number;
  /** Average speed of this run, bytes per second. */
  bytesPerSecond: number;
  /** Estimated seconds left at that speed (undefined until known). */
  secondsLeft: number | undefined;
  elapsedSeconds: number;
  /** Chunks the server holds / the file's chunks (uploads). */
  chunks?: number | undefined;
  totalChunks?: number | undefined;
}

/** Computes TransferProgress values for one run. */
export class ProgressMeter {
  private readonly started = performance.now();
  private done = 0;

  constructor(
    private readonly totalBytes: number | undefined,
    private readonly resumedBytes: number,
  ) {}

  add(bytes: number): void {
    this.done += bytes;
  }

  snapshot(extra: Partial<TransferProgress> = {}): TransferProgress {
    const elapsedSeconds = (performance.now() - this.started) / 1000;
    const bytesPerSecond = elapsedSeconds > 0 ? this.done / elapsedSeconds : 0;
    const bytes = this.resumedBytes + this.done;
    const left = this.totalBytes === undefined ? undefined : this.totalBytes - bytes;
    return {
      bytes,
      totalBytes: this.totalBytes,
      resumedBytes: this.resumedBytes,
      bytesPerSecond,
      secondsLeft: left === undefined || bytesPerSecond <= 0 ? undefined : left / bytesPerSecond,
      elapsedSeconds,
      ...extra,
    };
  }
}
