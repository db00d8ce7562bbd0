import type { MessageKey, Translator } from "../../shared/i18n/i18n.js";
import type { MediaRow } from "../media/index.js";
import type { RequesterRow } from "../requesters/index.js";
import type { RecipientRequestRow } from "./recipient.repository.js";

/** A social or contact detail shown on the completed page. */
interface DetailItem {
  /** A catalogue key ("card.email") or, for social networks, the network's own name. */
  label: string;
  value: string;
  href?: string | undefined;
}

/** The requester card: picture or initials, name and role (spec: Requester). */
export interface RequesterCardView {
  name: string;
  initials: string;
  role: string | null;
  company: string | null;
  /** URL of the picture (served by the page routes), or null for initials. */
  avatarUrl: string | null;
  /** Completed-page details: email, mobile, company, location, social handles. Empty when blank. */
  details: DetailItem[];
}

/** One file as the pages list it (allow-listed fields only; the page words its size and type). */
export interface FileView {
  id: number;
  name: string;
  bytes: number;
  contentType: string;
  extension: string;
}

/** File kinds by extension: the kind's message and the format's name ("PDF" → "PDF document"). */
const FILE_KINDS: Record<string, [MessageKey, string?]> = {
  pdf: ["filetype.document", "PDF"],
  doc: ["filetype.document", "Word"],
  docx: ["filetype.document", "Word"],
  odt: ["filetype.document", "OpenDocument"],
  rtf: ["filetype.document", "RTF"],
  txt: ["filetype.text"],
  md: ["filetype.text"],
  csv: ["filetype.spreadsheet", "CSV"],
  xls: ["filetype.spreadsheet", "Excel"],
  xlsx: ["filetype.spreadsheet", "Excel"],
  ods: ["filetype.spreadsheet", "OpenDocument"],
  ppt: ["filetype.presentation", "PowerPoint"],
  pptx: ["filetype.presentation", "PowerPoint"],
  odp: ["filetype.presentation", "OpenDocument"],
  jpg: ["filetype.image", "JPEG"],
  jpeg: ["filetype.image", "JPEG"],
  png: ["filetype.image", "PNG"],
  gif: ["filetype.image", "GIF"],
  webp: ["filetype.image", "WebP"],
  heic: ["filetype.image", "HEIC"],
  tif: ["filetype.image", "TIFF"],
  tiff: ["filetype.image", "TIFF"],
  svg: ["filetype.image", "SVG"],
  zip: ["filetype.archive", "ZIP"],
  "7z": ["filetype.archive", "7-Zip"],
  rar: ["filetype.archive", "RAR"],
  gz: ["filetype.archive", "Gzip"],
  tar: ["filetype.archive", "Tar"],
  mp3: ["filetype.audio", "MP3"],
  wav: ["filetype.audio", "WAV"],
  m4a: ["filetype.audio", "M4A"],
  mp4: ["filetype.video", "MP4"],
  mov: ["filetype.video", "QuickTime"],
  webm: ["filetype.video", "WebM"],
  json: ["filetype.file", "JSON"],
  xml: ["filetype.file", "XML"],
  html: ["filetype.webpage"],
  eml: ["filetype.message", "Email"],
  msg: ["filetype.message", "Outlook"],
};

/** "PDF document" for a.pdf (in the reader's language); by MIME family, else "BIN file", else "File". */
export function fileTypeLabel(extension: string, contentType: string, i18n: Translator): string {
  const ext = extension.toLowerCase().replace(/^\./, "");
  const known = Object.hasOwn(FILE_KINDS, ext) ? FILE_KINDS[ext] : undefined;
  if (known) return i18n.t(known[0], { format: known[1] ?? "" });
  const family = contentType.split("/")[0];
  if (family === "image") return i18n.t("filetype.anyImage");
  if (family === "video") return i18n.t("filetype.anyVideo");
  if (family === "audio") return i18n.t("filetype.anyAudio");
  if (/^[a-z0-9]{1,8}$/.test(ext)) return i18n.t("filetype.file", { format: ext.toUpperCase() });
  return i18n.t("filetype.any");
}

/** "3 files · 31.6 MB": how many files and their total size, in the reader's language. */
export function filesSummary(files: FileView[], i18n: Translator): string {
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  return i18n.t("files.summary", { count: files.length, size: i18n.bytes(total) });
}

/** "expires in 14 days", "expires in 5 hours", "expires in 20 minutes" (in the reader's language). */
export function expiresIn(expiresAt: string, now: Date, i18n: Translator): string {
  const ms = new Date(expiresAt).getTime() - now.getTime();
  if (ms <= 0) return i18n.t("files.expired");
  const minutes = Math.floor(ms / 60_000);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (days >= 1) return i18n.t("files.expiresIn.days", { count: days });
  if (hours >= 1) return i18n.t("files.expiresIn.hours", { count: hours });
  return i18n.t("files.expiresIn.minutes", { count: Math.max(1, minutes) });
}

/** Human size in English for API error texts: 0 B, 999 B, 1.5 KB, 50.0 MB (pages use Translator.bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A media row as the pages list it. */
export function presentFile(m: MediaRow): FileView {
  return {
    id: m.id,
    name: m.name,
    bytes: Number(m.bytes),
    contentType: m.content_type,
    extension: m.extension,
  };
}

/** Up to two initials of a name, upper case ("Ada Lovelace" → "AL"); "?" for a blank name. */
function initialsOf(first: string, last: string): string {
  const letters = [first.trim()[0], last.trim()[0]].filter(Boolean).join("");
  return letters ? letters.toUpperCase() : "?";
}

function social(label: string, handle: string | null, base: string | null): DetailItem | undefined {
  const value = handle?.trim().replace(/^@/, "");
  if (!value) return undefined;
  return { label, value, href: base ? `${base}${encodeURIComponent(value)}` : undefined };
}

/** The card of a named requester; `avatarUrl` is where the page serves its picture. */
export function presentRequesterCard(row: RequesterRow, avatarUrl: string | null): RequesterCardView {
  const details: DetailItem[] = [];
  if (row.email) details.push({ label: "card.email", value: row.email, href: `mailto:${row.email}` });
  if (row.mobile) details.push({ label: "card.mobile", value: row.mobile, href: `tel:${row.mobile}` });
  if (row.company) details.push({ label: "card.company", value: row.company });
  if (row.location) details.push({ label: "card.location", value: row.location });
  for (const item of [
    social("LinkedIn", row.linkedin, "https://www.linkedin.com/in/"),
    social("Twitter", row.twitter, "https://twitter.com/"),
    social("Facebook", row.facebook, "https://www.facebook.com/"),
    social("Skype", row.skype, null),
  ]) {
    if (item) details.push(item);
  }
  return {
    name: `${row.first_name} ${row.last_name}`.trim(),
    initials: initialsOf(row.first_name, row.last_name),
    role: row.role?.trim() || null,
    company: row.company?.trim() || null,
    avatarUrl: row.avatar ? avatarUrl : null,
    details,
  };
}

/** The card when a request names no requester: the owner's profile, without completed-page details. */
export function presentOwnerCard(account: { name: string; email: string }): RequesterCardView {
  const name = account.name.trim() || account.email;
  const [first = "", last = ""] = name.split(/\s+/);
  return { name, initials: initialsOf(first, last), role: null, company: null, avatarUrl: null, details: [] };
}

/** True when a push or pull request is past its expiry at `now`. */
export function isExpired(request: RecipientRequestRow, now: Date): boolean {
  if (request.is_expired === 1) return true;
  return (
    !!request.expires_at && request.complete === 0 && new Date(request.expires_at).getTime() <= now.getTime()
  );
}

/** Pull request accepts more files (not complete, not expired). */
export function acceptsUploads(request: RecipientRequestRow, now: Date): boolean {
  return request.type === "pull" && request.complete === 0 && !isExpired(request, now);
}

/** The allowed extensions of a pull request as a list (lower case, no dots); empty = any. */
export function allowedExtensions(request: RecipientRequestRow): string[] {
  return (request.allowed_extensions ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase().replace(/^\./, ""))
    .filter(Boolean);
}
