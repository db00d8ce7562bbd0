/**
 * The pages appended before sealing: the signing certificate (the document, its hashes, each signer
 * with how they were identified, when they consented and signed, from which address and browser)
 * and the audit trail. Written in English, in Noto Sans, on US Letter pages.
 */
import { type PDF, type PDFPage, rgb } from "@libpdf/core";
import type { DocumentFonts } from "./fonts.js";
import type { SealAuditEntry, SealRecord } from "./types.js";

const PAGE = { width: 612, height: 792, margin: 54 } as const;
const MUTED = rgb(0.35, 0.35, 0.4);
const RULE = rgb(0.8, 0.8, 0.85);

/** Words for the authentication methods the certificate names. */
const AUTHENTICATION_WORDS: Record<string, string> = {
  link: "Private link sent to the signer",
  two_factor_code: "One-time code sent to the signer (two-factor)",
  reverse_authentication: "Reverse authentication: the sender was confirmed to the signer",
};

/** "2026-01-15 10:00:00 UTC" from an ISO 8601 time (the text as given when it is not one). */
export function utcTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** Writes lines top to bottom, starting a new page when one is full. */
class PageWriter {
  private page!: PDFPage;
  private y = 0;
  private readonly width = PAGE.width - 2 * PAGE.margin;

  constructor(
    private readonly pdf: PDF,
    private readonly fonts: DocumentFonts,
    private readonly footer: string,
  ) {}

  newPage(): void {
    this.page = this.pdf.addPage({ width: PAGE.width, height: PAGE.height });
    this.y = PAGE.height - PAGE.margin;
    this.fonts.drawLine(this.page, this.footer, {
      x: PAGE.margin,
      y: PAGE.margin / 2,
      size: 7,
      family: "text",
      color: MUTED,
    });
  }

  private room(height: number): void {
    if (this.y - height < PAGE.margin) this.newPage();
  }

  heading(text: string, size = 18): void {
    this.room(size * 2);
    this.y -= size;
    this.fonts.drawLine(this.page, text, { x: PAGE.margin, y: this.y, size, family: "text" });
    this.y -= size * 0.6;
  }

  /** A paragraph, wrapped to the page width. */
  text(text: string, options: { size?: number; indent?: number; muted?: boolean } = {}): void {
    const size = options.size ?? 9.5;
    const indent = options.indent ?? 0;
    for (const line of this.fonts.wrap(text, "text", size, this.width - indent)) {
      this.room(size * 1.4);
      this.y -= size * 1.4;
      this.fonts.drawLine(this.page, line, {
        x: PAGE.margin + indent,
        y: this.y,
        size,
        family: "text",
        ...(options.muted ? { color: MUTED } : {}),
      });
    }
  }

  /** A label and its value; the value wraps beside the label. */
  row(label: string, value: string, labelWidth = 150): void {
    const size = 9.5;
    const lines = this.fonts.wrap(value || "—", "text", size, this.width - labelWidth);
    this.room(size * 1.4 * Math.min(lines.length, 3));
    lines.forEach((line, i) => {
      this.room(size * 1.4);
      this.y -= size * 1.4;
      if (i === 0)
        this.fonts.drawLine(this.page, label, {
          x: PAGE.margin,
          y: this.y,
          size,
          family: "text",
          color: MUTED,
        });
      this.fonts.drawLine(this.page, line, { x: PAGE.margin + labelWidth, y: this.y, size, family: "text" });
    });
  }

  /** Table cells on one row at the given x offsets; each cell wraps within its column. */
  cells(values: string[], columns: number[], options: { muted?: boolean } = {}): void {
    const size = 8.5;
    const widths = columns.map((c, i) => (columns[i + 1] ?? this.width) - c - 6);
    const wrapped = values.map((v, i) => this.fonts.wrap(v || "—", "text", size, widths[i]!));
    const rows = Math.max(...wrapped.map((w) => w.length));
    this.room(size * 1.35 * rows + 4);
    const top = this.y;
    wrapped.forEach((lines, i) => {
      lines.forEach((line, n) => {
        this.fonts.drawLine(this.page, line, {
          x: PAGE.margin + columns[i]!,
          y: top - size * 1.35 * (n + 1),
          size,
          family: "text",
          ...(options.muted ? { color: MUTED } : {}),
        });
      });
    });
    this.y = top - size * 1.35 * rows - 4;
  }

  space(points: number): void {
    this.y -= points;
  }

  rule(): void {
    this.room(8);
    this.y -= 6;
    this.page.drawLine({
      start: { x: PAGE.margin, y: this.y },
      end: { x: PAGE.width - PAGE.margin, y: this.y },
      thickness: 0.5,
      color: RULE,
    });
  }
}

/** Appends the signing certificate and the audit trail pages for `record`. */
export function appendCertificatePages(
  pdf: PDF,
  fonts: DocumentFonts,
  record: SealRecord,
  audit: readonly SealAuditEntry[],
  sealedBy: string,
  verifyUrl: string | undefined,
): void {
  const footer = `${record.title} · document ${record.documentId} · sealed ${utcTime(record.sealedAt)}`;
  const w = new PageWriter(pdf, fonts, footer);
  w.newPage();
  w.heading("Signing certificate");
  w.row("Document", record.title);
  w.row("Document ID", record.documentId);
  w.row("Sealed", utcTime(record.sealedAt));
  w.row("Sealed by", sealedBy);
  w.row("Original SHA-256", record.originalSha256);
  w.row("Completed SHA-256", record.completedSha256);
  w.text(
    `The original SHA-256 is the hash of the file as uploaded. The completed SHA-256 is the hash of the document with every field filled, before these pages: the first ${record.completedLength} bytes of this file. The whole file is sealed with a digital signature (PAdES); any change to it breaks the seal.`,
    { size: 8.5, muted: true },
  );
  if (verifyUrl) w.text(`Check this document at ${verifyUrl}`, { size: 8.5, muted: true });
  w.space(8);
  w.heading(`Signers (${record.signers.length})`, 13);
  for (const signer of record.signers) {
    w.rule();
    w.row("Name", signer.name);
    w.row("Email", signer.email);
    w.row("Role", signer.role);
    w.row("Identified by", signer.authentication.map((a) => AUTHENTICATION_WORDS[a] ?? a).join("; ") || "—");
    w.row("Consented to e-sign", utcTime(signer.consentAt));
    w.row("Signed", utcTime(signer.signedAt));
    w.row("IP address", signer.ip);
    w.row("Browser (user agent)", signer.userAgent);
  }
  w.newPage();
  w.heading("Audit trail");
  w.text(`Every recorded event of document ${record.documentId}, oldest first. Times in UTC.`, {
    size: 8.5,
    muted: true,
  });
  w.space(6);
  const columns = [0, 120, 300, 420];
  w.cells(["Time", "Event", "By", "IP address"], columns, { muted: true });
  w.rule();
  for (const entry of audit) w.cells([utcTime(entry.at), entry.event, entry.actor, entry.ip ?? ""], columns);
}
