import type { Config } from "../../config/config.js";
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
    errors.add(field, "The callback URL must use https:// on a live deployment.");
    return undefined;
  }
  return value;
}
