/**
 * Test helpers for esign steps: a small letter-size PDF made with @libpdf/core, stored as a media
 * object of the account (a push file in a container of its own), and a step with two signers in
 * order (buyer, then witness) and fields of each type; the seal job run as the worker runs it.
 */
import { PDF, rgb } from "@libpdf/core";
import sharp from "sharp";
import { type ApiCall, expectJson, type Json } from "./api.js";
import { runJobHandler, type TestApp } from "./app.js";
import { addRecipient, buildContainer, pushFile } from "./containers.js";

export const ESIGN_PATH = "/v1/module_container_esign/esign/";

/** A 2-page letter PDF with a title and a few lines on each page. */
export async function makeAgreementPdf(): Promise<Buffer> {
  const pdf = PDF.create();
  for (let n = 1; n <= 2; n += 1) {
    const page = pdf.addPage({ size: "letter" });
    page.drawText(`Purchase agreement, page ${n} of 2`, { x: 72, y: 700, size: 20, color: rgb(0, 0, 0) });
    for (let line = 0; line < 10; line += 1)
      page.drawText(`Clause ${n}.${line + 1}: the buyer and the seller agree to the terms of this line.`, {
        x: 72,
        y: 640 - line * 20,
        size: 11,
        color: rgb(0.1, 0.1, 0.1),
      });
  }
  return Buffer.from(await pdf.save());
}

/** Stores `bytes` as a media object of the owner's account and returns its id. */
export async function storeDocument(call: ApiCall, bytes: Buffer): Promise<number> {
  const c = await buildContainer(call);
  const push = expectJson(
    await call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Documents" }),
    201,
  );
  return (await pushFile(call, push.id, "agreement.pdf", bytes)).id as number;
}

/** The fields of the two-signer step: the buyer fills text, a date, a checkbox and signs; the witness signs. */
export const AGREEMENT_FIELDS = [
  { name: "buyer_name", role: "buyer", type: "text", page: 1, x: 72, y: 300, width: 220, height: 24 },
  { name: "buyer_agree", role: "buyer", type: "checkbox", page: 1, x: 72, y: 260, width: 18, height: 18 },
  {
    name: "buyer_note",
    role: "buyer",
    type: "text",
    page: 1,
    x: 320,
    y: 300,
    width: 200,
    height: 24,
    required: false,
  },
  { name: "buyer_date", role: "buyer", type: "date", page: 2, x: 320, y: 150, width: 150, height: 24 },
  { name: "buyer_sig", role: "buyer", type: "signature", page: 2, x: 72, y: 140, width: 220, height: 50 },
  { name: "witness_sig", role: "witness", type: "signature", page: 2, x: 72, y: 60, width: 220, height: 50 },
];

/** A container with two recipients (Ada the buyer, then Bob the witness) and an esign step over a PDF. */
export async function agreementStep(call: ApiCall, extra: Json = {}) {
  const document = await storeDocument(call, await makeAgreementPdf());
  const c = await buildContainer(call);
  const ada = await addRecipient(call, c.id, { first_name: "Ada", last_name: "Lovelace" });
  const bob = await addRecipient(call, c.id, { first_name: "Bob", last_name: "Stone" });
  const step = expectJson(
    await call("POST", ESIGN_PATH, {
      container: c.id,
      title: "Purchase agreement",
      document,
      signers: [
        { recipient: ada.id, role: "buyer", order: 1 },
        { recipient: bob.id, role: "witness", order: 2 },
      ],
      fields: AGREEMENT_FIELDS,
      ...extra,
    }),
    201,
  );
  return { c, ada, bob, step, document };
}

/** A transparent PNG with a stroke, as a `data:` URL (what the signing view posts). */
export async function pngDataUrl(width = 300, height = 80): Promise<string> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><path d="M10 ${height / 2} Q ${width / 2} 0 ${width - 10} ${height / 2}" stroke="#142a66" stroke-width="4" fill="none"/></svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  return `data:image/png;base64,${png.toString("base64")}`;
}

/**
 * Runs every queued `esign.seal` job once, as the worker would, and removes them (a first seal of
 * a test app creates its sealing key, which takes longer than a polling helper waits).
 */
export async function sealQueued(t: TestApp): Promise<void> {
  const { db } = t.ferry.database;
  const jobs = await db
    .selectFrom("jobs")
    .selectAll()
    .where("kind", "=", "esign.seal")
    .where("state", "=", "queued")
    .execute();
  for (const job of jobs) {
    await runJobHandler(t.ferry, job.kind, JSON.parse(job.payload), job);
    await db.deleteFrom("jobs").where("id", "=", job.id).execute();
  }
}
