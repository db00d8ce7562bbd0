/**
 * A Transform around a synchronous consumer of bytes (a decryptor, BlobConsumer): each chunk goes
 * to `update`, the end to `final`, and whatever they return is pushed on; a throw fails the stream.
 */
import { Transform, type TransformOptions } from "node:stream";

/** Something that turns bytes into buffers of its own, chunk by chunk, then once at the end. */
export interface ByteConsumer {
  update(bytes: Buffer): Buffer[];
  final(): Buffer[];
}

/** A Transform that runs its chunks through `consumer` (with `options`, e.g. high-water marks). */
export function consumerTransform(consumer: ByteConsumer, options: TransformOptions = {}): Transform {
  return new Transform({
    ...options,
    transform(chunk: Buffer, _encoding, callback) {
      try {
        for (const out of consumer.update(chunk)) this.push(out);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback) {
      try {
        for (const out of consumer.final()) this.push(out);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
