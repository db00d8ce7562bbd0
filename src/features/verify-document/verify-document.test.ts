/**
 * /verify/document through HTTP: the page, the upload answered in HTML and in JSON (sealed and
 * unchanged, changed after sealing, not sealed), the refusals (not a PDF, over 50 MB, a browser
 * form without its token or from another site, too many checks from one address), and nothing from
 * the upload kept in the data folder.
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../test/helpers/app.js";
import { multipart } from "../../../test/helpers/media.js";
import { PDF_LIMITS } from "../../pdf/index.js";
import { textPdf } from "../../pdf/testing/fixtures.js";

let t: TestApp;
let sealed: Buffer;
let plain: Buffer;

const BASE = "http://ferry.test";

beforeAll(async () => {
  t = await createTestApp({ VERIFY_DOCUMENT_RATE_LIMIT_PER_IP: "1000" });
  plain = Buffer.from(await textPdf(2));
  const result = await t.ferry.pdf.sealDocument({
    original: plain,
    documentId: "esg_verify_1",
    title: "Service agreement",
    sealedAt: "2026-01-15T10:00:00.000Z",
    fields: [
      {
        id: "sig",
        role: "client",
        type: "signature",
        page: 1,
        x: 72,
        y: 650,
        width: 200,
        height: 50,
        value: { kind: "typed", text: "Ada Client" },
      },
    ],
    signers: [
      {
        name: "Ada Client",
        email: "ada@example.com",
        role: "client",
        authentication: ["link", "two_factor_code"],
        consentAt: "2026-01-15T09:50:00.000Z",
        signedAt: "2026-01-15T09:55:00.000Z",
        ip: "203.0.113.9",
        userAgent: "Mozilla/5.0",
      },
    ],
    audit: [{ at: "2026-01-15T09:55:00.000Z", event: "Signed", actor: "ada@example.com" }],
  });
  sealed = Buffer.from(result.bytes);
});

afterAll(async () => {
  await t?.close();
});

/** Loads the page as a browser would and returns its cookie and form token. */
async function openForm(app = t): Promise<{ cookie: string; token: string }> {
  const res = await app.app.inject({ method: "GET", url: "/verify/document" });
  expect(res.statusCode).toBe(200);
  const cookie = String(res.headers["set-cookie"]).split(";")[0]!;
  const token = /name="csrf_token" value="([^"]+)"/.exec(res.body)?.[1];
  if (!token) throw new Error("no token on the page");
  return { cookie, token };
}

/** Posts `file` like the page's form does (Origin, Fetch Metadata, cookie and token). */
async function postFromPage(file: Buffer, form?: { cookie: string; token: string }) {
  const { cookie, token } = form ?? (await openForm());
  const body = multipart(
    { csrf_token: token },
    { data: file, field: "document", filename: "doc.pdf", type: "application/pdf" },
  );
  return t.app.inject({
    method: "POST",
    url: "/verify/document",
    payload: body.payload,
    headers: {
      ...body.headers,
      cookie,
      origin: BASE,
      "sec-fetch-site": "same-origin",
      "sec-fetch-mode": "navigate",
    },
  });
}

/** Posts `file` as an API client asking for JSON (no browser headers, no token). */
async function postJson(file: Buffer, app = t) {
  const body = multipart({}, { data: file, field: "document", filename: "doc.pdf", type: "application/pdf" });
  return app.app.inject({
    method: "POST",
    url: "/verify/document",
    payload: body.payload,
    headers: { ...body.headers, accept: "application/json" },
  });
}

describe("GET /verify/document", () => {
  it("shows the upload form under the pages' strict headers, in the reader's language", async () => {
    const res = await t.app.inject({ method: "GET", url: "/verify/document" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toContain("text/html");
    expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.body).toContain('enctype="multipart/form-data"');
    expect(res.body).toContain('name="document"');
    expect(res.body).toContain("Check a signed document");
    expect(String(res.headers["set-cookie"])).toMatch(
      /ferry_verify_csrf=.*Path=\/verify\/document.*HttpOnly.*SameSite=Strict/,
    );
    const fr = await t.app.inject({
      method: "GET",
      url: "/verify/document",
      headers: { "accept-language": "fr" },
    });
    expect(fr.body).toContain("Vérifier un document signé");
    const switched = await t.app.inject({ method: "GET", url: "/verify/document?lang=de" });
    expect([switched.statusCode, switched.headers.location]).toEqual([303, "/verify/document"]);
  });
});

describe("POST /verify/document", () => {
  it("answers a sealed, unchanged document with its signers (HTML)", async () => {
    const res = await postFromPage(sealed);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-verdict="sealed_unchanged"');
    expect(res.body).toContain("Sealed by this service and unchanged since it was sealed.");
    expect(res.body).toContain("Ada Client");
    expect(res.body).toContain("esg_verify_1");
    expect(res.body).toContain("private link, one-time code (two-factor)");
    // The address and browser of a signer are on the certificate page, not repeated here.
    expect(res.body).not.toContain("203.0.113.9");
  });

  it("answers in JSON when asked: sealed and unchanged, changed after sealing, not sealed", async () => {
    const ok = await postJson(sealed);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({
      verdict: "sealed_unchanged",
      sealed_by_ferry: true,
      unchanged: true,
      document_id: "esg_verify_1",
      title: "Service agreement",
      sealed_at: "2026-01-15T10:00:00.000Z",
      original_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      signers: [
        {
          name: "Ada Client",
          email: "ada@example.com",
          role: "client",
          authentication: ["link", "two_factor_code"],
          signed_at: "2026-01-15T09:55:00.000Z",
        },
      ],
    });

    const appended = Buffer.concat([sealed, Buffer.from("\n% appended after sealing\n")]);
    const changed = await postJson(appended);
    expect(changed.json()).toMatchObject({
      verdict: "changed_after_sealing",
      sealed_by_ferry: true,
      unchanged: false,
    });

    const flipped = Buffer.from(sealed);
    flipped[200] = flipped[200]! ^ 0x20;
    const tampered = await postJson(flipped);
    expect(tampered.json()).toMatchObject({
      verdict: "changed_after_sealing",
      unchanged: false,
      signers: [],
    });

    const unsealed = await postJson(plain);
    expect(unsealed.json()).toMatchObject({ verdict: "not_sealed", sealed_by_ferry: false, signers: [] });
  });

  it("refuses a file that is not a PDF (400) and a missing file (400), in both forms", async () => {
    const json = await postJson(Buffer.from("GIF89a not a pdf"));
    expect(json.statusCode).toBe(400);
    expect(json.json()).toEqual({ code: "INVALID_REQUEST", detail: "The file is not a PDF." });
    const page = await postFromPage(Buffer.from("GIF89a not a pdf"));
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain("The file is not a PDF.");
    const empty = await postJson(Buffer.alloc(0));
    expect(empty.statusCode).toBe(400);
  });

  it("refuses a file over 50 MB with 413, without reading past the limit", async () => {
    const big = Buffer.alloc(PDF_LIMITS.maxBytes + 1024, 0x20);
    big.write("%PDF-1.7\n");
    const res = await postJson(big);
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("refuses a browser's post without the page's token, or from another site (403)", async () => {
    const { cookie } = await openForm();
    const noToken = await postFromPage(sealed, { cookie, token: "" });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.body).toContain("The form expired or did not come from this page.");
    const body = multipart({}, { data: sealed, field: "document" });
    const crossSite = await t.app.inject({
      method: "POST",
      url: "/verify/document",
      payload: body.payload,
      headers: {
        ...body.headers,
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
        accept: "application/json",
      },
    });
    expect(crossSite.statusCode).toBe(403);
    expect(crossSite.json().code).toBe("NOT_AUTHORIZED");
  });

  it("keeps nothing from the upload in the data folder", async () => {
    await postJson(sealed);
    const dataDir = t.ferry.config.dataDir;
    const before = readdirSync(dataDir, { recursive: true }).sort();
    expect((await postJson(sealed)).statusCode).toBe(200);
    expect(readdirSync(dataDir, { recursive: true }).sort()).toEqual(before);
  });

  it("limits checks per address (429 with Retry-After)", async () => {
    const limited = await createTestApp({ VERIFY_DOCUMENT_RATE_LIMIT_PER_IP: "1" });
    try {
      expect((await postJson(plain, limited)).statusCode).toBe(200);
      const res = await postJson(plain, limited);
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      expect(res.json().code).toBe("RATE_LIMIT_REACHED");
    } finally {
      await limited.close();
    }
  });
});
