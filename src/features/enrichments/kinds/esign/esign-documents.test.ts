/**
 * The esign step's document through HTTP: bad documents and misplaced fields refused (422, nothing
 * created), templates (create, list, get, delete; a step made from one), the sealed PDF after two
 * sandbox signatures (downloaded by the owner, checked by poppler's pdfsig and by
 * POST /verify/document, a tampered copy reported changed) and its destruction at retention end
 * through the purge job.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson, type Json } from "../../../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  renewToken,
  type TestAccount,
  type TestApp,
} from "../../../../../test/helpers/app.js";
import {
  addRecipient,
  buildContainer,
  pushFile,
  sendContainer,
  sessionOf,
} from "../../../../../test/helpers/containers.js";
import { createDashboardUserWithClient } from "../../../../../test/helpers/dashboard.js";
import { pngDataUrl, sealQueued } from "../../../../../test/helpers/esign.js";
import { multipart } from "../../../../../test/helpers/media.js";
import { runJobsOf } from "../../../../../test/helpers/notifications.js";
import { PageBrowser } from "../../../../../test/helpers/page-browser.js";
import { encryptedPdf, textPdf } from "../../../../pdf/testing/fixtures.js";

const PATH = "/v1/module_container_esign/esign/";
const TEMPLATES = "/v1/module_container_esign/template/";

const box = (name: string, role: string, type: string, x: number, y = 100) => ({
  name,
  role,
  type,
  page: 1,
  x,
  y,
  width: 120,
  height: 30,
});

const FIELDS = [
  box("buyer_sig", "buyer", "signature", 50),
  box("buyer_date", "buyer", "date", 200),
  box("witness_sig", "witness", "signature", 350),
];

let dir: string;

/** pdfsig's report of a file (poppler-utils). */
function pdfsig(bytes: Buffer): string {
  const path = join(dir, `check-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(path, bytes);
  const out = spawnSync("pdfsig", [path], { encoding: "utf8" });
  return `${out.stdout}${out.stderr}`;
}

describe("esign documents, templates and seals", () => {
  let t: TestApp;
  let owner: TestAccount;
  const call = apiCaller(
    () => t,
    () => owner,
  );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ferry-esign-"));
    t = await createTestApp({ FERRY_ALLOW_PRIVATE_CALLBACKS: "true", ESIGN_RETENTION_DAYS: "30" });
    owner = await createTestAccount(t);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A container with two recipients and a push feature to upload files into. */
  const setup = async () => {
    const c = await buildContainer(call, { callback_url: "http://127.0.0.1:9/hook" });
    const a = await addRecipient(call, c.id, { first_name: "Ada", last_name: "Buyer" });
    const b = await addRecipient(call, c.id, { first_name: "Bob", last_name: "Witness" });
    const push = expectJson(await call("POST", "/v1/module_container_push/push/", { container: c.id }), 201);
    const upload = async (name: string, data: Buffer | Uint8Array) =>
      (await pushFile(call, push.id, name, Buffer.from(data))).id as number;
    return { c, a, b, upload };
  };
  const stepBody = (c: Json, a: { id: number }, b: { id: number }, more: Json) => ({
    container: c.id,
    title: "Purchase agreement",
    signers: [
      { recipient: a.id, role: "buyer", order: 1 },
      { recipient: b.id, role: "witness", order: 2 },
    ],
    fields: FIELDS,
    ...more,
  });

  it("refuses bad documents and misplaced fields with 422 naming the problem, creating nothing", async () => {
    const { c, a, b, upload } = await setup();
    const text = await upload("notes.pdf", Buffer.from("these are not the bytes of a PDF"));
    const locked = await upload("locked.pdf", await encryptedPdf());
    const good = await upload("contract.pdf", await textPdf(1));
    const cases: [Json, string][] = [
      [{ document: text }, "NOT_A_PDF"],
      [{ document: locked }, "PDF_ENCRYPTED"],
      [{ document: 999_999 }, "not an available file"],
      [
        { document: good, fields: [...FIELDS.slice(0, 2), box("witness_sig", "witness", "signature", 560)] },
        "witness_sig",
      ],
      [{ document: good, fields: [...FIELDS, { ...box("extra", "buyer", "text", 50), page: 2 }] }, "extra"],
      [{ document: good, fields: [...FIELDS, box("late_sig", "witness", "initials", 360, 110)] }, "late_sig"],
    ];
    for (const [more, says] of cases) {
      const res = await call("POST", PATH, stepBody(c, a, b, more));
      expect(res.statusCode, JSON.stringify(more)).toBe(422);
      expect(res.json().detail, JSON.stringify(more)).toContain(says);
    }
    expect((await call("POST", PATH, stepBody(c, a, b, { document: undefined }))).statusCode).toBe(400);
    expect(expectJson(await call("GET", `${PATH}?container=${c.id}`), 200).count).toBe(0);
    // The same document, fields in place: created.
    expectJson(await call("POST", PATH, stepBody(c, a, b, { document: good })), 201);
  });

  it("makes, lists, reads and deletes templates; a step takes a template's PDF and fields", async () => {
    const { c, a, b, upload } = await setup();
    const pdf = await upload("lease.pdf", await textPdf(2));
    const locked = await upload("locked.pdf", await encryptedPdf());
    const input = { name: "Lease", document: pdf, roles: ["buyer", "witness"], fields: FIELDS };
    expect((await call("POST", TEMPLATES, { ...input, document: locked })).statusCode).toBe(422);
    expect((await call("POST", TEMPLATES, { ...input, roles: ["buyer"] })).statusCode).toBe(422);
    expect((await call("POST", TEMPLATES, { ...input, colour: "red" })).statusCode).toBe(400);
    expect(expectJson(await call("GET", TEMPLATES), 200).count).toBe(0);
    const tpl = expectJson(await call("POST", TEMPLATES, input), 201);
    expect(tpl).toMatchObject({ name: "Lease", document: pdf, pages: 2, roles: ["buyer", "witness"] });
    expect(tpl.fields.map((f: Json) => f.name)).toEqual(["buyer_sig", "buyer_date", "witness_sig"]);
    expect(expectJson(await call("GET", `${TEMPLATES}${tpl.id}/`), 200)).toEqual(tpl);
    const list = expectJson(await call("GET", TEMPLATES), 200);
    expect(list.results.map((x: Json) => x.id)).toEqual([tpl.id]);

    const signers = stepBody(c, a, b, {}).signers;
    const fromTemplate = expectJson(
      await call("POST", PATH, { container: c.id, template: tpl.id, signers }),
      201,
    );
    expect(fromTemplate).toMatchObject({ template: tpl.id, document: pdf });
    expect(fromTemplate.fields).toEqual(tpl.fields);
    const overridden = expectJson(
      await call("POST", PATH, {
        container: c.id,
        template: tpl.id,
        signers,
        fields: [box("b", "buyer", "initials", 50, 300), box("w", "witness", "signature", 50, 400)],
      }),
      201,
    );
    expect(overridden.fields.map((f: Json) => f.name)).toEqual(["b", "w"]);
    // Roles of the template without a signer, and unknown templates, create nothing.
    expect(
      (await call("POST", PATH, { container: c.id, template: tpl.id, signers: signers.slice(0, 1) }))
        .statusCode,
    ).toBe(422);
    expect((await call("POST", PATH, { container: c.id, template: 999_999, signers })).statusCode).toBe(422);

    expect((await call("DELETE", `${TEMPLATES}${tpl.id}/`)).statusCode).toBe(204);
    expect((await call("GET", `${TEMPLATES}${tpl.id}/`)).statusCode).toBe(404);
    expect((await call("DELETE", `${TEMPLATES}${tpl.id}/`)).statusCode).toBe(404);
    // The steps made from it keep their document and fields.
    expect(expectJson(await call("GET", `${PATH}${fromTemplate.id}/`), 200).fields).toEqual(tpl.fields);
  });

  it("seals after two signers: pdfsig and /verify/document agree, a tampered copy is changed, purge destroys it", async () => {
    const { c, a, b, upload } = await setup();
    const original = Buffer.from(await textPdf(3));
    const doc = await upload("contract.pdf", original);
    const s = expectJson(await call("POST", PATH, stepBody(c, a, b, { document: doc })), 201);
    const onlooker = await addRecipient(call, c.id, { first_name: "Cy" });
    const tokens = await sendContainer(call, c.id);
    // The first signer on the step page (consent, then their fields), the second through the sandbox.
    const ada = new PageBrowser(t, sessionOf(tokens, a).base);
    await ada.get();
    await ada.get(`steps/${s.id}/`);
    expect((await ada.post(`steps/${s.id}/act`, { action: "consent" })).statusCode).toBe(303);
    await ada.get(`steps/${s.id}/`);
    const finish = await ada.post(`steps/${s.id}/act`, {
      values: JSON.stringify({
        buyer_sig: { method: "typed", text: "Ada Buyer", image: await pngDataUrl() },
        buyer_date: "2026-11-28",
      }),
    });
    expect(finish.statusCode, finish.body).toBe(303);
    expect(expectJson(await call("GET", `${PATH}${s.id}/`), 200).status).toBe("partially_signed");
    expect(expectJson(await call("POST", `/v1/sandbox/esign/${s.id}/sign/`), 200).status).toBe("sealing");
    await sealQueued(t);
    const done = expectJson(await call("GET", `${PATH}${s.id}/`), 200);
    expect(done).toMatchObject({ status: "signed", state: "complete" });
    const mediaId = done.sealed_document as number;

    const download = await call("GET", `/v1/media/${mediaId}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers["content-type"]).toContain("application/pdf");
    const sealed = download.rawPayload;
    expect(sealed.subarray(0, original.length - 10).equals(original.subarray(0, original.length - 10))).toBe(
      true,
    );
    const report = pdfsig(sealed);
    expect(report).toContain("Signature is Valid");
    expect(report).toContain("Total document signed");

    // Each signer gets a copy from the step page, as often as they like; others get none.
    for (const signer of [a, b]) {
      const browser = new PageBrowser(t, sessionOf(tokens, signer).base);
      const stepPage = await browser.get(`steps/${s.id}/`);
      expect(stepPage.body).toContain(
        `href="${sessionOf(tokens, signer).base}steps/${s.id}/files/sealed.pdf"`,
      );
      for (let i = 0; i < 2; i++) {
        const copy = await browser.get(`steps/${s.id}/files/sealed.pdf`);
        expect(copy.statusCode).toBe(200);
        expect(copy.headers["content-type"]).toBe("application/pdf");
        expect(copy.headers["content-disposition"]).toBe(`attachment; filename="signed-${s.id}.pdf"`);
        expect(copy.headers["cache-control"]).toBe("no-store");
        expect(copy.rawPayload.equals(sealed)).toBe(true);
      }
      // The document being signed is no longer served once the step is over.
      expect((await browser.get(`steps/${s.id}/files/document.pdf`)).statusCode).toBe(404);
    }
    const stranger = new PageBrowser(t, sessionOf(tokens, onlooker).base);
    await stranger.get();
    expect((await stranger.get(`steps/${s.id}/files/sealed.pdf`)).statusCode).toBe(404);
    // The old path of the signer's copy is no route at all.
    const signerPage = new PageBrowser(t, sessionOf(tokens, a).base);
    await signerPage.get();
    expect((await signerPage.get(`steps/${s.id}/document`)).statusCode).toBe(404);
    expect(expectJson(await call("GET", `/v1/media/${mediaId}/`), 200).state).toBe("available");

    const verify = async (bytes: Buffer) => {
      const body = multipart(
        {},
        { data: bytes, field: "document", filename: "doc.pdf", type: "application/pdf" },
      );
      const res = await t.app.inject({
        method: "POST",
        url: "/verify/document",
        payload: body.payload,
        headers: { ...body.headers, accept: "application/json" },
      });
      expect(res.statusCode).toBe(200);
      return res.json() as Json;
    };
    const checked = await verify(sealed);
    expect(checked).toMatchObject({ sealed_by_ferry: true, unchanged: true });
    expect(checked.sha256).toBe(createHash("sha256").update(sealed).digest("hex"));
    expect(checked.original_sha256).toBe(createHash("sha256").update(original).digest("hex"));
    expect(checked.signers.map((x: Json) => x.name)).toEqual(["Ada Buyer", "Bob Witness"]);
    expect(checked.signers[0].authentication).toEqual(["link"]);

    // One byte changed inside the first page's content stream.
    const tampered = Buffer.from(sealed);
    const at = tampered.indexOf("stream", tampered.indexOf("/Contents")) + 40;
    tampered[at] = (tampered[at] as number) ^ 0x01;
    expect(pdfsig(tampered)).not.toContain("Signature is Valid");
    expect((await verify(tampered)).unchanged).toBe(false);

    // The container page of the dashboard: each signer's state and the sealed PDF's download.
    const { client } = await createDashboardUserWithClient(t, { accountId: owner.accountId });
    const containerPage = await client.get(`/dashboard/containers/${c.id}`);
    expect(containerPage.statusCode).toBe(200);
    expect(containerPage.body).toContain(`data-signer="${a.id}"`);
    expect(containerPage.body).toMatch(new RegExp(`Recipient ${b.id} \\(witness\\): signed`));
    expect(containerPage.body).toContain(`action="/dashboard/media/${mediaId}/download"`);
    expect(containerPage.body).toContain("esign_consumer_consent");
    const fromDashboard = await client.post(`/dashboard/media/${mediaId}/download`);
    expect(fromDashboard.statusCode).toBe(200);
    expect(fromDashboard.rawPayload.equals(sealed)).toBe(true);

    // Retention end (30 days after completion): the result and the sealed PDF go.
    const { blob_key: blobKey } = await t.ferry.database.db
      .selectFrom("media_parts")
      .select("blob_key")
      .where("media_id", "=", mediaId)
      .executeTakeFirstOrThrow();
    expect(await t.ferry.blobStore.exists(blobKey)).toBe(true);
    // Stored encrypted like every upload: the blob is not the PDF.
    const stored: Buffer[] = [];
    for await (const piece of await t.ferry.blobStore.get(blobKey)) stored.push(piece as Buffer);
    const blob = Buffer.concat(stored);
    expect(blob.includes(Buffer.from("%PDF-"))).toBe(false);
    expect(blob.length).toBeGreaterThan(sealed.length);
    t.clock.advance(31 * 86_400_000);
    await t.ferry.jobs.enqueueUnlessPending(t.ferry.database.db, { kind: "enrichments.purge" }, {});
    await runJobsOf(t, "enrichments.purge");
    await runJobsOf(t, "blobs.delete");
    await renewToken(t, owner);
    expect(expectJson(await call("GET", `/v1/media/${mediaId}/`), 200).state).toBe("removed");
    expect((await call("GET", `/v1/media/${mediaId}/download`)).statusCode).toBe(410);
    const part = await t.ferry.database.db
      .selectFrom("media_parts")
      .select("blob_key")
      .where("media_id", "=", mediaId)
      .executeTakeFirst();
    expect(part).toBeUndefined();
    expect(await t.ferry.blobStore.exists(blobKey)).toBe(false);
    const after = expectJson(await call("GET", `${PATH}${s.id}/`), 200);
    expect(after).toMatchObject({ status: "signed", sealed_document: null });
  });
});
