/**
 * The esign step signed through DocuSign, through HTTP against the local DocuSign fake: the account's
 * DocuSign connection, the envelope created at the first click with the document and embedded
 * signers, a fresh signing URL at each click (an expired one replaced), the return recorded but
 * never completing, completion only from a verified Connect message (bad HMAC refused with nothing
 * stored, a replay applied once) or from reconciliation, the signed PDF kept as the feature's
 * media, the owner's void at DocuSign, and a connection DocuSign cannot use refused at create.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson, type Json } from "../../../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  runJobHandler,
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
import {
  type DocuSignFake,
  minimalPdf,
  startDocuSignFake,
} from "../../../../../test/helpers/fakes/docusign.js";
import { PageBrowser } from "../../../../../test/helpers/page-browser.js";

const PATH = "/v1/module_container_esign/esign/";
const PDF = minimalPdf(["Lease agreement", "Sign below."]);

const box = (name: string, role: string, type: string, x: number) => ({
  name,
  role,
  type,
  page: 1,
  x,
  y: 100,
  width: 120,
  height: 30,
});

describe("esign through DocuSign", () => {
  let t: TestApp;
  let owner: TestAccount;
  let fake: DocuSignFake;
  let base: string;
  let connection: Json;
  const call = apiCaller(
    () => t,
    () => owner,
  );

  beforeAll(async () => {
    fake = await startDocuSignFake();
    t = await createTestApp({
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      ENRICHMENT_PROVIDERS_ALLOW_PRIVATE: "true",
    });
    base = (await listenOnLoopback(t.app)).base;
    owner = await createTestAccount(t);
    connection = expectJson(
      await call("POST", "/v1/provider_connections/", {
        kind: "esign",
        provider: "docusign",
        credentials: fake.credentials(),
      }),
      201,
    );
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const webhookUrl = () => `${base}${new URL(connection.webhook_url).pathname}`;
  const inbox = () => t.ferry.database.db.selectFrom("provider_webhook_events").selectAll().execute();
  const runWebhookJobs = async () => {
    const jobs = await t.ferry.database.db
      .selectFrom("jobs")
      .selectAll()
      .where("kind", "=", "enrichments.webhook")
      .where("state", "=", "queued")
      .execute();
    for (const job of jobs) await runJobHandler(t.ferry, job.kind, JSON.parse(job.payload), job);
    await t.ferry.database.db.deleteFrom("jobs").where("kind", "=", "enrichments.webhook").execute();
  };
  const envelopeOf = async (featureId: number): Promise<string> =>
    (
      await t.ferry.database.db
        .selectFrom("enrichment_features")
        .select("provider_ref")
        .where("feature_id", "=", featureId)
        .executeTakeFirstOrThrow()
    ).provider_ref as string;
  const esignEvents = async (containerId: number) =>
    (
      await t.ferry.database.db
        .selectFrom("callback_events")
        .select(["type", "payload"])
        .where("request_id", "=", containerId)
        .orderBy("id")
        .execute()
    )
      .filter((e) => e.type === "feature")
      .map((e) => (JSON.parse(e.payload) as Json).feature)
      .filter((f) => f.feature_attr === "esign");

  /** A sent container with signers (in order) and an esign step on an uploaded PDF. */
  const setup = async (names: string[]) => {
    const c = await buildContainer(call, { callback_url: "http://127.0.0.1:9/hook" });
    const people = [];
    for (const name of names) people.push(await addRecipient(call, c.id, { first_name: name }));
    const push = expectJson(await call("POST", "/v1/module_container_push/push/", { container: c.id }), 201);
    const doc = await pushFile(call, push.id, "lease.pdf", PDF);
    const step = expectJson(
      await call("POST", PATH, {
        container: c.id,
        title: "Lease",
        document: doc.id,
        signers: people.map((p, i) => ({ recipient: p.id, role: `role${i + 1}`, order: i + 1 })),
        fields: people.map((_, i) => box(`sig${i + 1}`, `role${i + 1}`, "signature", 50 + i * 150)),
      }),
      201,
    );
    const tokens = await sendContainer(call, c.id);
    const browsers = people.map((p) => new PageBrowser(t, sessionOf(tokens, p).base));
    return { c, people, step, browsers };
  };

  /** Clicks the step's button: answers the 303 to DocuSign's signing page. */
  const click = async (browser: PageBrowser, stepId: number) => {
    await browser.get(`steps/${stepId}/`);
    const act = await browser.post(`steps/${stepId}/act`, { action: "sign" });
    expect(act.statusCode, act.body).toBe(303);
    const url = String(act.headers.location);
    expect(new URL(url).origin).toBe(new URL(fake.baseUri).origin);
    return url;
  };

  /** The recipient at DocuSign's page presses Finish (or Decline): answers where DocuSign sends them. */
  const atDocuSign = async (signingUrl: string, action: "finish" | "decline" = "finish") => {
    const page = await fetch(signingUrl, { redirect: "manual" });
    expect(page.status).toBe(200);
    const form = new RegExp(`action="(/Signing/session/[^"]+/${action})"`).exec(await page.text());
    const done = await fetch(`${fake.baseUri}${form![1]}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: action === "decline" ? "reason=No" : "",
    });
    expect(done.status).toBe(302);
    return new URL(String(done.headers.get("location")));
  };

  /** The browser comes back through the return link DocuSign sent it to. */
  const comeBack = async (browser: PageBrowser, back: URL) => {
    const res = await t.app.inject({
      method: "GET",
      url: `${back.pathname}${back.search}`,
      headers: browser.header(),
    });
    expect(res.statusCode).toBe(303);
  };

  it("signs in order at DocuSign and completes from the verified Connect message", async () => {
    const { c, people, step, browsers } = await setup(["Ada", "Bob"]);
    const [ada, bob] = browsers as [PageBrowser, PageBrowser];
    expect(step).toMatchObject({ provider: "docusign", status: "pending", state: "pending" });

    // The step page names DocuSign as a form target; nothing exists at DocuSign before the click.
    const page = await ada.get(`steps/${step.id}/`);
    expect(page.body).toContain("Sign at DocuSign");
    expect(String(page.headers["content-security-policy"])).toContain(
      `form-action 'self' ${new URL(fake.baseUri).origin}`,
    );
    expect(await envelopeOf(step.id)).toBeNull();

    // The first click creates the envelope: the PDF, both signers embedded, in order.
    const adaUrl = await click(ada, step.id);
    const envelopeId = await envelopeOf(step.id);
    const envelope = fake.envelope(envelopeId)!;
    expect(envelope.documentPdf.equals(PDF)).toBe(true);
    expect(envelope.signers.map((s) => [s.name, s.clientUserId, s.routingOrder])).toEqual([
      ["Ada", `ferry-recipient-${people[0]!.id}`, "1"],
      ["Bob", `ferry-recipient-${people[1]!.id}`, "2"],
    ]);
    // Bob's turn has not come: his page says he waits, and an act is refused.
    await bob.get(""); // the session page: its CSRF token
    expect((await bob.get(`steps/${step.id}/`)).body).toContain('id="esign-waiting"');
    expect((await bob.post(`steps/${step.id}/act`, { action: "sign" })).statusCode).toBe(409);

    // Ada signs and comes back: recorded, not completed.
    await comeBack(ada, await atDocuSign(adaUrl));
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200)).toMatchObject({
      state: "pending",
      status: "pending",
    });
    expect((await ada.get(`steps/${step.id}/`)).body).toContain("Waiting for DocuSign to confirm");

    // Bob signs; the envelope completes at DocuSign, still not in Ferry until Connect says so.
    await comeBack(bob, await atDocuSign(await click(bob, step.id)));
    expect(fake.envelope(envelopeId)!.status).toBe("completed");
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200).state).toBe("pending");

    const delivery = await fake.sendConnect(webhookUrl(), "envelope-completed", envelopeId);
    expect(delivery.status).toBe(200);
    await runWebhookJobs();
    const done = expectJson(await call("GET", `${PATH}${step.id}/`), 200);
    expect(done).toMatchObject({ state: "complete", status: "signed" });
    expect(done.signers.map((s: Json) => s.status)).toEqual(["signed", "signed"]);
    expect(done.sealed_document).toEqual(expect.any(Number));
    const download = await call("GET", `/v1/media/${done.sealed_document}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(fake.signedPdf(envelopeId))).toBe(true);
    // Each signer downloads it from the step page, as from Ferry's own seal.
    expect((await ada.get(`steps/${step.id}/`)).body).toContain('id="esign-sealed-copy"');
    const copy = await ada.get(`steps/${step.id}/files/sealed.pdf`);
    expect(copy.statusCode).toBe(200);
    expect(copy.rawPayload.equals(fake.signedPdf(envelopeId))).toBe(true);
    expect((await esignEvents(c.id)).filter((f) => f.esign?.status === "signed")).toHaveLength(1);
  });

  it("refuses a Connect message with a bad HMAC (nothing stored) and applies a replay once", async () => {
    const { c, step, browsers } = await setup(["Cy"]);
    const cy = browsers[0]!;
    await comeBack(cy, await atDocuSign(await click(cy, step.id)));
    const envelopeId = await envelopeOf(step.id);
    const before = (await inbox()).length;

    const forged = await fake.sendConnect(webhookUrl(), "envelope-completed", envelopeId, {
      badSignature: true,
    });
    expect(forged.status).toBe(401);
    expect(await inbox()).toHaveLength(before);
    await runWebhookJobs();
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200).state).toBe("pending");

    const at = new Date().toISOString();
    const first = await fake.sendConnect(webhookUrl(), "envelope-completed", envelopeId, {
      generatedDateTime: at,
    });
    const replay = await fake.sendConnect(webhookUrl(), "envelope-completed", envelopeId, {
      generatedDateTime: at,
      retryCount: 1,
    });
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(JSON.parse(first.responseBody)).toEqual({ received: 1, new: 1 });
    expect(JSON.parse(replay.responseBody)).toEqual({ received: 1, new: 0 });
    expect(await inbox()).toHaveLength(before + 1);
    await runWebhookJobs();
    await runWebhookJobs();
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200)).toMatchObject({
      state: "complete",
      status: "signed",
    });
    expect((await esignEvents(c.id)).filter((f) => f.esign?.status === "signed")).toHaveLength(1);
  });

  it("recovers a missed Connect message by reconciliation; the return alone completes nothing", async () => {
    const { step, browsers } = await setup(["Dee"]);
    const dee = browsers[0]!;
    await comeBack(dee, await atDocuSign(await click(dee, step.id)));
    const view = expectJson(await call("GET", `${PATH}${step.id}/`), 200);
    expect(view).toMatchObject({ state: "pending", sealed_document: null });
    expect(view.signers[0].status).toBe("ready");

    expect(await t.ferry.enrichments.webhooks.reconcile()).toBeGreaterThanOrEqual(1);
    const done = expectJson(await call("GET", `${PATH}${step.id}/`), 200);
    expect(done).toMatchObject({ state: "complete", status: "signed" });
    const download = await call("GET", `/v1/media/${done.sealed_document}/download`);
    expect(download.rawPayload.equals(fake.signedPdf(await envelopeOf(step.id)))).toBe(true);
  });

  it("gives a fresh signing URL at the next click when one expired", async () => {
    const { step, browsers } = await setup(["Eve"]);
    const eve = browsers[0]!;
    const first = await click(eve, step.id);
    fake.expireSigningUrls();
    const expired = await fetch(first, { redirect: "manual" });
    expect(expired.status).toBe(302);
    const back = new URL(String(expired.headers.get("location")));
    expect(back.searchParams.get("event")).toBe("ttl_expired");
    await comeBack(eve, back);
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200).state).toBe("pending");

    const creates = () => fake.received.filter((r) => r.method === "POST" && r.path.endsWith("/envelopes"));
    const created = creates().length;
    const second = await click(eve, step.id);
    expect(second).not.toBe(first);
    expect((await fetch(second, { redirect: "manual" })).status).toBe(200);
    // The same envelope: the second click asked DocuSign for a view only.
    expect(creates()).toHaveLength(created);
  });

  it("creates one envelope for forty clicks at once; the others are told to try again", async () => {
    const { step, browsers } = await setup(["Gus"]);
    const gus = browsers[0]!;
    await gus.get(`steps/${step.id}/`);
    const creates = () => fake.received.filter((r) => r.method === "POST" && r.path.endsWith("/envelopes"));
    const before = creates().length;
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => gus.post(`steps/${step.id}/act`, { action: "sign" })),
    );
    const toDocuSign = answers.filter(
      (a) => a.statusCode === 303 && String(a.headers.location).startsWith(fake.baseUri),
    );
    expect(toDocuSign.length).toBeGreaterThanOrEqual(1);
    // Every other click either waited for the first start (409, "being prepared") or, once the
    // envelope existed, got a signing URL of that same envelope.
    for (const a of answers.filter((x) => !toDocuSign.includes(x))) {
      expect(a.statusCode, a.body).toBe(409);
      expect(a.body).toContain("Your signing is being prepared at the signing service");
    }
    expect(creates().length - before).toBe(1);
    const ref = await envelopeOf(step.id);
    expect(fake.envelope(ref)).toBeDefined();
    // A later click gets a view of that envelope.
    await click(gus, step.id);
    expect(creates().length - before).toBe(1);
  });

  it("voids at DocuSign when the owner voids, and maps a decline", async () => {
    const voided = await setup(["Fay"]);
    await click(voided.browsers[0]!, voided.step.id);
    const envelopeId = await envelopeOf(voided.step.id);
    const answer = expectJson(
      await call("POST", `${PATH}${voided.step.id}/void/`, { reason: "Wrong lease" }),
      200,
    );
    expect(answer).toMatchObject({ state: "complete", status: "voided", voided_reason: "Wrong lease" });
    expect(fake.envelope(envelopeId)).toMatchObject({ status: "voided", voidedReason: "Wrong lease" });

    const declined = await setup(["Gus"]);
    const gus = declined.browsers[0]!;
    await comeBack(gus, await atDocuSign(await click(gus, declined.step.id), "decline"));
    await fake.sendConnect(webhookUrl(), "envelope-declined", await envelopeOf(declined.step.id));
    await runWebhookJobs();
    const done = expectJson(await call("GET", `${PATH}${declined.step.id}/`), 200);
    expect(done).toMatchObject({ state: "complete", status: "declined" });
    expect(done.signers[0]).toMatchObject({ status: "declined", declined_reason: "No" });
  });

  it("refuses at create a DocuSign connection it cannot use (422) and a step without a PDF (400)", async () => {
    const { c, people } = await setup(["Hal"]);
    const noDocument = await call("POST", PATH, {
      container: c.id,
      signers: [{ recipient: people[0]!.id, role: "r", order: 1 }],
      fields: [box("s", "r", "signature", 50)],
    });
    expect(noDocument.statusCode).toBe(400);
    expect(JSON.stringify(noDocument.json())).toContain("document");

    const other = await createTestAccount(t);
    const { rsaPrivateKey: _key, ...withoutKey } = fake.credentials();
    expectJson(
      await call(
        "POST",
        "/v1/provider_connections/",
        { kind: "esign", provider: "docusign", credentials: withoutKey },
        other,
      ),
      201,
    );
    const c2 = expectJson(
      await call("POST", "/v1/module_container/container/", { page_type: "p2" }, other),
      201,
    );
    const r = await addRecipient((m, p, b) => call(m, p, b, other), c2.id, { first_name: "Ivy" });
    const before = await t.ferry.database.db.selectFrom("enrichment_features").select("feature_id").execute();
    const refused = await call(
      "POST",
      PATH,
      {
        container: c2.id,
        document: 1,
        signers: [{ recipient: r.id, role: "r", order: 1 }],
        fields: [box("s", "r", "signature", 50)],
      },
      other,
    );
    expect(refused.statusCode).toBe(422);
    expect((refused.json() as Json).detail).toContain("The DocuSign connection is not configured");
    expect(
      await t.ferry.database.db.selectFrom("enrichment_features").select("feature_id").execute(),
    ).toHaveLength(before.length);
  });
});
