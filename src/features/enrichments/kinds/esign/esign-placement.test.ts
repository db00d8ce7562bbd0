/**
 * Where the seal stamps the fields: a signer signs through the step page (consent, the signing
 * view's data, a finish post) a blank document whose fields sit at known boxes, given in the API's
 * bottom-left origin in PDF points; the seal job runs; the owner downloads the sealed PDF and
 * poppler's pdftoppm renders its pages at 72 dpi (one pixel per point). Ink is inside each expected
 * box and none at the box mirrored top to bottom; the signing view placed the same boxes.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PDF } from "@libpdf/core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson, type Json } from "../../../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../../../test/helpers/app.js";
import {
  addRecipient,
  buildContainer,
  sendContainer,
  sessionOf,
} from "../../../../../test/helpers/containers.js";
import { ESIGN_PATH, pngDataUrl, sealQueued, storeDocument } from "../../../../../test/helpers/esign.js";
import { PageBrowser } from "../../../../../test/helpers/page-browser.js";

/** A box in points, as the API takes it (x, y of its bottom-left corner). */
interface Box {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A rendered page: its pixels (RGB) and size. */
interface Raster {
  width: number;
  height: number;
  data: Buffer;
}

/** Page 1 is a blank Letter page (612 × 792); page 2 a blank Letter page turned a quarter (792 × 612 as shown). */
async function blankPdf(): Promise<Buffer> {
  const pdf = PDF.create();
  pdf.addPage({ size: "letter" });
  pdf.addPage({ size: "letter", rotate: 90 });
  return Buffer.from(await pdf.save());
}

const FIELDS = [
  { name: "sig", role: "buyer", type: "signature", page: 1, x: 72, y: 100, width: 220, height: 60 },
  { name: "agree", role: "buyer", type: "checkbox", page: 1, x: 400, y: 150, width: 30, height: 30 },
  { name: "city", role: "buyer", type: "text", page: 2, x: 500, y: 80, width: 200, height: 30 },
];

/** Dark pixels inside the rectangle (pixel rows and columns, top-left origin) of a raster. */
function inkIn(r: Raster, left: number, top: number, width: number, height: number): number {
  let dark = 0;
  for (let y = Math.max(0, Math.floor(top)); y < Math.min(r.height, Math.ceil(top + height)); y++)
    for (let x = Math.max(0, Math.floor(left)); x < Math.min(r.width, Math.ceil(left + width)); x++) {
      const i = (y * r.width + x) * 3;
      if (Math.min(r.data[i]!, r.data[i + 1]!, r.data[i + 2]!) < 160) dark++;
    }
  return dark;
}

describe("the seal stamps each field where the API placed it", () => {
  let t: TestApp;
  let owner: TestAccount;
  let dir: string;
  const call = apiCaller(
    () => t,
    () => owner,
  );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ferry-esign-place-"));
    t = await createTestApp();
    owner = await createTestAccount(t);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("renders ink inside each bottom-left box, none mirrored, as the signing view showed it", async () => {
    const document = await storeDocument(call, await blankPdf());
    const c = await buildContainer(call);
    const ada = await addRecipient(call, c.id, { first_name: "Ada", last_name: "Lovelace" });
    const step = expectJson(
      await call("POST", ESIGN_PATH, {
        container: c.id,
        title: "Placement",
        document,
        signers: [{ recipient: ada.id, role: "buyer", order: 1 }],
        fields: FIELDS,
      }),
      201,
    );
    const tokens = await sendContainer(call, c.id);
    const browser = new PageBrowser(t, sessionOf(tokens, ada).base);
    const path = `steps/${step.id}/`;
    expect((await browser.get(path)).body).toContain('id="esign-consent"');
    expect((await browser.post(`${path}act`, { action: "consent" })).statusCode).toBe(303);
    const signing = await browser.get(path);
    const data = JSON.parse(
      /<script type="application\/json" id="fy-signing-data">(.*?)<\/script>/s.exec(signing.body)![1]!,
    ) as Json;
    // The signing view's boxes: top-left origin on the page as shown.
    const shown = new Map<string, Box>(data.fields.map((f: Json) => [f.id, f]));
    const pageHeights = [792, 612];

    const finish = await browser.post(`${path}act`, {
      values: JSON.stringify({
        sig: { method: "drawn", image: await pngDataUrl(300, 80) },
        agree: true,
        city: "Lisbon",
      }),
    });
    expect(finish.statusCode).toBe(303);
    expect(expectJson(await call("GET", `${ESIGN_PATH}${step.id}/`), 200).status).toBe("sealing");
    await sealQueued(t);
    const sealedStep = expectJson(await call("GET", `${ESIGN_PATH}${step.id}/`), 200);
    expect(sealedStep.status).toBe("signed");
    const download = await call("GET", `/v1/media/${sealedStep.sealed_document}/download`);
    expect(download.statusCode).toBe(200);

    const file = join(dir, "sealed.pdf");
    writeFileSync(file, download.rawPayload);
    const run = spawnSync("pdftoppm", ["-png", "-r", "72", "-f", "1", "-l", "2", file, join(dir, "page")], {
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    const pngs = readdirSync(dir)
      .filter((n) => n.startsWith("page-") && n.endsWith(".png"))
      .sort();
    expect(pngs).toHaveLength(2);
    const rasters: Raster[] = [];
    for (const png of pngs) {
      const { data: pixels, info } = await sharp(join(dir, png))
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      rasters.push({ width: info.width, height: info.height, data: pixels });
    }
    expect(rasters.map((r) => [r.width, r.height])).toEqual([
      [612, 792],
      [792, 612],
    ]);

    for (const f of FIELDS) {
      const r = rasters[f.page - 1]!;
      const pageHeight = pageHeights[f.page - 1]!;
      // The API's box in the rendered page's pixel rows (top-left origin).
      const top = pageHeight - f.y - f.height;
      expect(inkIn(r, f.x, top, f.width, f.height), `ink in ${f.name}`).toBeGreaterThan(20);
      // Mirrored top to bottom (a y read as from the top): clean.
      expect(inkIn(r, f.x, f.y, f.width, f.height), `ink mirrored from ${f.name}`).toBe(0);
      // Nothing of the field outside its box (a 2-point margin for anti-aliasing).
      const all = inkIn(r, 0, 0, r.width, r.height);
      const inside = inkIn(r, f.x - 2, top - 2, f.width + 4, f.height + 4);
      const others = FIELDS.filter((o) => o !== f && o.page === f.page).reduce(
        (n, o) => n + inkIn(r, o.x - 2, pageHeight - o.y - o.height - 2, o.width + 4, o.height + 4),
        0,
      );
      expect(all - inside - others, `ink outside ${f.name}`).toBe(0);
      // The signing view showed the same box.
      expect(shown.get(f.name)).toMatchObject({
        page: f.page,
        x: f.x,
        y: top,
        width: f.width,
        height: f.height,
      });
    }
  });
});
