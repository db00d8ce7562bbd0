/** Messages between the PDF engine's pool and its workers. */
import type { PdfErrorReason } from "./errors.js";
import type { SigningIdentity } from "./signing-identity.js";
import type { SealInput } from "./types.js";

/** A task posted to a worker. */
export type PdfTask =
  | { id: number; kind: "inspect"; bytes: Uint8Array }
  | {
      id: number;
      kind: "seal";
      input: SealInput & { verifyUrl?: string | undefined };
      identity: SigningIdentity;
    }
  | { id: number; kind: "verify"; bytes: Uint8Array; trusted: readonly Uint8Array[] };

/** A worker's answer to task `id`. */
export type PdfTaskAnswer =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; reason: PdfErrorReason; detail: string };
