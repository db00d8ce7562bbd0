import type { Config } from "../../config/config.js";
import { sha256Hex } from "../../crypto/hashing.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError, notFound, ValidationError } from "../../shared/errors.js";
import { type CheckedImage, checkImage, ImageRefusedError, type ImageType } from "../../shared/images.js";
import { toTimestamp } from "../../shared/time.js";
import { type AuditActor, AuditCode, type AuditWriter, actorFields } from "../audit/index.js";
import {
  type BrandingFontRow,
  type BrandingRow,
  deleteBranding,
  deleteBrandingFonts,
  findBranding,
  findBrandingByHost,
  findBrandingFont,
  findRecipientHost,
  listBrandingFonts,
  upsertBranding,
  upsertBrandingFont,
} from "./branding.repository.js";

/** Largest white-label stylesheet, in bytes of UTF-8 (100 KB). */
export const MAX_CSS_BYTES = 100 * 1024;
/** Largest logo image, in bytes (as uploaded, and as stored once re-encoded). */
export const MAX_LOGO_BYTES = 512 * 1024;
/** Most pixels of a logo (all frames of an animation together): 4096 × 4096. */
export const MAX_LOGO_PIXELS = 4096 * 4096;
/** The image types a logo may have. */
const LOGO_TYPES: readonly ImageType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** Largest font file, in bytes (512 KB). */
export const MAX_FONT_BYTES = 512 * 1024;
/** Most font files one account keeps. */
export const MAX_FONTS = 8;
/** A font's name: a file name ending in the extension of its format. */
export const FONT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.(woff2|woff)$/;

/** A font file as the API shows it; `path` is relative to the account's stylesheet. */
export interface BrandingFontView {
  name: string;
  content_type: string;
  bytes: number;
  sha256: string;
  path: string;
  updated: string;
}

/** Sniffs WOFF2 (`wOF2`) or WOFF (`wOFF`) by magic bytes; undefined for anything else. */
function sniffFontType(bytes: Buffer): "font/woff2" | "font/woff" | undefined {
  const magic = bytes.subarray(0, 4).toString("latin1");
  if (bytes.length >= 48 && magic === "wOF2") return "font/woff2";
  if (bytes.length >= 44 && magic === "wOFF") return "font/woff";
  return undefined;
}

/** What PUT /v1/branding/ sets; every field replaces the stored one (undefined clears it). */
export interface BrandingInput {
  css?: string | null | undefined;
  logo?: Buffer | null | undefined;
  recipient_host?: string | null | undefined;
}

/** Branding as the API shows it (the CSS text, logo metadata, host). */
interface BrandingView {
  css: string;
  css_bytes: number;
  logo: { content_type: string; bytes: number; sha256: string } | null;
  recipient_host: string | null;
  updated: string | null;
}

/** Who changes branding, for the audit entry. */
export interface BrandingCaller {
  /** The API key (application) of the call; null for the dashboard. */
  applicationId: number | null;
  /** The signed-in dashboard user who made the change (named in the audit entry). */
  actor?: AuditActor;
}

/**
 * The recipient page of a request, the one formula every feature uses:
 * `<scheme>://<recipientHost>/r/<identifier>/` when the account has a custom host (the scheme of
 * PUBLIC_BASE_URL, no port), else `<PUBLIC_BASE_URL>/r/<identifier>/`.
 */
export function recipientUrl(
  publicBaseUrl: string,
  recipientHost: string | null | undefined,
  identifier: string,
): string {
  if (!recipientHost) return `${publicBaseUrl}/r/${identifier}/`;
  return `${new URL(publicBaseUrl).protocol}//${recipientHost}/r/${identifier}/`;
}

const HOST_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/**
 * White-label settings of recipient pages: an account's stylesheet (served as a stylesheet from
 * Ferry's origin, after the default one), its logo, and a custom recipient host name.
 */
export class BrandingService {
  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly audit: AuditWriter,
  ) {}

  /** The stored branding row, or undefined. */
  find(accountId: number): Promise<BrandingRow | undefined> {
    return findBranding(this.database.db, accountId);
  }

  /** The account whose branding claims `host` (lower case, no port), or undefined. */
  async accountForHost(host: string): Promise<number | undefined> {
    return (await findBrandingByHost(this.database.db, host))?.account_id;
  }

  /**
   * The account's custom recipient host, or null; read through `ex` (the caller's transaction) or
   * the database when undefined.
   */
  recipientHost(ex: Executor | undefined, accountId: number): Promise<string | null> {
    return findRecipientHost(ex ?? this.database.db, accountId);
  }

  /** The recipient page URL of the account's request `identifier` (see `recipientUrl`). */
  async recipientUrl(ex: Executor | undefined, accountId: number, identifier: string): Promise<string> {
    return recipientUrl(this.config.publicBaseUrl, await this.recipientHost(ex, accountId), identifier);
  }

  /** Branding for GET /v1/branding/; 404 when the account has none. */
  async get(accountId: number): Promise<BrandingView> {
    const row = await this.find(accountId);
    if (!row) throw notFound("Branding");
    return presentBranding(row);
  }

  /**
   * Replaces the account's branding. Throws ValidationError (400) for CSS over 100 KB or with NUL
   * characters, a logo over 512 KB or that is not a PNG/JPEG/GIF/WebP image as checkImage decodes
   * it (the logo stored is its re-encoding, without metadata), or an invalid host name; CONFLICT
   * (409) when another account holds the host name.
   */
  async put(accountId: number, input: BrandingInput, caller: BrandingCaller): Promise<BrandingView> {
    const errors: Record<string, string[]> = {};
    const css = input.css ?? "";
    if (typeof css !== "string") errors.css = ["Must be a string of CSS."];
    else if (Buffer.byteLength(css, "utf8") > MAX_CSS_BYTES)
      errors.css = [`Ensure the stylesheet has no more than ${MAX_CSS_BYTES} bytes.`];
    else if (css.includes("\u0000")) errors.css = ["The stylesheet may not contain NUL characters."];
    let logo: CheckedImage | undefined;
    if (input.logo) {
      if (input.logo.length > MAX_LOGO_BYTES)
        errors.logo = [`The logo is larger than ${MAX_LOGO_BYTES / 1024} KB.`];
      else {
        try {
          logo = await checkImage(input.logo, {
            what: "The logo",
            allowed: LOGO_TYPES,
            maxPixels: MAX_LOGO_PIXELS,
            maxBytes: MAX_LOGO_BYTES,
          });
        } catch (err) {
          if (!(err instanceof ImageRefusedError)) throw err;
          errors.logo = [err.message];
        }
      }
    }
    let host: string | null = null;
    if (input.recipient_host) {
      host = String(input.recipient_host).trim().toLowerCase().replace(/\.$/, "");
      if (!HOST_PATTERN.test(host))
        errors.recipient_host = ["Enter a valid host name, e.g. files.example.com."];
      else if (host === new URL(this.config.publicBaseUrl).hostname)
        errors.recipient_host = ["This is the deployment's own host name."];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const now = toTimestamp(this.clock.now());
    return this.database.db.transaction().execute(async (trx) => {
      if (host) {
        const holder = await findBrandingByHost(trx, host);
        if (holder && holder.account_id !== accountId)
          throw new AppError("CONFLICT", "This recipient host name is used by another account.");
      }
      const existing = await findBranding(trx, accountId);
      const row: BrandingRow = {
        account_id: accountId,
        css,
        css_hash: sha256Hex(css),
        logo_base64: logo ? logo.bytes.toString("base64") : null,
        logo_content_type: logo?.type ?? null,
        logo_hash: logo ? sha256Hex(logo.bytes) : null,
        recipient_host: host,
        created: existing?.created ?? now,
        updated: now,
      };
      await upsertBranding(trx, row);
      await this.audit.write(trx, {
        accountId,
        code: existing ? AuditCode.ENTITY_UPDATED : AuditCode.ENTITY_CREATED,
        apiKeyId: caller.applicationId,
        relatedModel: "branding",
        relationKey: accountId,
        ...actorFields(
          caller.actor,
          `css ${Buffer.byteLength(css, "utf8")} bytes, logo ${logo ? logo.bytes.length : 0} bytes, host ${host ?? "-"}`,
        ),
      });
      return presentBranding(row);
    });
  }

  /** The account's fonts, by name. */
  async listFonts(accountId: number): Promise<BrandingFontView[]> {
    return (await listBrandingFonts(this.database.db, accountId)).map(presentFont);
  }

  /** One font of the account with its bytes (for serving), or undefined. */
  font(accountId: number, name: string): Promise<BrandingFontRow | undefined> {
    if (!FONT_NAME_PATTERN.test(name)) return Promise.resolve(undefined);
    return findBrandingFont(this.database.db, accountId, name);
  }

  /**
   * Stores or replaces the font `name`. Throws ValidationError (400) for a bad name, a file that is
   * not WOFF2/WOFF or does not match the name's extension, or one over 512 KB; CONFLICT (409) when
   * the account already keeps MAX_FONTS other fonts. `created` tells a new name from a replacement.
   */
  async putFont(
    accountId: number,
    name: string,
    bytes: Buffer | null,
    caller: BrandingCaller,
  ): Promise<{ font: BrandingFontView; created: boolean }> {
    if (!FONT_NAME_PATTERN.test(name))
      throw ValidationError.field(
        "name",
        "Name the font like brand-regular.woff2: letters, digits, - or _, then .woff2 or .woff.",
      );
    if (!bytes || bytes.length === 0)
      throw ValidationError.field("file", "Upload a WOFF2 or WOFF font file.");
    if (bytes.length > MAX_FONT_BYTES)
      throw ValidationError.field("file", `The font is larger than ${MAX_FONT_BYTES / 1024} KB.`);
    const type = sniffFontType(bytes);
    if (!type) throw ValidationError.field("file", "Upload a WOFF2 or WOFF font file.");
    if (!name.endsWith(type === "font/woff2" ? ".woff2" : ".woff"))
      throw ValidationError.field(
        "name",
        `The file is ${type.slice(5).toUpperCase()}: end the name in .${type.slice(5)}.`,
      );
    const now = toTimestamp(this.clock.now());
    return this.database.db.transaction().execute(async (trx) => {
      const fonts = await listBrandingFonts(trx, accountId);
      const existing = fonts.find((f) => f.name === name);
      if (!existing && fonts.length >= MAX_FONTS)
        throw new AppError(
          "CONFLICT",
          `The account already keeps ${MAX_FONTS} fonts; delete one before adding another.`,
        );
      const row: BrandingFontRow = {
        account_id: accountId,
        name,
        content_type: type,
        data_base64: bytes.toString("base64"),
        bytes: bytes.length,
        sha256: sha256Hex(bytes),
        created: existing?.created ?? now,
        updated: now,
      };
      await upsertBrandingFont(trx, row);
      await this.audit.write(trx, {
        accountId,
        code: existing ? AuditCode.ENTITY_UPDATED : AuditCode.ENTITY_CREATED,
        apiKeyId: caller.applicationId,
        relatedModel: "branding",
        relationKey: accountId,
        ...actorFields(caller.actor, `font ${name} ${bytes.length} bytes`),
      });
      return { font: presentFont(row), created: !existing };
    });
  }

  /** Deletes the font `name`; 404 when the account has none by that name. */
  async removeFont(accountId: number, name: string, caller: BrandingCaller): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      if (!FONT_NAME_PATTERN.test(name) || (await deleteBrandingFonts(trx, accountId, name)) === 0)
        throw notFound("Font");
      await this.audit.write(trx, {
        accountId,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: caller.applicationId,
        relatedModel: "branding",
        relationKey: accountId,
        ...actorFields(caller.actor, `font ${name}`),
      });
    });
  }

  /** Removes the account's branding and its fonts; 404 when it has neither. */
  async remove(accountId: number, caller: BrandingCaller): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      const fonts = await deleteBrandingFonts(trx, accountId);
      if (!(await deleteBranding(trx, accountId)) && fonts === 0) throw notFound("Branding");
      await this.audit.write(trx, {
        accountId,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: caller.applicationId,
        relatedModel: "branding",
        relationKey: accountId,
        ...actorFields(caller.actor, ""),
      });
    });
  }
}

/** API view of a font (no bytes). */
function presentFont(row: Omit<BrandingFontRow, "data_base64">): BrandingFontView {
  return {
    name: row.name,
    content_type: row.content_type,
    bytes: row.bytes,
    sha256: row.sha256,
    path: `fonts/${row.name}`,
    updated: row.updated,
  };
}

/** Allow-listed API view of a branding row. */
function presentBranding(row: BrandingRow): BrandingView {
  return {
    css: row.css,
    css_bytes: Buffer.byteLength(row.css, "utf8"),
    logo:
      row.logo_base64 && row.logo_content_type && row.logo_hash
        ? {
            content_type: row.logo_content_type,
            bytes: Buffer.from(row.logo_base64, "base64").length,
            sha256: row.logo_hash,
          }
        : null,
    recipient_host: row.recipient_host,
    updated: row.updated,
  };
}
