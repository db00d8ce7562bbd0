import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPdfEngine,
  type FilledField,
  PDF_LIMITS,
  type PdfEngine,
  PdfError,
  type SealInput,
  validateFields,
} from "./index.js";
import { drawnSignaturePng, encryptedPdf, textPdf } from "./testing/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "ferry-pdf-"));
let engine: PdfEngine;
let original: Uint8Array;
let png: Uint8Array;

/** pdfsig's report of a file (poppler-utils). */
function pdfsig(bytes: Uint8Array): string {
  const path = join(dir, `check-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(path, bytes);
  const out = spawnSync("pdfsig", [path], { encoding: "utf8" });
  return `${out.stdout}${out.stderr}`;
}

async function refusal(promise: Promise<unknown>): Promise<PdfError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof PdfError) return err;
    throw err;
  }
  throw new Error("expected a PdfError");
}

function sealInput(fields: FilledField[]): SealInput {
  return {
    original,
    fields,
    documentId: "esg_test_1",
    title: "Lease agreement — Łódź flat",
    sealedAt: "2026-01-15T10:00:00.000Z",
    signers: [
      {
        name: "Jane Tenant",
        email: "jane@example.com",
        role: "tenant",
        authentication: ["link", "two_factor_code"],
        consentAt: "2026-01-15T09:50:00.000Z",
        signedAt: "2026-01-15T09:55:00.000Z",
        ip: "203.0.113.7",
        userAgent:
          "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
      },
      {
        name: "Zoë Ångström",
        email: "zoe@example.com",
        role: "landlord",
        authentication: ["link", "reverse_authentication"],
        consentAt: "2026-01-15T09:57:00.000Z",
        signedAt: "2026-01-15T09:58:00.000Z",
        ip: "2001:db8::1",
        userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)",
      },
    ],
    audit: [
      { at: "2026-01-15T09:40:00.000Z", event: "Document created", actor: "owner@example.com" },
      { at: "2026-01-15T09:55:00.000Z", event: "Signed", actor: "jane@example.com", ip: "203.0.113.7" },
      { at: "2026-01-15T09:58:00.000Z", event: "Signed", actor: "zoe@example.com", ip: "2001:db8::1" },
    ],
  };
}

const placed = (over: Partial<FilledField>): FilledField => ({
  id: "f1",
  role: "tenant",
  type: "signature",
  page: 1,
  x: 72,
  y: 600,
  width: 200,
  height: 50,
  ...over,
});

beforeAll(async () => {
  engine = createPdfEngine({
    identity: { dataDir: dir },
    workers: 1,
    verifyUrl: "https://ferry.example/verify/document",
  });
  original = await textPdf(3, { rotateSecond: 90 });
  png = await drawnSignaturePng();
});

afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("inspectPdf", () => {
  it("reports the displayed size of every page (a rotated page's sides swapped)", async () => {
    const info = await engine.inspectPdf(original);
    expect(info.encrypted).toBe(false);
    expect(info.pages).toEqual([
      { width: 612, height: 792 },
      { width: 792, height: 612 },
      { width: 612, height: 792 },
    ]);
    expect(info.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a file that is not a PDF, as NOT_A_PDF (400)", async () => {
    const err = await refusal(engine.inspectPdf(new TextEncoder().encode("hello, not a pdf")));
    expect([err.reason, err.status]).toEqual(["NOT_A_PDF", 400]);
  });

  it("refuses an encrypted PDF, as PDF_ENCRYPTED (422)", async () => {
    const err = await refusal(engine.inspectPdf(await encryptedPdf()));
    expect([err.reason, err.status]).toEqual(["PDF_ENCRYPTED", 422]);
  });

  it("refuses more than 500 pages, as PDF_TOO_MANY_PAGES (422)", async () => {
    const { PDF } = await import("@libpdf/core");
    const big = PDF.create();
    for (let i = 0; i < PDF_LIMITS.maxPages + 1; i++) big.addPage({ size: "letter" });
    const err = await refusal(engine.inspectPdf(await big.save()));
    expect([err.reason, err.status]).toEqual(["PDF_TOO_MANY_PAGES", 422]);
    expect(err.detail).toContain("501 pages");
  });

  it("refuses more than 50 MB, as PDF_TOO_LARGE (413), before reading it", async () => {
    const bytes = new Uint8Array(PDF_LIMITS.maxBytes + 1);
    bytes.set(new TextEncoder().encode("%PDF-1.7\n"));
    const err = await refusal(engine.inspectPdf(bytes));
    expect([err.reason, err.status]).toEqual(["PDF_TOO_LARGE", 413]);
  });

  it("refuses a damaged PDF, as PDF_UNREADABLE (422)", async () => {
    const err = await refusal(engine.inspectPdf(new TextEncoder().encode("%PDF-1.7\nnothing else")));
    expect([err.reason, err.status]).toEqual(["PDF_UNREADABLE", 422]);
  });
});

describe("validateFields", () => {
  const pages = [
    { width: 612, height: 792 },
    { width: 792, height: 612 },
  ];

  it("accepts fields inside their pages, touching edges included", () => {
    expect(
      validateFields(pages, [
        placed({ id: "a", x: 0, y: 0, width: 612, height: 50 }),
        placed({ id: "b", x: 0, y: 50, width: 100, height: 20 }),
        placed({ id: "c", page: 2, x: 692, y: 562, width: 100, height: 50 }),
      ]),
    ).toEqual([]);
  });

  it("finds a field off its page, on a missing page, too small, or with a reused id", () => {
    const problems = validateFields(pages, [
      placed({ id: "right", x: 500, width: 200 }),
      placed({ id: "below", page: 2, y: 600, height: 50 }),
      placed({ id: "negative", x: -1 }),
      placed({ id: "nowhere", page: 3 }),
      placed({ id: "tiny", y: 10, width: 2 }),
      placed({ id: "tiny", y: 100 }),
    ]);
    expect(problems.map((p) => [p.fieldId, p.code])).toEqual([
      ["right", "OFF_PAGE"],
      ["below", "OFF_PAGE"],
      ["negative", "OFF_PAGE"],
      ["nowhere", "PAGE_MISSING"],
      ["tiny", "TOO_SMALL"],
      ["tiny", "DUPLICATE_ID"],
    ]);
  });

  it("finds overlapping fields on the same page only", () => {
    const problems = validateFields(pages, [
      placed({ id: "a", x: 100, y: 100, width: 100, height: 40 }),
      placed({ id: "b", x: 150, y: 120, width: 100, height: 40 }),
      placed({ id: "c", page: 2, x: 150, y: 120, width: 100, height: 40 }),
    ]);
    expect(problems).toEqual([expect.objectContaining({ fieldId: "b", otherFieldId: "a", code: "OVERLAP" })]);
  });
});

describe("sealDocument and verifyDocument", () => {
  let sealed: Uint8Array;

  beforeAll(async () => {
    const result = await engine.sealDocument(
      sealInput([
        placed({ id: "sig-tenant", value: { kind: "typed", text: "Jane Tenant" } }),
        placed({ id: "sig-landlord", role: "landlord", y: 670, value: { kind: "drawn", png } }),
        placed({
          id: "date",
          type: "date",
          y: 730,
          width: 120,
          height: 20,
          value: { kind: "text", text: "15 January 2026" },
        }),
        placed({
          id: "agree",
          type: "checkbox",
          x: 300,
          y: 730,
          width: 16,
          height: 16,
          value: { kind: "checkbox", checked: true },
        }),
        placed({
          id: "initials",
          type: "initials",
          page: 2,
          x: 700,
          y: 540,
          width: 60,
          height: 40,
          value: { kind: "typed", text: "JT" },
        }),
        placed({
          id: "note",
          type: "text",
          page: 3,
          x: 72,
          y: 60,
          width: 300,
          height: 20,
          value: { kind: "text", text: "Keys: 2 sets — Привет" },
        }),
      ]),
    );
    sealed = result.bytes;
    writeFileSync(join(dir, "sealed.pdf"), sealed);
    expect(result.sealedAt).toBe("2026-01-15T10:00:00.000Z");
    expect(result.originalSha256).toBe((await engine.inspectPdf(original)).sha256);
  });

  it("writes a PAdES signature that pdfsig reports valid over the total document", () => {
    const report = pdfsig(sealed);
    expect(report).toContain("Signature Type: ETSI.CAdES.detached");
    expect(report).toContain("Total document signed");
    expect(report).toContain("Signature Validation: Signature is Valid.");
    expect(report).toContain("Signing Hash Algorithm: SHA-256");
  });

  it("carries the ESS signing-certificate-v2 signed attribute", () => {
    const report = execFileSync("pdfsig", ["-dump", join(dir, "sealed.pdf")], { cwd: dir, encoding: "utf8" });
    expect(report).toContain("Signature #0");
    const cms = readFileSync(join(dir, "sealed.pdf.sig0"));
    // id-aa-signingCertificateV2, 1.2.840.113549.1.9.16.2.47, DER-encoded.
    expect(cms.includes(Buffer.from("060b2a864886f70d010910022f", "hex"))).toBe(true);
  });

  it("appends the signing certificate and audit pages after the original pages", async () => {
    const info = await engine.inspectPdf(sealed);
    expect(info.pages.length).toBeGreaterThanOrEqual(5);
    const path = join(dir, "sealed.pdf");
    const text = execFileSync("pdftotext", ["-layout", path, "-"], { encoding: "utf8" });
    expect(text).toContain("Signing certificate");
    expect(text).toContain("Jane Tenant");
    expect(text).toContain("Zoë Ångström");
    expect(text).toContain("One-time code sent to the signer (two-factor)");
    expect(text).toContain("Reverse authentication");
    expect(text).toContain("203.0.113.7");
    expect(text).toContain("Audit trail");
    expect(text).toContain("https://ferry.example/verify/document");
    const { sha256 } = await engine.inspectPdf(original);
    expect(text).toContain("Original SHA-256");
    expect(text).toContain(sha256.slice(0, 24));
  });

  it("stamps the values onto their pages, upright on a rotated page", () => {
    const path = join(dir, "sealed.pdf");
    const page2 = execFileSync("pdftotext", ["-f", "2", "-l", "2", path, "-"], { encoding: "utf8" });
    expect(page2).toContain("JT");
    const page3 = execFileSync("pdftotext", ["-f", "3", "-l", "3", path, "-"], { encoding: "utf8" });
    expect(page3).toContain("Keys: 2 sets — Привет");
    const page1 = execFileSync("pdftotext", ["-f", "1", "-l", "1", path, "-"], { encoding: "utf8" });
    expect(page1).toContain("Jane Tenant");
    expect(page1).toContain("15 January 2026");
  });

  it("verifies its own seal: sealed by Ferry, unchanged, with signers and times", async () => {
    const result = await engine.verifyDocument(sealed);
    expect(result).toMatchObject({
      sealedByFerry: true,
      unchanged: true,
      documentId: "esg_test_1",
      sealedAt: "2026-01-15T10:00:00.000Z",
      title: "Lease agreement — Łódź flat",
      certificateFingerprint: await engine.sealingCertificateFingerprint(),
    });
    expect(result.signers.map((s) => [s.name, s.authentication])).toEqual([
      ["Jane Tenant", ["link", "two_factor_code"]],
      ["Zoë Ångström", ["link", "reverse_authentication"]],
    ]);
  });

  it("detects one changed byte (pdfsig and verifyDocument)", async () => {
    const tampered = new Uint8Array(sealed);
    const at = Buffer.from(tampered).indexOf("Agreement, page 1");
    // The text is drawn from a compressed stream in most writers; change a byte of the file either way.
    const index = at > 0 ? at : 400;
    tampered[index] = tampered[index]! ^ 0x01;
    expect(pdfsig(tampered)).not.toContain("Signature is Valid.");
    const result = await engine.verifyDocument(tampered);
    expect(result).toMatchObject({ sealedByFerry: true, unchanged: false, signers: [] });
  });

  it("detects an incremental update after sealing, and still names the signers of the sealed revision", async () => {
    const { PDF } = await import("@libpdf/core");
    const pdf = await PDF.load(sealed);
    pdf.getPage(0)!.drawText("PAID IN FULL", { x: 300, y: 300, size: 30 });
    const updated = await pdf.save({ incremental: true });
    expect(Buffer.from(updated.subarray(0, sealed.length)).equals(Buffer.from(sealed))).toBe(true);
    expect(pdfsig(updated)).not.toContain("Total document signed");
    const result = await engine.verifyDocument(updated);
    expect(result).toMatchObject({ sealedByFerry: true, unchanged: false, documentId: "esg_test_1" });
    expect(result.signers).toHaveLength(2);
  });

  it("answers not sealed for a PDF without Ferry's seal, or sealed with another certificate", async () => {
    expect(await engine.verifyDocument(original)).toMatchObject({ sealedByFerry: false, unchanged: false });
    const other = createPdfEngine({ identity: { dataDir: mkdtempSync(join(dir, "other-")) } });
    try {
      const foreign = await other.sealDocument(sealInput([]));
      expect(pdfsig(foreign.bytes)).toContain("Signature is Valid.");
      expect(await engine.verifyDocument(foreign.bytes)).toMatchObject({ sealedByFerry: false, signers: [] });
    } finally {
      await other.close();
    }
  });

  it("trusts an earlier certificate given as a previous one", async () => {
    const otherDir = mkdtempSync(join(dir, "earlier-"));
    const earlier = createPdfEngine({ identity: { dataDir: otherDir } });
    const oldSeal = await earlier.sealDocument(sealInput([]));
    await earlier.close();
    // The certificate of the earlier identity, as an operator would export it (PEM).
    const certPem = execFileSync(
      "openssl",
      [
        "pkcs12",
        "-in",
        join(otherDir, "esign-seal.p12"),
        "-nokeys",
        "-clcerts",
        "-passin",
        `file:${join(otherDir, "esign-seal.passphrase")}`,
      ],
      { encoding: "utf8" },
    );
    writeFileSync(join(dir, "old-cert.pem"), certPem);
    const current = createPdfEngine({
      identity: { dataDir: dir, previousCertificates: [join(dir, "old-cert.pem")] },
    });
    try {
      expect(await current.verifyDocument(oldSeal.bytes)).toMatchObject({
        sealedByFerry: true,
        unchanged: true,
      });
    } finally {
      await current.close();
    }
  });

  it("refuses fields that do not fit and values that do not suit their field, before sealing", async () => {
    const off = await refusal(engine.sealDocument(sealInput([placed({ x: 500, width: 200 })])));
    expect([off.reason, off.status]).toEqual(["FIELDS_INVALID", 422]);
    const overlap = await refusal(
      engine.sealDocument(sealInput([placed({ id: "a" }), placed({ id: "b", x: 100 })])),
    );
    expect(overlap.reason).toBe("FIELDS_INVALID");
    expect(overlap.detail).toContain("overlaps");
    const wrong = await refusal(
      engine.sealDocument(sealInput([placed({ type: "checkbox", value: { kind: "typed", text: "x" } })])),
    );
    expect([wrong.reason, wrong.status]).toEqual(["FIELD_VALUE_INVALID", 422]);
    const notPng = await refusal(
      engine.sealDocument(sealInput([placed({ value: { kind: "drawn", png: new Uint8Array([1, 2, 3]) } })])),
    );
    expect(notPng.reason).toBe("FIELD_VALUE_INVALID");
  });

  it("creates the self-signed sealing identity once, readable by its owner only", () => {
    expect(statSync(join(dir, "esign-seal.p12")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "esign-seal.passphrase")).mode & 0o777).toBe(0o600);
  });
});
