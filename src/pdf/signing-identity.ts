/**
 * The sealing identity: the operator's PKCS#12 file (ESIGN_SIGNING_P12 and its passphrase) or, when
 * none is configured, a self-signed one created at first start in the data folder (mode 0600) with a
 * random passphrase beside it (mode 0600). The certificate is what verification trusts.
 */
import { createHash, generateKeyPair, randomBytes, X509Certificate } from "node:crypto";
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { P12Signer } from "@libpdf/core";
import forge from "node-forge";
import { PdfError } from "./errors.js";

/** Where the sealing identity comes from (built from Config by the composition root). */
export interface SigningIdentityOptions {
  /** ESIGN_SIGNING_P12: path of the operator's PKCS#12 file; unset: the self-signed one in `dataDir`. */
  p12Path?: string | undefined;
  /** ESIGN_SIGNING_P12_PASSPHRASE. */
  p12Passphrase?: string | undefined;
  /** FERRY_DATA_DIR (absolute). */
  dataDir: string;
  /** Extra certificates (PEM or DER file paths) whose seals still verify: earlier identities. */
  previousCertificates?: readonly string[] | undefined;
  /** Organisation named in a self-signed certificate's subject. */
  organisation?: string | undefined;
}

/** A loaded identity: the PKCS#12 bytes for the signer and the certificates verification trusts. */
export interface SigningIdentity {
  readonly p12: Uint8Array;
  readonly passphrase: string;
  /** DER of the signing certificate. */
  readonly certificate: Uint8Array;
  /** DER of every certificate whose seals verify (the signing one first). */
  readonly trusted: readonly Uint8Array[];
}

/** File names of the self-signed identity inside the data folder. */
export const SELF_SIGNED_P12 = "esign-seal.p12";
export const SELF_SIGNED_PASSPHRASE = "esign-seal.passphrase";

/**
 * Loads the identity, creating the self-signed one first when no P12 is configured and none exists
 * (the key is generated off the event loop; two processes starting at once agree on one file).
 * Throws PdfError SEALING_IDENTITY_INVALID when the P12 cannot be read with its passphrase.
 */
export async function loadSigningIdentity(options: SigningIdentityOptions): Promise<SigningIdentity> {
  let p12: Uint8Array;
  let passphrase: string;
  if (options.p12Path) {
    p12 = readFileSync(options.p12Path);
    passphrase = options.p12Passphrase ?? "";
  } else {
    const p12File = join(options.dataDir, SELF_SIGNED_P12);
    const passFile = join(options.dataDir, SELF_SIGNED_PASSPHRASE);
    if (!existsSync(passFile)) await createSelfSigned(p12File, passFile, options.organisation ?? "Ferry");
    // Another process that won the creation may still be writing its P12.
    for (let waited = 0; !existsSync(p12File) && waited < 10_000; waited += 50) await sleep(50);
    p12 = readFileSync(p12File);
    passphrase = readFileSync(passFile, "utf8").trim();
  }
  const certificate = await certificateOf(p12, passphrase);
  const trusted = [certificate, ...(options.previousCertificates ?? []).map(readCertificateFile)];
  return { p12, passphrase, certificate, trusted };
}

/** SHA-256 fingerprint of a DER certificate, lower-case hex. */
export function certificateFingerprint(der: Uint8Array): string {
  return createHash("sha256").update(der).digest("hex");
}

/** DER of the certificate that goes with the P12's private key (RSA or EC keys, as the signer reads them). */
async function certificateOf(p12: Uint8Array, passphrase: string): Promise<Uint8Array> {
  try {
    return (await P12Signer.create(p12, passphrase)).certificate;
  } catch {
    throw new PdfError(
      "SEALING_IDENTITY_INVALID",
      "The sealing certificate (ESIGN_SIGNING_P12) cannot be read with its passphrase.",
    );
  }
}

function readCertificateFile(path: string): Uint8Array {
  return new Uint8Array(new X509Certificate(readFileSync(path)).raw);
}

/**
 * Writes a self-signed RSA-3072 certificate (10 years, digitalSignature and nonRepudiation, SHA-256)
 * and its key as a PKCS#12 file (AES-256), mode 0600. The passphrase file is linked into place
 * first and only if absent: the process that links it writes the P12; any other discards its own.
 */
async function createSelfSigned(p12File: string, passFile: string, organisation: string): Promise<void> {
  mkdirSync(dirname(p12File), { recursive: true, mode: 0o700 });
  const { privateKey, publicKey } = await promisify(generateKeyPair)("rsa", { modulusLength: 3072 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: "pkcs1", format: "pem" }) as string);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: "spki", format: "pem" }) as string);
  // A positive serial of 16 random bytes (RFC 5280 allows up to 20).
  cert.serialNumber = `01${randomBytes(15).toString("hex")}`;
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + 10 * 365 * 86_400_000);
  const subject = [
    { name: "commonName", value: `${organisation} document seal` },
    { name: "organizationName", value: organisation },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, nonRepudiation: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(key, forge.md.sha256.create());
  const passphrase = randomBytes(24).toString("base64url");
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, [cert], passphrase, {
    algorithm: "aes256",
    friendlyName: "ferry-seal",
  });
  const der = forge.asn1.toDer(asn1).getBytes();
  const p12Temp = writeTemporary(p12File, Buffer.from(der, "binary"));
  const passTemp = writeTemporary(passFile, Buffer.from(passphrase, "utf8"));
  try {
    linkSync(passTemp, passFile);
  } catch (err) {
    rmSync(p12Temp, { force: true });
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return;
  } finally {
    rmSync(passTemp, { force: true });
  }
  renameSync(p12Temp, p12File);
}

function writeTemporary(path: string, data: Buffer): string {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, data, { mode: 0o600 });
  chmodSync(temp, 0o600);
  return temp;
}
