/**
 * What the esign kind asks of a third-party signing provider beyond the frame's lifecycle (ADR 0074):
 * a fresh signing URL at each click, the signed PDF once complete, voiding with the owner's reason,
 * and the origins its signing pages live on (the step page's CSP form-action). Types only, so the
 * kind never loads a vendor's code before an account uses it.
 */
import type { EnrichmentProvider } from "../../../../adapters/enrichment-provider/enrichment-provider.js";

/** A signer as the vendor names it: Ferry's recipient id and the name the envelope holds. */
export interface VendorSigner {
  recipient: number;
  name: string;
}

/** An esign provider run by a vendor (DocuSign). */
export interface EsignVendor extends EnrichmentProvider {
  readonly vendor: true;
  /** A signing URL for `signer` in envelope `ref`, requested now; never stored, never e-mailed. */
  signingUrl(ref: string, signer: VendorSigner, returnUrl: string): Promise<string>;
  /** The signed PDF of a completed envelope (the vendor's combined document). */
  signedPdf(ref: string): Promise<Buffer>;
  /** Voids the envelope with the owner's reason (shown to signers). */
  void(ref: string, reason: string): Promise<void>;
  /** Origins of the vendor's signing pages. */
  origins(): string[];
}

/** True when `provider` is an esign vendor (not Ferry's own `local` step). */
export function isEsignVendor(provider: EnrichmentProvider): provider is EsignVendor {
  return (provider as Partial<EsignVendor>).vendor === true;
}

/** The name a signer has at the vendor: the recipient's name, or "Signer <order>" when it has none. */
export function vendorSignerName(name: string, order: number): string {
  const trimmed = name.trim();
  return trimmed === "" ? `Signer ${order}` : trimmed.slice(0, 100);
}

/** Ferry's key of a signer at the vendor (DocuSign's clientUserId): embedded, so nobody is e-mailed. */
export function vendorSignerKey(recipient: number): string {
  return `ferry-recipient-${recipient}`;
}

/** The recipient id of a vendor signer key, or undefined. */
export function recipientOfKey(key: string): number | undefined {
  const match = /^ferry-recipient-([1-9][0-9]{0,15})$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/**
 * The address a vendor records for an embedded signer. Ferry does not hand recipients' addresses
 * to the vendor: signers are embedded (the vendor e-mails nobody) and Ferry authenticated them.
 */
export function vendorSignerEmail(recipient: number): string {
  return `recipient-${recipient}@signers.ferry.invalid`;
}
