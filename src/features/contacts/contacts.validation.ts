/**
 * Contact method rules: the channels (`interface_class`) and the value each accepts.
 */
import {
  type FieldErrors,
  isValidEmail,
  Messages,
  readPhone,
  requireSmsCapable,
} from "../../shared/validation.js";

/** Contact method channels (spec: Contact Method interface_class). */
export const INTERFACE_CLASSES = ["email", "sms"] as const;

/** One contact method channel. */
export type InterfaceClass = (typeof INTERFACE_CLASSES)[number];

/**
 * Checks a contact method value for its channel and returns it normalised (trimmed email,
 * compact E.164); records the error under `field` and returns undefined when invalid.
 */
export function checkMethodValue(
  interfaceClass: InterfaceClass,
  value: string,
  errors: FieldErrors,
  field: string,
): string | undefined {
  if (interfaceClass === "email") {
    if (isValidEmail(value)) return value;
    errors.add(field, Messages.email);
    return undefined;
  }
  const phone = readPhone(value);
  if ("e164" in phone) {
    requireSmsCapable(phone.e164, field);
    return phone.e164;
  }
  errors.add(field, phone.error);
  return undefined;
}
