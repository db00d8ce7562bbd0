import { isIP } from "node:net";
import { isRefusedAddress } from "../../adapters/http-client/address-guard.js";
import { type AddressResolver, resolveWithSystem } from "../../adapters/http-client/http-client.js";
import type { Config } from "../../config/config.js";
import { ValidationError } from "../../shared/errors.js";
import type { FieldErrors } from "../../shared/validation.js";

/**
 * Checks a callback URL: absolute http(s) with a host, https on a live deployment unless
 * ALLOW_HTTP_CALLBACKS_IN_LIVE. Returns the string as given (query string kept verbatim).
 */
export function checkCallbackUrl(
  value: string,
  config: Pick<Config, "FERRY_ENVIRONMENT" | "ALLOW_HTTP_CALLBACKS_IN_LIVE">,
  errors: FieldErrors,
  field = "callback_url",
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    errors.add(field, "Enter a valid URL.");
    return undefined;
  }
  if (
    (parsed.protocol !== "http:" && parsed.protocol !== "https:") ||
    parsed.hostname === "" ||
    /\s/.test(value)
  ) {
    errors.add(field, "Enter a valid URL: an absolute http:// or https:// address.");
    return undefined;
  }
  if (
    parsed.protocol === "http:" &&
    config.FERRY_ENVIRONMENT === "live" &&
    !config.ALLOW_HTTP_CALLBACKS_IN_LIVE
  ) {
    errors.add(
      field,
      "The callback URL must use https:// on a live deployment (the setting ALLOW_HTTP_CALLBACKS_IN_LIVE=true allows http://).",
    );
    return undefined;
  }
  return value;
}

/** How long the destination check waits for DNS before accepting the URL (deliveries check again). */
const RESOLVE_LIMIT_MS = 2000;

/**
 * Refuses, when a request or container is saved, a callback URL that deliveries would refuse: a host
 * that is, or resolves to, a loopback, private, link-local or other non-public address (the same
 * address guard as deliveries), unless FERRY_ALLOW_PRIVATE_CALLBACKS. A name that does not resolve
 * now is accepted: DNS may not be set up yet, and each delivery resolves it again. Throws a 400
 * ValidationError naming the reason and the setting that would allow it.
 */
export async function checkCallbackDestination(
  url: string,
  config: Pick<Config, "FERRY_ALLOW_PRIVATE_CALLBACKS">,
  field = "callback_url",
  resolver: AddressResolver = resolveWithSystem,
): Promise<void> {
  if (config.FERRY_ALLOW_PRIVATE_CALLBACKS) return;
  let hostname: string;
  try {
    hostname = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return; // checkCallbackUrl reports malformed URLs.
  }
  const addresses = isIP(hostname) ? [hostname] : await resolveQuietly(hostname, resolver);
  const refused = addresses.find((address) => isRefusedAddress(address));
  if (refused === undefined) return;
  const where = refused === hostname ? `is ${refused}` : `resolves to ${refused}`;
  throw ValidationError.field(
    field,
    `The callback URL's host ${where}, a loopback, private or other non-public address that callbacks are never delivered to (the setting FERRY_ALLOW_PRIVATE_CALLBACKS=true allows such addresses, for development only).`,
  );
}

async function resolveQuietly(hostname: string, resolver: AddressResolver): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), RESOLVE_LIMIT_MS);
  });
  try {
    const lookup = resolver(hostname).then(
      (answers) => answers.map((a) => a.address),
      () => [],
    );
    return await Promise.race([lookup, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
