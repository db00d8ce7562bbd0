import type { MediaRow } from "../media/index.js";
import type { RequesterRow } from "../requesters/index.js";
import type { RecipientRequestRow } from "./recipient.repository.js";

/** A social or contact detail shown on the completed page. */
interface DetailItem {
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

/** One file as the pages list it (allow-listed fields only). */
export interface FileView {
  id: number;
  name: string;
  bytes: number;
  sizeLabel: string;
  contentType: string;
  extension: string;
  /** What a person calls the file's type: "PDF document", "JPEG image", "ZIP archive". */
  typeLabel: string;
}

/** Readable names of common file types, by extension. */
const TYPE_LABELS: Record<string, string> = {
  pdf: "PDF document",
  doc: "Word document",
  docx: "Word document",
  odt: "OpenDocument text",
  rtf: "Rich text document",
  txt: "Text file",
  md: "Text file",
  csv: "CSV spreadsheet",
  xls: "Excel spreadsheet",
  xlsx: "Excel spreadsheet",
  ods: "OpenDocument spreadsheet",
  ppt: "PowerPoint presentation",
  pptx: "PowerPoint presentation",
  odp: "OpenDocument presentation",
  jpg: "JPEG image",
  jpeg: "JPEG image",
  png: "PNG image",
  gif: "GIF image",
  webp: "WebP image",
  heic: "HEIC image",
  tif: "TIFF image",
  tiff: "TIFF image",
  svg: "SVG image",
  zip: "ZIP archive",
  "7z": "7-Zip archive",
  rar: "RAR archive",
  gz: "Gzip archive",
  tar: "Tar archive",
  mp3: "MP3 audio",
  wav: "WAV audio",
  m4a: "M4A audio",
  mp4: "MP4 video",
  mov: "QuickTime video",
  webm: "WebM video",
  json: "JSON file",
  xml: "XML file",
  html: "Web page",
  eml: "Email message",
  msg: "Outlook message",
};

/** "PDF document" for a.pdf; by MIME family, else "BIN file", else "File". */
export function fileTypeLabel(extension: string, contentType: string): string {
  const ext = extension.toLowerCase().replace(/^\./, "");
  const known = TYPE_LABELS[ext];
  if (known) return known;
  const family = contentType.split("/")[0];
  if (family === "image") return "Image";
  if (family === "video") return "Video";
  if (family === "audio") return "Audio";
  if (/^[a-z0-9]{1,8}$/.test(ext)) return `${ext.toUpperCase()} file`;
  return "File";
}

/** "3 files · 31.6 MB": how many files and their total size. */
export function filesSummary(files: FileView[]): string {
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  return `${files.length} ${files.length === 1 ? "file" : "files"} · ${formatBytes(total)}`;
}

/** "expires in 14 days", "expires in 5 hours", "expires in 20 minutes", "expires today". */
export function expiresIn(expiresAt: string, now: Date): string {
  const ms = new Date(expiresAt).getTime() - now.getTime();
  if (ms <= 0) return "expired";
  const minutes = Math.floor(ms / 60_000);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (days >= 1) return `expires in ${days} ${days === 1 ? "day" : "days"}`;
  if (hours >= 1) return `expires in ${hours} ${hours === 1 ? "hour" : "hours"}`;
  return `expires in ${Math.max(1, minutes)} ${minutes <= 1 ? "minute" : "minutes"}`;
}

/** Human size with one decimal: 0 B, 999 B, 1.5 KB, 50.0 MB (powers of 1000, as file managers show). */
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
    sizeLabel: formatBytes(Number(m.bytes)),
    contentType: m.content_type,
    extension: m.extension,
    typeLabel: fileTypeLabel(m.extension, m.content_type),
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
  if (row.email) details.push({ label: "Email", value: row.email, href: `mailto:${row.email}` });
  if (row.mobile) details.push({ label: "Mobile", value: row.mobile, href: `tel:${row.mobile}` });
  if (row.company) details.push({ label: "Company", value: row.company });
  if (row.location) details.push({ label: "Location", value: row.location });
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
