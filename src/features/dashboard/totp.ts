import { createRequire } from "node:module";
import { Secret, TOTP } from "otpauth";

/** TOTP of RFC 6238 as authenticator apps use it: SHA-1, 6 digits, 30-second steps. */
const PERIOD = 30;

/** A new random 160-bit TOTP secret in base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret: string, label: string, issuer: string): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: "SHA1",
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(secret),
  });
}

/** The otpauth:// URI an authenticator app reads (issuer and account label included). */
export function totpUri(secret: string, label: string, issuer: string): string {
  return totp(secret, label, issuer).toString();
}

/** The URI as a QR code, an SVG document in a data: URL (allowed by the pages' img-src). */
export async function totpQrDataUrl(uri: string): Promise<string> {
  // Loaded with the first enrolment: a server nobody enrols on never evaluates the QR code encoder.
  const QRCode = createRequire(import.meta.url)("qrcode") as typeof import("qrcode");
  const svg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`;
}

/**
 * The time step a 6-digit `code` belongs to at `now` (one step of drift allowed either way), or
 * undefined when it matches none. The caller refuses steps it already accepted (replays).
 */
export function matchTotpStep(secret: string, code: string, now: Date): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const timestamp = now.getTime();
  const delta = totp(secret, "", "").validate({ token: code, timestamp, window: 1 });
  if (delta === null) return undefined;
  return Math.floor(timestamp / 1000 / PERIOD) + delta;
}

/** The code of `secret` at `now` (tests and tools). */
export function totpCodeAt(secret: string, now: Date): string {
  return totp(secret, "", "").generate({ timestamp: now.getTime() });
}
