/**
 * Sealing in the calling thread (the engine's workers run it; see engine.ts): stamp the fields,
 * save that completed document as an incremental update, append the certificate and audit pages and
 * the seal record, then sign the whole with a PAdES signature (ETSI.CAdES.detached, with the ESS
 * signing-certificate-v2 attribute) from the sealing identity.
 */
import { createHash, X509Certificate } from "node:crypto";
import { P12Signer } from "@libpdf/core";
import { appendCertificatePages } from "./certificate.js";
import { PdfError } from "./errors.js";
import { validateFields } from "./fields.js";
import { DocumentFonts, type FontFamily } from "./fonts.js";
import { displayedSize, openPdf } from "./inspect.js";
import type { SigningIdentity } from "./signing-identity.js";
import { stampFields } from "./stamp.js";
import type { SealInput, SealRecord, SealResult } from "./types.js";

/** Name of the embedded file that carries the seal record (inside the signed bytes). */
export const SEAL_RECORD_NAME = "ferry-seal.json";
/** Name of the signature field of the seal. */
export const SEAL_FIELD_NAME = "FerrySeal";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The signer for an identity, made once per identity (a P12 decrypts slowly). */
const signers = new WeakMap<SigningIdentity, Promise<P12Signer>>();

function signerOf(identity: SigningIdentity): Promise<P12Signer> {
  let signer = signers.get(identity);
  if (!signer) {
    signer = P12Signer.create(identity.p12, identity.passphrase).catch(() => {
      throw new PdfError("SEALING_IDENTITY_INVALID", "The sealing certificate cannot be used to sign.");
    });
    signers.set(identity, signer);
  }
  return signer;
}

/** The subject of the sealing certificate, as the certificate page names it. */
function subjectOf(der: Uint8Array): string {
  const cert = new X509Certificate(der);
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject)?.[1];
  const o = /(?:^|\n)O=([^\n]+)/.exec(cert.subject)?.[1];
  return [cn, o && o !== cn ? o : undefined].filter(Boolean).join(", ") || cert.subject;
}

/** Seals a document (see SealInput); throws PdfError for a refused document, field or value. */
export async function sealInThread(
  input: SealInput & { verifyUrl?: string | undefined },
  identity: SigningIdentity,
  fontFiles: Record<FontFamily, string[]>,
): Promise<SealResult> {
  const sealedAt = input.sealedAt ?? new Date().toISOString();
  const originalSha256 = sha256(input.original);
  const pdf = await openPdf(input.original);
  const problems = validateFields(pdf.getPages().map(displayedSize), input.fields);
  if (problems.length > 0) throw new PdfError("FIELDS_INVALID", problems.map((p) => p.message).join(" "));

  let fonts = new DocumentFonts(pdf, fontFiles);
  stampFields(pdf, fonts, input.fields);
  // An incremental update keeps the original bytes as they were; a document that needed repair
  // cannot take one and is written whole.
  const completed = await pdf.save({ incremental: !pdf.recoveredViaBruteForce, subsetFonts: true });
  const completedSha256 = sha256(completed);
  await pdf.reload(completed);

  const record: SealRecord = {
    format: "ferry-seal/1",
    documentId: input.documentId,
    title: input.title,
    sealedAt,
    originalSha256,
    completedSha256,
    completedLength: completed.byteLength,
    signers: input.signers,
  };
  fonts = new DocumentFonts(pdf, fontFiles);
  appendCertificatePages(pdf, fonts, record, input.audit, subjectOf(identity.certificate), input.verifyUrl);
  pdf.addAttachment(SEAL_RECORD_NAME, new TextEncoder().encode(JSON.stringify(record)), {
    description: "Ferry seal record: the document, its hashes and its signers",
    mimeType: "application/json",
    createdAt: new Date(sealedAt),
    modifiedAt: new Date(sealedAt),
    overwrite: true,
  });
  // Fonts of the certificate pages are subset by the save inside sign().
  const signed = await pdf.sign({
    signer: await signerOf(identity),
    fieldName: SEAL_FIELD_NAME,
    reason: `Sealed after every signer signed: ${input.title}`.slice(0, 200),
    signingTime: new Date(sealedAt),
    subFilter: "ETSI.CAdES.detached",
    level: "B-B",
    digestAlgorithm: "SHA-256",
    estimatedSize: 12_288 + identity.certificate.byteLength * 2,
  });
  return {
    bytes: signed.bytes,
    originalSha256,
    completedSha256,
    sealedSha256: sha256(signed.bytes),
    sealedAt,
  };
}
