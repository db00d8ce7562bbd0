/**
 * The esign step in the recipient's session through HTTP: the consent first, then the signing view
 * under the signing page's CSP; the document served read-only to a signer who consented (GET and
 * HEAD, no-store, nothing changed); every server-side check of a finish post refused with the page
 * again and nothing stored; a later signer waiting; a decline needing a reason; the page in every
 * recipient language.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson, type Json } from "../../../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../../../test/helpers/app.js";
import { addRecipient, sendContainer, sessionOf } from "../../../../../test/helpers/containers.js";
import {
  agreementStep,
  ESIGN_PATH,
  makeAgreementPdf,
  pngDataUrl,
} from "../../../../../test/helpers/esign.js";
import { capturedCode, PageBrowser } from "../../../../../test/helpers/page-browser.js";
import { CATALOGUES, SUPPORTED_LOCALES } from "../../../../shared/i18n/i18n.js";

let t: TestApp;
let owner: TestAccount;
const call = apiCaller(
  () => t,
  () => owner,
);

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
});
afterAll(async () => t?.close());

/** A sent agreement step and the two signers' browsers on its step page. */
async function opened(extra: Json = {}) {
  const s = await agreementStep(call, extra);
  const tokens = await sendContainer(call, s.c.id);
  const ada = new PageBrowser(t, sessionOf(tokens, s.ada).base);
  const bob = new PageBrowser(t, sessionOf(tokens, s.bob).base);
  const path = `steps/${s.step.id}/`;
  return { ...s, tokens, adaPage: ada, bobPage: bob, path };
}

const textOf = (html: string) =>
  html
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

async function consentCount(featureId: number): Promise<number> {
  const rows = await t.ferry.database.db
    .selectFrom("consents")
    .select("id")
    .where("feature_id", "=", featureId)
    .execute();
  return rows.length;
}

const getStep = async (id: number) => expectJson(await call("GET", `${ESIGN_PATH}${id}/`), 200);

/** Buyer values that pass every check; a test replaces one of them. */
async function goodValues(): Promise<Record<string, unknown>> {
  return {
    buyer_name: "Ada Lovelace",
    buyer_agree: true,
    buyer_note: "",
    buyer_date: "2026-11-28",
    buyer_sig: { method: "typed", text: "Ada Lovelace", image: await pngDataUrl() },
  };
}

describe("the esign step page", () => {
  it("shows the consent first, records it, then the signing view under the signing CSP", async () => {
    const { step, adaPage, path } = await opened();
    const page = await adaPage.get(path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="esign-consent"');
    expect(page.body).not.toContain("fy-signing-data");
    expect(String(page.headers["content-security-policy"])).not.toContain("worker-src");
    const consent = await adaPage.post(`${path}act`, { action: "consent" });
    expect(consent.statusCode).toBe(303);
    expect(consent.headers.location).toBe(`${adaPage.base}${path}`);
    expect(await consentCount(step.id)).toBe(1);
    expect((await getStep(step.id)).status).toBe("viewed");
    const signing = await adaPage.get(path);
    expect(signing.statusCode).toBe(200);
    expect(signing.body).toContain('id="fy-signing-data"');
    const csp = String(signing.headers["content-security-policy"]);
    expect(csp).toContain("worker-src 'self'");
    expect(csp).toMatch(/font-src [^;]*\/static\//);
    const data = JSON.parse(
      /<script type="application\/json" id="fy-signing-data">(.*?)<\/script>/s.exec(signing.body)![1]!,
    ) as Json;
    expect(data.pdfUrl).toBe(`${adaPage.base}${path}files/document.pdf`);
    expect(data.signerName).toBe("Ada Lovelace");
    // Only the buyer's fields, moved to a top-left origin on the letter page (792 points high).
    expect(data.fields.map((f: Json) => f.id)).toEqual([
      "buyer_name",
      "buyer_agree",
      "buyer_note",
      "buyer_date",
      "buyer_sig",
    ]);
    expect(data.fields[0]).toMatchObject({ page: 1, x: 72, y: 792 - 300 - 24, required: true });
    expect(data.fields[2]).toMatchObject({ required: false });
  });

  it("serves the document to a signer who consented only, read-only, GET and HEAD alike", async () => {
    const { step, c, adaPage, bobPage, path } = await opened();
    const file = `${path}files/document.pdf`;
    await adaPage.get(path);
    // Before the consent, to a later signer, under another name: the one 404 page.
    expect((await adaPage.get(file)).statusCode).toBe(404);
    await adaPage.post(`${path}act`, { action: "consent" });
    await bobPage.get(path);
    expect((await bobPage.get(file)).statusCode).toBe(404);
    expect((await adaPage.get(`${path}files/other.pdf`)).statusCode).toBe(404);
    const before = await getStep(step.id);
    const audits = async () =>
      (
        await t.ferry.database.db
          .selectFrom("audit_entries")
          .select("id")
          .where("code", "=", "ABB-0020")
          .where("relation_key", "=", String(c.id))
          .execute()
      ).length;
    const shown = await audits();
    const got = await adaPage.get(file);
    expect(got.statusCode).toBe(200);
    expect(got.headers["content-type"]).toBe("application/pdf");
    expect(got.headers["cache-control"]).toBe("no-store");
    expect(got.rawPayload.equals(await makeAgreementPdf())).toBe(false); // another save, same shape
    expect(got.rawPayload.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    const head = await t.app.inject({
      method: "HEAD",
      url: `${adaPage.base}${file}`,
      headers: adaPage.header(),
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers["content-type"]).toBe("application/pdf");
    expect(head.headers["content-length"]).toBe(String(got.rawPayload.length));
    expect(head.headers["cache-control"]).toBe("no-store");
    expect(head.rawPayload.length).toBe(0);
    // Nothing changed: the step, its consents, and no "page loaded" entry for the file.
    expect(await getStep(step.id)).toEqual(before);
    expect(await consentCount(step.id)).toBe(1);
    expect(await audits()).toBe(shown);
    // A recipient of the container who is not a signer.
    const stranger = await addRecipient(call, c.id, { first_name: "Cy" });
    const tokens = await sendContainer(call, c.id);
    const cy = new PageBrowser(t, sessionOf(tokens, stranger).base);
    expect((await cy.get(path)).body).toContain('id="esign-stranger"');
    expect((await cy.get(file)).statusCode).toBe(404);
  });

  it("serves the document only past the container's code step", async () => {
    const s = await agreementStep(call);
    const to = "+15555553100";
    expectJson(
      await call("POST", `/v1/module_container/container/${s.c.id}/auth_code/`, { send_as: "sms", to }),
      201,
    );
    const tokens = await sendContainer(call, s.c.id);
    const link = sessionOf(tokens, s.ada).base;
    const path = `steps/${s.step.id}/`;
    const ada = new PageBrowser(t, link);
    await ada.get("");
    await ada.post("tfa/send", {});
    expect((await ada.post("tfa/verify", { code: await capturedCode(t, owner, to) })).statusCode).toBe(303);
    await ada.get(path);
    await ada.post(`${path}act`, { action: "consent" });
    expect((await ada.get(`${path}files/document.pdf`)).statusCode).toBe(200);
    // The same link in a browser that has not passed the code step.
    const other = new PageBrowser(t, link);
    expect((await other.get(`${path}files/document.pdf`)).statusCode).toBe(404);
    const head = await t.app.inject({ method: "HEAD", url: `${link}${path}files/document.pdf` });
    expect(head.statusCode).toBe(404);
  });

  it("serves nothing while the step waits for an earlier step", async () => {
    const first = await agreementStep(call);
    const waiting = expectJson(
      await call("POST", ESIGN_PATH, {
        container: first.c.id,
        title: "Second agreement",
        document: first.document,
        signers: [{ recipient: first.ada.id, role: "buyer", order: 1 }],
        fields: [
          { name: "sig", role: "buyer", type: "signature", page: 1, x: 72, y: 72, width: 200, height: 40 },
        ],
        after: [first.step.id],
      }),
      201,
    );
    const tokens = await sendContainer(call, first.c.id);
    const ada = new PageBrowser(t, sessionOf(tokens, first.ada).base);
    await ada.get(""); // the session page: its CSRF token
    const path = `steps/${waiting.id}/`;
    expect((await ada.get(path)).body).toContain('id="step-locked"');
    expect((await ada.post(`${path}act`, { action: "consent" })).statusCode).toBe(409);
    expect((await ada.get(`${path}files/document.pdf`)).statusCode).toBe(404);
    expect(await consentCount(waiting.id)).toBe(0);
  });

  it("refuses every bad finish with the page again and a clear error, storing nothing", async () => {
    const { step, adaPage, path } = await opened();
    await adaPage.get(path);
    await adaPage.post(`${path}act`, { action: "consent" });
    await adaPage.get(path);
    const good = await goodValues();
    const png = await pngDataUrl();
    const cases: [string, string, string][] = [
      ["not JSON", "{", "The signed fields did not arrive complete."],
      ["not an object", "[1]", "The signed fields did not arrive complete."],
      [
        "another role's field",
        JSON.stringify({ ...good, witness_sig: good.buyer_sig }),
        "The field witness_sig is not yours to fill.",
      ],
      ["a field of nobody", JSON.stringify({ ...good, extra: "x" }), "The field ? is not yours to fill."],
      [
        "a required text missing",
        JSON.stringify({ ...good, buyer_name: "  " }),
        "Fill in the field buyer_name.",
      ],
      [
        "a required checkbox left empty",
        JSON.stringify({ ...good, buyer_agree: false }),
        "Fill in the field buyer_agree.",
      ],
      [
        "a required signature missing",
        JSON.stringify({ ...good, buyer_sig: null }),
        "Fill in the field buyer_sig.",
      ],
      [
        "a date that does not exist",
        JSON.stringify({ ...good, buyer_date: "2026-02-30" }),
        "The field buyer_date needs a date.",
      ],
      [
        "a date that is not one",
        JSON.stringify({ ...good, buyer_date: "tomorrow" }),
        "The field buyer_date needs a date.",
      ],
      [
        "a checkbox as text",
        JSON.stringify({ ...good, buyer_agree: "on" }),
        "The field buyer_agree is a box to tick.",
      ],
      [
        "a text too long",
        JSON.stringify({ ...good, buyer_note: "x".repeat(501) }),
        "The field buyer_note takes text of at most 500 characters.",
      ],
      ["a text as a number", JSON.stringify({ ...good, buyer_name: 7 }), "The field buyer_name takes text"],
      [
        "a JPEG as the signature",
        JSON.stringify({ ...good, buyer_sig: { method: "drawn", image: "data:image/jpeg;base64,/9j/4AAQ" } }),
        "The signature or initials of buyer_sig are not a valid image.",
      ],
      [
        "a PNG that does not decode",
        JSON.stringify({
          ...good,
          buyer_sig: {
            method: "drawn",
            image: `data:image/png;base64,${Buffer.concat([Buffer.from("\x89PNG\r\n\x1a\n", "latin1"), Buffer.alloc(200, 1)]).toString("base64")}`,
          },
        }),
        "The signature or initials of buyer_sig are not a valid image.",
      ],
      [
        "a truncated PNG",
        JSON.stringify({ ...good, buyer_sig: { method: "drawn", image: png.slice(0, png.length - 40) } }),
        "The signature or initials of buyer_sig are not a valid image.",
      ],
      [
        "a PNG over the size cap",
        JSON.stringify({
          ...good,
          buyer_sig: { method: "drawn", image: `data:image/png;base64,${"A".repeat(360_000)}` },
        }),
        "The signature or initials of buyer_sig are not a valid image.",
      ],
      [
        "a typed signature without text",
        JSON.stringify({ ...good, buyer_sig: { method: "typed", text: "  ", image: png } }),
        "The typed signature or initials of buyer_sig are empty or too long.",
      ],
      [
        "a typed signature too long",
        JSON.stringify({ ...good, buyer_sig: { method: "typed", text: "A".repeat(81), image: png } }),
        "The typed signature or initials of buyer_sig are empty or too long.",
      ],
      [
        "a drawn signature carrying text",
        JSON.stringify({ ...good, buyer_sig: { method: "drawn", text: "Ada", image: png } }),
        "The signature or initials of buyer_sig are not a valid image.",
      ],
      [
        "an unknown method",
        JSON.stringify({ ...good, buyer_sig: { method: "stamped", image: png } }),
        "The signature or initials of buyer_sig are not a valid image.",
      ],
    ];
    const before = await getStep(step.id);
    for (const [what, values, message] of cases) {
      const res = await adaPage.post(`${path}act`, { values });
      expect(res.statusCode, what).toBe(400);
      expect(textOf(res.body), what).toContain(message);
      expect(res.body, what).toContain('id="step-error"');
      // The page again: the signing view, ready for another try.
      expect(res.body, what).toContain('id="fy-signing-data"');
    }
    expect(await getStep(step.id)).toEqual(before);
    // The good values sign; the stored marks are as posted.
    const ok = await adaPage.post(`${path}act`, { values: JSON.stringify(good) });
    expect(ok.statusCode).toBe(303);
    const after = await getStep(step.id);
    expect(after.status).toBe("partially_signed");
    expect(after.signers.map((s: Json) => s.status)).toEqual(["signed", "ready"]);
    const done = await adaPage.get(path);
    expect(done.body).toContain('id="esign-done"');
    expect(done.body).toContain("You signed this document. Thank you.");
  });

  it("tells a later signer to wait and refuses their acts; a decline needs a reason", async () => {
    const { step, adaPage, bobPage, path } = await opened();
    await bobPage.get(""); // the session page: its CSRF token
    const waiting = await bobPage.get(path);
    expect(waiting.body).toContain('id="esign-waiting"');
    expect(textOf(waiting.body)).toContain("Waiting for the signer before you (buyer) to sign.");
    const early = await bobPage.post(`${path}act`, { action: "consent" });
    expect(early.statusCode).toBe(409);
    expect(early.body).toContain("It is not your turn to sign");
    expect(early.body).toContain('id="esign-waiting"');
    expect(await consentCount(step.id)).toBe(0);
    await adaPage.get(path);
    // Finishing or declining before the consent is refused.
    expect((await adaPage.post(`${path}act`, { reason: "No" })).statusCode).toBe(409);
    await adaPage.post(`${path}act`, { action: "consent" });
    await adaPage.get(path);
    for (const [reason, message] of [
      ["", "Give a reason to decline."],
      ["   ", "Give a reason to decline."],
      ["x".repeat(2001), "The reason is too long: at most 2000 characters."],
    ] as const) {
      const res = await adaPage.post(`${path}act`, { reason });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(message);
    }
    expect((await getStep(step.id)).status).toBe("viewed");
    const declined = await adaPage.post(`${path}act`, { reason: "  The price is wrong.  " });
    expect(declined.statusCode).toBe(303);
    const after = await getStep(step.id);
    expect(after).toMatchObject({ status: "declined", state: "complete" });
    expect(after.signers[0]).toMatchObject({ status: "declined", declined_reason: "The price is wrong." });
    const closed = await adaPage.get(path);
    expect(closed.body).toContain('id="esign-closed"');
    expect(closed.body).toContain("The price is wrong.");
    expect((await adaPage.get(`${path}files/document.pdf`)).statusCode).toBe(404);
  });

  it("speaks every recipient language, the consent recorded as shown", async () => {
    for (const locale of SUPPORTED_LOCALES) {
      const { step, adaPage, bobPage, path } = await opened();
      const catalogue = CATALOGUES[locale];
      await adaPage.get(`${path}?lang=${locale}`); // the language cookie, then the page
      await bobPage.get(`${path}?lang=${locale}`);
      const consent = await adaPage.get(path);
      const html = textOf(consent.body);
      expect(html, locale).toContain(catalogue["esign.consentHeading"]);
      expect(html, locale).toContain(catalogue["esign.consentText"]);
      expect(html, locale).toContain(catalogue["esign.consentAgree"]);
      const waiting = textOf((await bobPage.get(path)).body);
      expect(waiting, locale).toContain(catalogue["esign.waitingTitle"]);
      await adaPage.post(`${path}act`, { action: "consent" });
      const signing = textOf((await adaPage.get(path)).body);
      expect(signing, locale).toContain(catalogue["signing.heading"]);
      expect(signing, locale).toContain(catalogue["signing.declineSummary"]);
      const refused = textOf((await adaPage.post(`${path}act`, { reason: " " })).body);
      expect(refused, locale).toContain(catalogue["esign.error.reason"]);
      const ledger = await t.ferry.database.db
        .selectFrom("consents")
        .select("text_sha256")
        .where("feature_id", "=", step.id)
        .executeTakeFirstOrThrow();
      const { createHash } = await import("node:crypto");
      expect(ledger.text_sha256, locale).toBe(
        createHash("sha256").update(catalogue["esign.consentText"], "utf8").digest("hex"),
      );
    }
  });
});
