/**
 * Thrown or emitted when ciphertext fails authentication or is structurally wrong (bad header,
 * truncated, extended, reordered, wrong key or part). The message never contains key material.
 */
export class IntegrityError extends Error {
  override readonly name = "IntegrityError";
  /** Stable machine-readable code for logs and error mapping. */
  readonly code = "INTEGRITY_FAILURE";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
