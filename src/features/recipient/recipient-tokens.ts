import { createHmac } from "node:crypto";
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import { constantTimeEqual } from "../../crypto/hashing.js";

/** Cookie holding the two-factor session of one request (path-scoped). */
export const SESSION_COOKIE = "ferry_tfa";

function csrfMessage(link: string, tfaSession: string | undefined): string {
  return `${link}|${tfaSession ?? "-"}`;
}

/**
 * Keyed MACs of the recipient pages: two-factor code hashes, session cookies and CSRF tokens. Keys
 * are derived from the key ring's "secrets" key of a kid, so rotating the master key rotates them
 * (the kid travels inside each cookie, old kids keep verifying while they stay in the ring).
 */
export class RecipientTokens {
  constructor(private readonly keyRing: KeyRing) {}

  private key(kid: string, label: string): Buffer {
    return createHmac("sha256", this.keyRing.derive(kid, "secrets"))
      .update(`ferry/recipient/${label}`)
      .digest();
  }

  private mac(kid: string, label: string, message: string): string {
    return createHmac("sha256", this.key(kid, label)).update(message).digest("base64url");
  }

  /**
   * Hash of a two-factor code bound to its request: `<kid>:<mac>`. Keyed so that a stolen table
   * cannot be brute-forced over the million possible codes without the key.
   */
  hashCode(requestId: number, code: string): string {
    const kid = this.keyRing.activeKid;
    return `${kid}:${this.mac(kid, "tfa-code", `${requestId}|${code}`)}`;
  }

  /** True when `code` matches a hash from hashCode for the same request (constant time). */
  verifyCode(requestId: number, code: string, stored: string): boolean {
    const sep = stored.indexOf(":");
    const kid = stored.slice(0, sep);
    if (sep < 1 || !this.keyRing.kids().includes(kid)) return false;
    return constantTimeEqual(stored, `${kid}:${this.mac(kid, "tfa-code", `${requestId}|${code}`)}`);
  }

  /**
   * The CSRF token forms and page scripts carry: a MAC of the link (a request's identifier or a
   * session's token) and what the browser's session of it is: the two-factor session cookie's
   * value when the link asks for a code and the browser passed it, else nothing (the link alone
   * is the authority). A token of one link or two-factor session is refused in any other.
   */
  csrfToken(link: string, tfaSession: string | undefined): string {
    const kid = this.keyRing.activeKid;
    return `${kid}.${this.mac(kid, "csrf", csrfMessage(link, tfaSession))}`;
  }

  /** True when `token` was made by csrfToken for this link and two-factor session. */
  verifyCsrf(link: string, tfaSession: string | undefined, token: string | undefined): boolean {
    if (!token) return false;
    const dot = token.indexOf(".");
    const kid = token.slice(0, dot);
    if (dot < 1 || !this.keyRing.kids().includes(kid)) return false;
    return constantTimeEqual(token, `${kid}.${this.mac(kid, "csrf", csrfMessage(link, tfaSession))}`);
  }

  /**
   * The value of a two-factor session cookie for a request, valid until `expiresAt` (epoch
   * seconds): `<kid>.<expiresAt>.<mac>`. Bound to the request's id and identifier.
   */
  sessionValue(requestId: number, identifier: string, expiresAt: number): string {
    const kid = this.keyRing.activeKid;
    return `${kid}.${expiresAt}.${this.mac(kid, "session", `${requestId}|${identifier}|${expiresAt}`)}`;
  }

  /** True when `value` is an unexpired session of this request at `nowSeconds`. */
  verifySession(
    requestId: number,
    identifier: string,
    value: string | undefined,
    nowSeconds: number,
  ): boolean {
    if (!value) return false;
    const [kid, exp, mac] = value.split(".");
    if (!kid || !exp || !mac || !/^\d{1,12}$/.test(exp) || !this.keyRing.kids().includes(kid)) return false;
    if (Number(exp) <= nowSeconds) return false;
    return constantTimeEqual(mac, this.mac(kid, "session", `${requestId}|${identifier}|${exp}`));
  }
}
