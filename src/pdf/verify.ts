/**
 * Verification of a sealed PDF in the calling thread (the engine's workers run it): every PAdES
 * signature in the file is checked against the sealing certificates Ferry trusts (the current one
 * and earlier ones), the way a PDF reader checks one: the CMS signature over its signed attributes,
 * the message digest over the bytes its ByteRange names, the ESS signing-certificate-v2 attribute
 * naming that certificate, and whether the range covers the whole file (nothing changed or appended).
 */
import { createHash, type KeyObject, verify, X509Certificate } from "node:crypto";
import { PDF } from "@libpdf/core";
import * as asn1js from "asn1js";
import { Certificate, ContentInfo, IssuerAndSerialNumber, SignedData } from "pkijs";
import { PdfError } from "./errors.js";
import { looksLikePdf } from "./inspect.js";
import { SEAL_RECORD_NAME } from "./seal.js";
import { PDF_LIMITS, type SealRecord, type SealSigner, type VerificationResult } from "./types.js";

const OID = {
  signedData: "1.2.840.113549.1.7.2",
  messageDigest: "1.2.840.113549.1.9.4",
  signingCertificateV2: "1.2.840.113549.1.9.16.2.47",
  rsaEncryption: "1.2.840.113549.1.1.1",
  rsaPss: "1.2.840.113549.1.1.10",
} as const;

const DIGESTS: Record<string, string> = {
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};

/** A trusted sealing certificate, parsed once. */
interface TrustedCertificate {
  der: Uint8Array;
  parsed: Certificate;
  key: KeyObject;
  fingerprint: string;
}

/** What one signature of the file proves. */
interface SignatureCheck {
  /** Made by a trusted certificate: its signature over the signed attributes holds. */
  trusted: TrustedCertificate | undefined;
  /** The bytes its ByteRange names are the bytes that were signed. */
  intact: boolean;
  /** The ByteRange covers the whole file (only the signature itself left out). */
  wholeFile: boolean;
  /** End of the signed revision (offset just after the last signed byte). */
  revisionEnd: number;
}

const trustCache = new WeakMap<readonly Uint8Array[], TrustedCertificate[]>();

function trustedCertificates(ders: readonly Uint8Array[]): TrustedCertificate[] {
  let list = trustCache.get(ders);
  if (!list) {
    list = ders.map((der) => ({
      der,
      parsed: Certificate.fromBER(new Uint8Array(der)),
      key: new X509Certificate(der).publicKey,
      fingerprint: createHash("sha256").update(der).digest("hex"),
    }));
    trustCache.set(ders, list);
  }
  return list;
}

/** Every `/ByteRange [a b c d]` in the file, in file order. */
function byteRanges(file: Buffer): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  let at = file.indexOf("/ByteRange");
  while (at !== -1) {
    const text = file.subarray(at + 10, at + 120).toString("latin1");
    const m = /^\s*\[\s*(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s*\]/.exec(text);
    if (m) out.push([Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])]);
    at = file.indexOf("/ByteRange", at + 10);
  }
  return out;
}

/** The CMS bytes in the gap a ByteRange leaves (`<hex>` and nothing else), or undefined. */
function signatureBytes(file: Buffer, range: [number, number, number, number]): Buffer | undefined {
  const [a, b, c, d] = range;
  if (a !== 0 || b <= 0 || c <= b + 1 || d < 0 || c + d > file.length) return undefined;
  if (file[b] !== 0x3c || file[c - 1] !== 0x3e) return undefined;
  const hex = file
    .subarray(b + 1, c - 1)
    .toString("latin1")
    .replace(/\s+/g, "");
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(hex)) return undefined;
  return Buffer.from(hex, "hex");
}

function equalBytes(a: ArrayBuffer | Uint8Array, b: ArrayBuffer | Uint8Array): boolean {
  const x = Buffer.from(a instanceof Uint8Array ? a : new Uint8Array(a));
  const y = Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b));
  return x.length === y.length && x.equals(y);
}

/** The certHash of the first ESSCertIDv2 of a signing-certificate-v2 value and its digest name. */
function essCertHash(value: asn1js.AsnType): { digest: string; hash: ArrayBuffer } | undefined {
  const certs = (value as asn1js.Sequence).valueBlock?.value?.[0] as asn1js.Sequence | undefined;
  const first = certs?.valueBlock?.value?.[0] as asn1js.Sequence | undefined;
  const parts = first?.valueBlock?.value ?? [];
  let digest = "sha256";
  let i = 0;
  if (parts[0] instanceof asn1js.Sequence) {
    const oid = (parts[0].valueBlock.value[0] as asn1js.ObjectIdentifier).valueBlock.toString();
    const name = DIGESTS[oid];
    if (!name) return undefined;
    digest = name;
    i = 1;
  }
  const hash = parts[i];
  if (!(hash instanceof asn1js.OctetString)) return undefined;
  return { digest, hash: hash.valueBlock.valueHexView.slice().buffer };
}

/** Checks one signature (see SignatureCheck); undefined when it is not a readable CMS signature. */
function checkSignature(
  file: Buffer,
  range: [number, number, number, number],
  trust: TrustedCertificate[],
): SignatureCheck | undefined {
  const cms = signatureBytes(file, range);
  if (!cms) return undefined;
  try {
    const ber = asn1js.fromBER(new Uint8Array(cms));
    if (ber.offset === -1) return undefined;
    const info = new ContentInfo({ schema: ber.result });
    if (info.contentType !== OID.signedData) return undefined;
    const signed = new SignedData({ schema: info.content });
    const signer = signed.signerInfos[0];
    const attrs = signer?.signedAttrs;
    if (!signer || !attrs) return undefined;
    const digest = DIGESTS[signer.digestAlgorithm.algorithmId];
    if (!digest) return undefined;

    // The certificate that made it: one Ferry trusts, named by issuer and serial number.
    const sid = signer.sid;
    const cert =
      sid instanceof IssuerAndSerialNumber
        ? trust.find(
            (t) => t.parsed.issuer.isEqual(sid.issuer) && t.parsed.serialNumber.isEqual(sid.serialNumber),
          )
        : undefined;
    if (!cert) return { trusted: undefined, intact: false, wholeFile: false, revisionEnd: 0 };

    // Its signature over the DER of the signed attributes (tagged as a SET, RFC 5652 section 5.4).
    const toVerify = Buffer.from(attrs.encodedValue);
    toVerify[0] = 0x31;
    const signature = Buffer.from(signer.signature.valueBlock.valueHexView);
    const algorithm = signer.signatureAlgorithm.algorithmId;
    const key =
      algorithm === OID.rsaPss
        ? { key: cert.key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: -2 }
        : cert.key;
    const keyType = cert.key.asymmetricKeyType;
    const verified =
      keyType === "ec"
        ? verify(digest, toVerify, { key: cert.key, dsaEncoding: "der" }, signature)
        : verify(digest, toVerify, key, signature);
    if (!verified) return { trusted: undefined, intact: false, wholeFile: false, revisionEnd: 0 };

    // The signing-certificate-v2 attribute must name that certificate (CAdES, ETSI EN 319 122-1).
    const attribute = (oid: string) => attrs.attributes.find((a) => a.type === oid)?.values[0];
    const ess = attribute(OID.signingCertificateV2);
    const essHash = ess ? essCertHash(ess) : undefined;
    const essMatches =
      essHash !== undefined && equalBytes(essHash.hash, createHash(essHash.digest).update(cert.der).digest());

    const [, b, c, d] = range;
    const hash = createHash(digest)
      .update(file.subarray(0, b))
      .update(file.subarray(c, c + d))
      .digest();
    const messageDigest = attribute(OID.messageDigest) as asn1js.OctetString | undefined;
    const intact =
      essMatches && messageDigest !== undefined && equalBytes(messageDigest.valueBlock.valueHexView, hash);
    return { trusted: cert, intact, wholeFile: intact && c + d === file.length, revisionEnd: c + d };
  } catch {
    return undefined;
  }
}

/** The seal record of a signed revision, when it carries one that reads as one. */
async function readSealRecord(revision: Uint8Array): Promise<SealRecord | undefined> {
  try {
    const pdf = await PDF.load(revision);
    const data = pdf.getAttachment(SEAL_RECORD_NAME);
    if (!data) return undefined;
    const record = JSON.parse(new TextDecoder().decode(data)) as SealRecord;
    if (record.format !== "ferry-seal/1" || !Array.isArray(record.signers)) return undefined;
    return record;
  } catch {
    return undefined;
  }
}

/** Only the signer fields the engine writes, as strings (a record is data, never trusted shape). */
function cleanSigner(s: SealSigner): SealSigner {
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    name: text(s.name),
    email: text(s.email),
    role: text(s.role),
    authentication: Array.isArray(s.authentication)
      ? s.authentication.filter((a) => typeof a === "string")
      : [],
    signedAt: text(s.signedAt),
    ip: text(s.ip),
    userAgent: text(s.userAgent),
    consentAt: text(s.consentAt),
  };
}

/**
 * Verifies `bytes` against the trusted sealing certificates (DER). Throws PdfError PDF_TOO_LARGE or
 * NOT_A_PDF; any other file is answered (a damaged one as not sealed).
 */
export async function verifyInThread(
  bytes: Uint8Array,
  trustedDer: readonly Uint8Array[],
): Promise<VerificationResult> {
  if (bytes.byteLength > PDF_LIMITS.maxBytes)
    throw new PdfError("PDF_TOO_LARGE", "The PDF is larger than 50 MB.");
  if (!looksLikePdf(bytes)) throw new PdfError("NOT_A_PDF", "The file is not a PDF.");
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result: VerificationResult = {
    sealedByFerry: false,
    unchanged: false,
    signers: [],
    sealedAt: null,
    documentId: null,
    title: null,
    originalSha256: null,
    sha256: createHash("sha256").update(file).digest("hex"),
    certificateFingerprint: null,
  };
  const trust = trustedCertificates(trustedDer);
  const checks = byteRanges(file)
    .map((range) => checkSignature(file, range, trust))
    .filter((c): c is SignatureCheck => c?.trusted !== undefined);
  if (checks.length === 0) return result;
  // The seal that proves the most: intact over the whole file, else intact, else any.
  const best =
    checks.find((c) => c.wholeFile) ??
    checks.filter((c) => c.intact).sort((x, y) => y.revisionEnd - x.revisionEnd)[0] ??
    checks[0]!;
  result.sealedByFerry = true;
  result.unchanged = best.wholeFile;
  result.certificateFingerprint = best.trusted!.fingerprint;
  if (!best.intact) return result;
  // The record is read from the signed revision only: bytes appended later cannot change it.
  const record = await readSealRecord(bytes.subarray(0, best.revisionEnd));
  if (record) {
    result.signers = record.signers.map(cleanSigner);
    result.sealedAt = typeof record.sealedAt === "string" ? record.sealedAt : null;
    result.documentId = typeof record.documentId === "string" ? record.documentId : null;
    result.title = typeof record.title === "string" ? record.title : null;
    result.originalSha256 = typeof record.originalSha256 === "string" ? record.originalSha256 : null;
  }
  return result;
}
