/**
 * The esign step's payload (what the owner gives) and result (what happened), read and checked
 * here so the descriptor, the routes and the sandbox helpers share one model.
 */
import { unprocessable, ValidationError } from "../../../../shared/errors.js";
import type { PayloadContext } from "../../enrichment-kind.js";
import type { StoredValue } from "./esign.values.js";

export const FIELD_TYPES = ["signature", "initials", "date", "text", "checkbox"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface EsignSigner {
  recipient: number;
  role: string;
  order: number;
}

export interface EsignField {
  name: string;
  role: string;
  type: FieldType;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  required?: boolean;
}

export interface EsignPayload extends Record<string, unknown> {
  template: number | null;
  /** The account's media holding the PDF to sign (the template's when created from one). */
  document: number | null;
  signers: EsignSigner[];
  fields: EsignField[];
  /** Each page's size in points, from the PDF engine at create. */
  pages?: { width: number; height: number }[];
  /** SHA-256 of the document at create: sealing refuses other bytes. */
  document_sha256?: string;
}

export interface SignedBy {
  at: string;
  ip: string;
  user_agent: string;
  auth: string;
  /** By field name: text and dates as text, checkboxes as booleans, signatures and initials as marks. */
  values: Record<string, StoredValue>;
}

/** What sealing recorded. */
export interface SealFacts {
  at: string;
  original_sha256: string;
  sealed_sha256: string;
}

export interface EsignResult {
  consented: Record<string, string>;
  signed: Record<string, SignedBy>;
  declined?: { at: string; recipient: number; reason: string } | undefined;
  voided_reason?: string | undefined;
  sealed_document?: number | undefined;
  /** Signers back from a vendor's signing page (recipient id → time): recorded, never a completion. */
  returned?: Record<string, string> | undefined;
  seal?: SealFacts | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

function readId(raw: unknown, name: string): number | null {
  if (raw === undefined || raw === null) return null;
  if (!isInt(raw) || raw < 1) throw ValidationError.field(name, "A valid integer is required.");
  return raw;
}

function readName(raw: unknown, field: string): string {
  if (typeof raw !== "string" || raw.trim() === "" || raw.length > 64)
    throw ValidationError.field(field, "A name of 1 to 64 characters is required.");
  return raw.trim();
}

function readSigners(raw: unknown): EsignSigner[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 20)
    throw ValidationError.field("signers", "Give 1 to 20 signers.");
  const signers = raw.map((s, i) => {
    if (!isObject(s)) throw ValidationError.field("signers", `Signer ${i + 1} is not an object.`);
    const unknown = Object.keys(s).filter((k) => !["recipient", "role", "order"].includes(k));
    if (unknown.length)
      throw ValidationError.field("signers", `Signer ${i + 1}: unknown field ${unknown[0]}.`);
    if (!isInt(s.recipient) || s.recipient < 1)
      throw ValidationError.field("signers", `Signer ${i + 1}: recipient must be a recipient id.`);
    const order = s.order === undefined ? i + 1 : s.order;
    if (!isInt(order) || order < 1)
      throw ValidationError.field("signers", `Signer ${i + 1}: order must be a positive integer.`);
    return { recipient: s.recipient, role: readName(s.role, "signers"), order };
  });
  if (new Set(signers.map((s) => s.recipient)).size !== signers.length)
    throw ValidationError.field("signers", "A recipient signs once.");
  if (new Set(signers.map((s) => s.role)).size !== signers.length)
    throw ValidationError.field("signers", "Each signer has its own role.");
  return signers.sort((a, b) => a.order - b.order);
}

/** Reads and checks a list of fields (shape, roles among `roles`, unique names, no overlap). */
export function readFields(raw: unknown, roles: Set<string>): EsignField[] {
  if (!Array.isArray(raw) || raw.length > 500)
    throw ValidationError.field("fields", "Give up to 500 fields.");
  const fields = raw.map((f, i) => {
    if (!isObject(f)) throw ValidationError.field("fields", `Field ${i + 1} is not an object.`);
    const allowed = ["name", "role", "type", "page", "x", "y", "width", "height", "required"];
    const unknown = Object.keys(f).filter((k) => !allowed.includes(k));
    if (unknown.length) throw ValidationError.field("fields", `Field ${i + 1}: unknown field ${unknown[0]}.`);
    const type = FIELD_TYPES.find((t) => t === f.type);
    if (!type)
      throw ValidationError.field("fields", `Field ${i + 1}: type is one of ${FIELD_TYPES.join(", ")}.`);
    if (!isInt(f.page) || f.page < 1 || f.page > 500)
      throw ValidationError.field("fields", `Field ${i + 1}: page is 1 to 500.`);
    const num = (v: unknown, min: number) => typeof v === "number" && Number.isFinite(v) && v >= min;
    if (!num(f.x, 0) || !num(f.y, 0) || !num(f.width, 1) || !num(f.height, 1))
      throw ValidationError.field(
        "fields",
        `Field ${i + 1}: x, y, width and height are non-negative points.`,
      );
    const role = readName(f.role, "fields");
    if (!roles.has(role)) throw unprocessable(`Field ${i + 1}: no signer has the role "${role}".`);
    if (f.required !== undefined && typeof f.required !== "boolean")
      throw ValidationError.field("fields", `Field ${i + 1}: required is a boolean.`);
    const field: EsignField = {
      name: readName(f.name, "fields"),
      role,
      type,
      page: f.page,
      x: f.x as number,
      y: f.y as number,
      width: f.width as number,
      height: f.height as number,
    };
    if (f.required !== undefined) field.required = f.required as boolean;
    return field;
  });
  if (new Set(fields.map((f) => f.name)).size !== fields.length)
    throw ValidationError.field("fields", "Field names are unique.");
  for (let i = 0; i < fields.length; i++)
    for (let j = i + 1; j < fields.length; j++) {
      const a = fields[i] as EsignField;
      const b = fields[j] as EsignField;
      if (
        a.page === b.page &&
        a.x < b.x + b.width &&
        b.x < a.x + a.width &&
        a.y < b.y + b.height &&
        b.y < a.y + a.height
      )
        throw unprocessable(`Fields "${a.name}" and "${b.name}" overlap.`);
    }
  return fields;
}

/** 422 unless every role has a signature or initials field, and every field a signer's role. */
export function checkRoles(fields: EsignField[], roles: Set<string>): void {
  const stray = fields.find((f) => !roles.has(f.role));
  if (stray) throw unprocessable(`Field "${stray.name}": no signer has the role "${stray.role}".`);
  for (const role of roles)
    if (!fields.some((f) => f.role === role && (f.type === "signature" || f.type === "initials")))
      throw unprocessable(`The role "${role}" has no signature or initials field.`);
}

/** Reads the esign fields of a create body (the kind has no update). */
export function readEsignPayload(body: Record<string, unknown>, _ctx: PayloadContext): EsignPayload {
  const template = readId(body.template, "template");
  const document = readId(body.document, "document");
  if (template !== null && document !== null)
    throw ValidationError.field("document", "Give a template or a document, not both.");
  if (template === null && document === null)
    throw ValidationError.field("document", "Give a document (the media id of a PDF) or a template.");
  const signers = readSigners(body.signers);
  const roles = new Set(signers.map((s) => s.role));
  const fields = readFields(body.fields ?? [], roles);
  // From a template without fields of its own, the template's fields are checked once resolved.
  if (template === null || fields.length > 0) checkRoles(fields, roles);
  return { template, document, signers, fields };
}

/** The result as stored (empty before anything happened). */
export function resultOf(raw: Record<string, unknown> | null): EsignResult {
  const r = (raw ?? {}) as Partial<EsignResult>;
  return { ...r, consented: r.consented ?? {}, signed: r.signed ?? {} };
}

/** The signer whose turn it is, or undefined when everybody signed. */
export function nextSigner(payload: EsignPayload, result: EsignResult): EsignSigner | undefined {
  return payload.signers.find((s) => !result.signed[String(s.recipient)]);
}

/** Each signer's state for the API object and the callback. */
export function signerStates(payload: EsignPayload, result: EsignResult) {
  const next = nextSigner(payload, result);
  return payload.signers.map((s) => {
    const signed = result.signed[String(s.recipient)];
    const declined = result.declined?.recipient === s.recipient ? result.declined : undefined;
    const status = signed
      ? ("signed" as const)
      : declined
        ? ("declined" as const)
        : next?.recipient === s.recipient
          ? ("ready" as const)
          : ("waiting" as const);
    return {
      recipient: s.recipient,
      role: s.role,
      order: s.order,
      status,
      signed_at: signed?.at ?? null,
      declined_reason: declined?.reason ?? null,
    };
  });
}
