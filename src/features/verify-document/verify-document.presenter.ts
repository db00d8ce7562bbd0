import type { VerificationResult } from "../../pdf/index.js";

/** The verdict in one word: what a client branches on. */
export type Verdict = "sealed_unchanged" | "changed_after_sealing" | "not_sealed";

/** A signer as the verify page and its JSON show them (no address or browser). */
export interface PresentedSigner {
  name: string;
  email: string;
  role: string;
  authentication: string[];
  signed_at: string | null;
}

/** What leaves the process for one check (allow-listed). */
export interface PresentedVerification {
  verdict: Verdict;
  sealed_by_ferry: boolean;
  unchanged: boolean;
  document_id: string | null;
  title: string | null;
  sealed_at: string | null;
  original_sha256: string | null;
  sha256: string;
  signers: PresentedSigner[];
}

/** Allow-lists a verification for the page and the JSON answer. */
export function presentVerification(result: VerificationResult): PresentedVerification {
  return {
    verdict: result.sealedByFerry
      ? result.unchanged
        ? "sealed_unchanged"
        : "changed_after_sealing"
      : "not_sealed",
    sealed_by_ferry: result.sealedByFerry,
    unchanged: result.unchanged,
    document_id: result.documentId,
    title: result.title,
    sealed_at: validTime(result.sealedAt),
    original_sha256: result.originalSha256,
    sha256: result.sha256,
    signers: result.signers.map((s) => ({
      name: s.name,
      email: s.email,
      role: s.role,
      authentication: s.authentication,
      signed_at: validTime(s.signedAt),
    })),
  };
}

/** An ISO time from the seal record, or null when it does not read as one. */
function validTime(value: string | null): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
