/**
 * The provider side of the enrichment frame through HTTP, with a test kind and a fake vendor
 * registered only here: provider connections (settings sealed, never returned; bad input; one per
 * kind), a step started at the vendor from the session (consent recorded once and reused), the
 * webhook ingress (bad signature 401 with nothing stored, replay a no-op, the job applying the
 * outcome), reconciliation of a missed webhook, the consent ledger and the retention purge.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson, type Json } from "../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  renewToken,
  runJobHandler,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../../../test/helpers/containers.js";
import {
  signTestWebhook,
  TEST_DISCLOSURE,
  testKind,
  testVendor,
} from "../../../test/helpers/enrichment-test-kind.js";
import { PageBrowser } from "../../../test/helpers/page-browser.js";
import { ENRICHMENT_KINDS } from "./kinds.js";

const PATH = "/v1/module_container_testkind/testkind/";

describe("enrichment providers", () => {
  let t: TestApp;
  let owner: TestAccount;
  let other: TestAccount;
  let connection: Json;
  const call = apiCaller(
    () => t,
    () => owner,
  );

  beforeAll(async () => {
    t = await createTestApp({}, { enrichmentKinds: [...ENRICHMENT_KINDS, testKind] });
    owner = await createTestAccount(t);
    other = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  const webhookPath = () => new URL(connection.webhook_url).pathname;
  const postWebhook = (body: string, signature?: string, path = webhookPath()) =>
    t.app.inject({
      method: "POST",
      url: path,
      headers: {
        "content-type": "application/json",
        ...(signature ? { "x-test-signature": signature } : {}),
      },
      payload: body,
    });
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

  /** A sent container with one recipient and a test step; the recipient starts it from the session. */
  const startedStep = async () => {
    const c = await buildContainer(call);
    const ana = await addRecipient(call, c.id, { first_name: "Ana" });
    const step = expectJson(await call("POST", PATH, { container: c.id, note: "kyc" }), 201);
    const session = sessionOf(await sendContainer(call, c.id), ana);
    const browser = new PageBrowser(t, session.base);
    await browser.get(`steps/${step.id}/`);
    const act = await browser.post(`steps/${step.id}/act`, { accept: "1" });
    expect(act.statusCode, act.body).toBe(303);
    expect(String(act.headers.location)).toBe(`https://vendor.example/flow/tv_${step.id}`);
    return { c, step, browser, ana };
  };

  it("saves a connection with sealed settings and refuses bad ones", async () => {
    const bad: [Json, number][] = [
      [{ kind: "nope", provider: "local" }, 400],
      [{ kind: "testkind", provider: "nope" }, 400],
      [{ kind: "testkind", provider: "testvendor", credentials: { api_key: 1 } }, 400],
      [{ kind: "testkind", provider: "testvendor", credentials: { api_key: "abc", extra: "x" } }, 400],
      [{ kind: "testkind", provider: "testvendor", mode: "live", credentials: { api_key: "abc" } }, 422],
      [{ kind: "testkind", provider: "testvendor", colour: "red" }, 400],
    ];
    for (const [body, status] of bad)
      expect((await call("POST", "/v1/provider_connections/", body)).statusCode, JSON.stringify(body)).toBe(
        status,
      );
    connection = expectJson(
      await call("POST", "/v1/provider_connections/", {
        kind: "testkind",
        provider: "testvendor",
        credentials: { api_key: "sk_test_secret_value" },
      }),
      201,
    );
    expect(connection).toMatchObject({
      kind: "testkind",
      provider: "testvendor",
      mode: "test",
      has_credentials: true,
    });
    expect(connection.webhook_url).toMatch(
      /^http:\/\/ferry\.test\/v1\/providers\/testvendor\/webhook\/[A-Za-z0-9_-]{32}\/$/,
    );
    expect(JSON.stringify(connection)).not.toContain("sk_test_secret_value");
    const stored = await t.ferry.database.db.selectFrom("provider_connections").selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain("sk_test_secret_value");
    expect(
      (await call("POST", "/v1/provider_connections/", { kind: "testkind", provider: "local" })).statusCode,
    ).toBe(422);
    expect(expectJson(await call("GET", "/v1/provider_connections/"), 200)).toHaveLength(1);
    expect(
      (await call("GET", `/v1/provider_connections/${connection.id}/`, undefined, other)).statusCode,
    ).toBe(404);
    expect(expectJson(await call("GET", "/v1/provider_connections/", undefined, other), 200)).toEqual([]);
  });

  it("starts at the vendor, verifies webhooks, stores them once and applies them by job", async () => {
    const { c, step } = await startedStep();
    expect(testVendor.started.at(-1)).toMatchObject({ ref: `tv_${step.id}`, apiKey: "sk_test_secret_value" });
    expect(testVendor.started.at(-1)!.returnUrl).toMatch(/^http:\/\/ferry\.test\/steps\/return\//);
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200)).toMatchObject({
      provider: "testvendor",
      status: "started",
      state: "pending",
    });
    const secret = webhookPath().split("/").at(-2)!;
    const body = JSON.stringify({
      id: `evt_${step.id}`,
      ref: `tv_${step.id}`,
      status: "done",
      result: { score: 7 },
    });

    const before = (await inbox()).length;
    expect((await postWebhook(body)).statusCode).toBe(401);
    expect((await postWebhook(body, signTestWebhook("wrong-secret", body))).statusCode).toBe(401);
    expect((await postWebhook(body, signTestWebhook(secret, `${body} `))).statusCode).toBe(401);
    const unknown = await postWebhook(
      body,
      signTestWebhook(secret, body),
      "/v1/providers/testvendor/webhook/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/",
    );
    expect(unknown.statusCode).toBe(404);
    expect(
      (await postWebhook(body, signTestWebhook(secret, body), webhookPath().replace("testvendor", "local")))
        .statusCode,
    ).toBe(404);
    expect(await inbox()).toHaveLength(before);
    expect((unknown.json() as Json).code).toBe("RESOURCE_NOT_FOUND");

    const first = await postWebhook(body, signTestWebhook(secret, body));
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ received: 1, new: 1 });
    const replay = await postWebhook(body, signTestWebhook(secret, body));
    expect(replay.json()).toEqual({ received: 1, new: 0 });
    const rows = await inbox();
    expect(rows).toHaveLength(before + 1);
    // Stored sealed: the raw body is not readable in the table.
    expect(JSON.stringify(rows.map((r) => r.body))).not.toContain("score");
    await runWebhookJobs();
    await runWebhookJobs();
    const done = expectJson(await call("GET", `${PATH}${step.id}/`), 200);
    expect(done).toMatchObject({ state: "complete", status: "done", has_result: true });
    const own = await t.ferry.database.db
      .selectFrom("enrichment_features")
      .selectAll()
      .where("feature_id", "=", step.id)
      .executeTakeFirstOrThrow();
    expect(own.result_kid).not.toBeNull();
    expect(own.result).not.toContain("score");
    expect(expectJson(await call("GET", `/v1/module_container/container/${c.id}/`), 200).state).toBe(
      "complete",
    );
  });

  it("recovers a missed webhook by reconciliation", async () => {
    const { step } = await startedStep();
    expect(await t.ferry.enrichments.webhooks.reconcile()).toBe(0);
    testVendor.statuses.set(`tv_${step.id}`, { status: "done", final: true, result: { score: 3 } });
    expect(await t.ferry.enrichments.webhooks.reconcile()).toBe(1);
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200)).toMatchObject({
      state: "complete",
      status: "done",
    });
    expect(await t.ferry.enrichments.webhooks.reconcile()).toBe(0);
  });

  it("cancels at the vendor a pending step deleted by the owner, by job", async () => {
    const { step } = await startedStep();
    expect((await call("DELETE", `${PATH}${step.id}/`)).statusCode).toBe(204);
    const jobs = await t.ferry.database.db
      .selectFrom("jobs")
      .selectAll()
      .where("kind", "=", "enrichments.cancel")
      .where("state", "=", "queued")
      .execute();
    expect(jobs).toHaveLength(1);
    expect(testVendor.canceled).not.toContain(`tv_${step.id}`);
    await runJobHandler(t.ferry, jobs[0]!.kind, JSON.parse(jobs[0]!.payload), jobs[0]!);
    expect(testVendor.canceled).toContain(`tv_${step.id}`);
    await t.ferry.database.db.deleteFrom("jobs").where("kind", "=", "enrichments.cancel").execute();
  });

  it("cancels at the vendor a started step that expires, by job", async () => {
    const c = await buildContainer(call);
    const ana = await addRecipient(call, c.id, { first_name: "Ana" });
    const expiration = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const step = expectJson(await call("POST", PATH, { container: c.id, note: "kyc", expiration }), 201);
    const browser = new PageBrowser(t, sessionOf(await sendContainer(call, c.id), ana).base);
    await browser.get(`steps/${step.id}/`);
    expect((await browser.post(`steps/${step.id}/act`, { accept: "1" })).statusCode).toBe(303);
    t.clock.advance(61_000);
    await t.ferry.containers.lifecycle.expireDueFeatures();
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200).state).toBe("expired");
    const jobs = await t.ferry.database.db
      .selectFrom("jobs")
      .selectAll()
      .where("kind", "=", "enrichments.cancel")
      .where("state", "=", "queued")
      .execute();
    expect(jobs).toHaveLength(1);
    await runJobHandler(t.ferry, jobs[0]!.kind, JSON.parse(jobs[0]!.payload), jobs[0]!);
    expect(testVendor.canceled).toContain(`tv_${step.id}`);
    await t.ferry.database.db.deleteFrom("jobs").where("kind", "=", "enrichments.cancel").execute();
  });

  it("keeps a consent ledger reused across the session's steps", async () => {
    const c = await buildContainer(call);
    const ana = await addRecipient(call, c.id, { first_name: "Ana" });
    const one = expectJson(await call("POST", PATH, { container: c.id }), 201);
    const two = expectJson(await call("POST", PATH, { container: c.id }), 201);
    const session = sessionOf(await sendContainer(call, c.id), ana);
    const browser = new PageBrowser(t, session.base);
    await browser.get(`steps/${one.id}/`);
    expect((await browser.post(`steps/${one.id}/act`, {})).statusCode).toBe(400);
    expect((await browser.post(`steps/${one.id}/act`, { accept: "1" })).statusCode).toBe(303);
    expect((await browser.post(`steps/${two.id}/act`, { accept: "1" })).statusCode).toBe(303);
    const ledger = expectJson(
      await call("GET", `/v1/module_container/container/${c.id}/consents/`),
      200,
    ) as unknown as Json[];
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({
      container: c.id,
      recipient: ana.id,
      feature: one.id,
      disclosure_id: "test-consent",
      disclosure_version: "2026-01",
      auth_method: "link",
      text_sha256: createHash("sha256").update(TEST_DISCLOSURE.text).digest("hex"),
    });
    expect(
      (await call("GET", `/v1/module_container/container/${c.id}/consents/`, undefined, other)).statusCode,
    ).toBe(404);
  });

  it("destroys results past the kind's retention and audits it", async () => {
    const { step } = await startedStep();
    testVendor.statuses.set(`tv_${step.id}`, { status: "done", final: true, result: { score: 9 } });
    await t.ferry.enrichments.webhooks.reconcile();
    expect(await t.ferry.enrichments.webhooks.purge()).toBe(0);
    t.clock.advance(2 * 86_400_000);
    await renewToken(t, owner);
    expect(await t.ferry.enrichments.webhooks.purge()).toBeGreaterThanOrEqual(1);
    expect(expectJson(await call("GET", `${PATH}${step.id}/`), 200)).toMatchObject({
      status: "done",
      has_result: false,
    });
    const audit = await t.ferry.database.db
      .selectFrom("audit_entries")
      .select("value")
      .where("relation_key", "=", String(step.id))
      .where("related_model", "=", "feature")
      .execute();
    expect(audit.map((a) => a.value)).toContain("testkind result destroyed at retention end (1 days)");
    expect(await t.ferry.enrichments.webhooks.purge()).toBe(0);
  });
});
