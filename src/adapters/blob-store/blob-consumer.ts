/**
 * Reading a blob through a synchronous consumer (BlobStore.getThrough): the consumer sees the
 * bytes while the store still owns them, so a store may pass views of a buffer it reuses (the
 * local store's direct reads do) instead of copying every byte into a fresh buffer first.
 */
import { pipeline, type Readable } from "node:stream";
import { consumerTransform } from "../../shared/consumer-transform.js";

/** What BlobStore.getThrough feeds a blob's bytes to. */
export interface BlobConsumer {
  /**
   * Takes the next bytes. `bytes` may be a view of a buffer the store refills as soon as this
   * returns: the consumer must not keep it (nor a view of it) beyond the call, only copies or
   * what it derived. Returns buffers of its own to pass on (never views of `bytes`). Throws to
   * fail the read.
   */
  update(bytes: Buffer): Buffer[];
  /** Called once at the end of the bytes; returns the last buffers to pass on. Throws to fail the read. */
  final(): Buffer[];
}

/**
 * `source` run through `consumer`: a stream of its results, failing with the source's or the
 * consumer's error; destroying it destroys the source. For stores whose streams hand out buffers
 * nobody reuses, where views need no special care.
 */
export function throughConsumer(source: Readable, consumer: BlobConsumer): Readable {
  return pipeline(source, consumerTransform(consumer), () => {});
}
