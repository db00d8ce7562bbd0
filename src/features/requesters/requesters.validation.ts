import {
  type Body,
  type FieldErrors,
  isValidEmail,
  Messages,
  readPhone,
  readString,
} from "../../shared/validation.js";
import type { RequesterFields } from "./requesters.repository.js";

/** Largest decoded avatar image, in bytes. */
export const AVATAR_MAX_BYTES = 1024 * 1024;
/** Image types an avatar may have. */
export const AVATAR_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;

const SOCIAL = ["facebook", "linkedin", "twitter", "skype"] as const;
const TEXT = ["company", "role", "location"] as const;

/** Media type of an image from its first bytes (png, jpeg, webp), undefined for anything else. */
export function sniffImageType(bytes: Buffer): (typeof AVATAR_TYPES)[number] | undefined {
  if (
    bytes.length >= 8 &&
    bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  )
    return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (
    bytes.length >= 12 &&
    bytes.subarray(0, 4).toString("latin1") === "RIFF" &&
    bytes.subarray(8, 12).toString("latin1") === "WEBP"
  )
    return "image/webp";
  return undefined;
}

/**
 * Checks an avatar given as a data URL (`data:image/png;base64,...`) or bare base64: at most
 * 1 MB decoded, PNG, JPEG or WebP by its content (a declared type must match). Returns the
 * normalised data URL, null to clear, or undefined after recording an error.
 */
export function parseAvatar(raw: unknown, errors: FieldErrors): string | null | undefined {
  if (raw === null || raw === "") return null;
  if (typeof raw !== "string") {
    errors.add("avatar", Messages.notString);
    return undefined;
  }
  let declared: string | undefined;
  let data = raw.trim();
  const match = /^data:([^;,]*)(;[^,]*)?,/i.exec(data);
  if (match) {
    declared = match[1]?.toLowerCase();
    if (!/;base64/i.test(match[2] ?? "")) {
      errors.add("avatar", "The data URL must be base64-encoded (data:image/png;base64,...).");
      return undefined;
    }
    data = data.slice(match[0].length);
  }
  data = data.replace(/\s+/g, "");
  if (data === "" || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(data)) {
    errors.add("avatar", "Upload a valid image: a data URL or base64 of a PNG, JPEG or WebP file.");
    return undefined;
  }
  // 4 base64 characters carry 3 bytes: refuse before decoding anything oversized.
  if (Math.floor((data.length * 3) / 4) > AVATAR_MAX_BYTES + 2) {
    errors.add("avatar", "The image is larger than 1 MB.");
    return undefined;
  }
  const bytes = Buffer.from(data, data.includes("-") || data.includes("_") ? "base64url" : "base64");
  if (bytes.length > AVATAR_MAX_BYTES) {
    errors.add("avatar", "The image is larger than 1 MB.");
    return undefined;
  }
  const type = sniffImageType(bytes);
  if (!type || (declared && declared !== type && !(declared === "image/jpg" && type === "image/jpeg"))) {
    errors.add("avatar", "Upload a valid image: PNG, JPEG or WebP.");
    return undefined;
  }
  return `data:${type};base64,${bytes.toString("base64")}`;
}

/**
 * Reads requester fields. `mode` "create" and "replace" (PUT) require first_name, last_name and
 * email; "replace" also resets omitted optional fields to null; "patch" changes only what is given.
 * Social handles lose a leading `@`.
 */
export function parseRequesterInput(
  body: Body,
  errors: FieldErrors,
  mode: "create" | "replace" | "patch",
): Partial<RequesterFields> {
  const required = mode !== "patch";
  const out: Partial<RequesterFields> = {};
  const first = readString(body, "first_name", errors, { max: 150, required, notBlank: true });
  if (first) out.first_name = first;
  const last = readString(body, "last_name", errors, { max: 150, required, notBlank: true });
  if (last) out.last_name = last;
  const email = readString(body, "email", errors, { max: 254, required, notBlank: true });
  if (email) {
    if (isValidEmail(email)) out.email = email;
    else errors.add("email", Messages.email);
  }
  const mobile = readString(body, "mobile", errors, { max: 32, nullable: true });
  if (mobile === null || mobile === "") out.mobile = null;
  else if (mobile !== undefined) {
    const phone = readPhone(mobile);
    if ("e164" in phone) out.mobile = phone.e164;
    else errors.add("mobile", phone.error);
  }
  for (const key of TEXT) {
    const v = readString(body, key, errors, { max: 255, nullable: true });
    if (v !== undefined) out[key] = v === "" ? null : v;
  }
  for (const key of SOCIAL) {
    const v = readString(body, key, errors, { max: 100, nullable: true });
    if (v === undefined) continue;
    const handle = v?.replace(/^@+/, "") ?? "";
    if (/\s/.test(handle)) errors.add(key, "Enter a username without spaces.");
    else out[key] = handle === "" ? null : handle;
  }
  if (body.avatar !== undefined) {
    const avatar = parseAvatar(body.avatar, errors);
    if (avatar !== undefined) out.avatar = avatar;
  }
  if (mode === "replace") {
    for (const key of ["mobile", ...TEXT, ...SOCIAL, "avatar"] as const) {
      if (body[key] === undefined) out[key] = null;
    }
  }
  return out;
}
