/**
 * The externalurl step and the enrichment frame's owner API through HTTP: generic routes, named
 * errors, `after` order (409 while waiting, 422 for cycles and foreign ids, 409 deleting a
 * prerequisite), the owner's complete, the sandbox return, expiry, and the `feature` callbacks with
 * `feature_attr: externalurl` and the nested object.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, expectJson, type Json } from "../../../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../../../test/helpers/app.js";
import { addRecipient, buildContainer, sendContainer } from "../../../../../test/helpers/containers.js";

const PATH = "/v1/module_container_externalurl/externalurl/";

describe("externalurl steps", () => {
  let t: TestApp;
  let owner: TestAccount;
  let other: TestAccount;
  const call = apiCaller(
    () => t,
    () => owner,
  );

  beforeAll(async () => {
    t = await createTestApp({ FERRY_ALLOW_PRIVATE_CALLBACKS: "true" });
    owner = await createTestAccount(t);
    other = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  const container = async () => {
    const c = await buildContainer(call, { callback_url: "http://127.0.0.1:9/hook" });
    await addRecipient(call, c.id, { first_name: "Ada" });
    return c;
  };
  const step = async (containerId: number, fields: Json = {}) =>
    expectJson(
      await call("POST", PATH, { container: containerId, url: "https://owner.example/kyc", ...fields }),
      201,
    );
  const events = async (containerId: number) =>
    (
      await t.ferry.database.db
        .selectFrom("callback_events")
        .select(["type", "payload"])
        .where("request_id", "=", containerId)
        .orderBy("id")
        .execute()
    )
      .filter((e) => e.type === "feature")
      .map((e) => JSON.parse(e.payload) as Json);

  it("creates, lists, reads, changes and deletes a step with the generic routes", async () => {
    const c = await container();
    const s = await step(c.id, { title: "Check your bank", label: "Open my bank" });
    expect(s).toMatchObject({
      container: c.id,
      state: "pending",
      feature_attr: "externalurl",
      status: "pending",
      provider: "local",
      url: "https://owner.example/kyc",
      label: "Open my bank",
      title: "Check your bank",
      after: [],
      opened_at: null,
      returned_at: null,
    });
    const page = expectJson(await call("GET", `${PATH}?container=${c.id}`), 200);
    expect(page.count).toBe(1);
    expect(page.results[0].id).toBe(s.id);
    expect(expectJson(await call("GET", `${PATH}${s.id}/`), 200).url).toBe("https://owner.example/kyc");
    const changed = expectJson(
      await call("PATCH", `${PATH}${s.id}/`, { label: null, url: "https://owner.example/2" }),
      200,
    );
    expect(changed).toMatchObject({ label: null, url: "https://owner.example/2" });
    // Another account sees nothing; another kind's path does not find it.
    expect((await call("GET", `${PATH}${s.id}/`, undefined, other)).statusCode).toBe(404);
    expect((await call("GET", `/v1/module_container_pull/pull/${s.id}/`)).statusCode).toBe(404);
    expect((await call("DELETE", `${PATH}${s.id}/`)).statusCode).toBe(204);
    expect((await call("GET", `${PATH}${s.id}/`)).statusCode).toBe(404);
  });

  it("answers bad input with field errors and creates nothing", async () => {
    const c = await container();
    const cases: [Json, string][] = [
      [{ container: c.id }, "url"],
      [{ container: c.id, url: "http://owner.example/" }, "url"],
      [{ container: c.id, url: "ftp://owner.example/" }, "url"],
      [{ container: c.id, url: "https://user:pw@owner.example/" }, "url"],
      [{ container: c.id, url: "not a url" }, "url"],
      [{ container: c.id, url: "https://owner.example/", colour: "red" }, "colour"],
      [{ container: c.id, url: "https://owner.example/", label: "x".repeat(200) }, "label"],
      [{ container: 999999, url: "https://owner.example/" }, "container"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", PATH, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.json() as Json), JSON.stringify(body)).toContain(field);
    }
    expect(expectJson(await call("GET", `${PATH}?container=${c.id}`), 200).count).toBe(0);
    expect(
      (await call("POST", PATH, { container: c.id, url: "https://owner.example/" }, other)).statusCode,
    ).toBe(400);
  });

  it("keeps the after order: waits (409), refuses cycles and foreign ids (422) and deleting a prerequisite (409)", async () => {
    const c = await container();
    const d = await container();
    const first = await step(c.id, { title: "First" });
    const pull = expectJson(
      await call("POST", "/v1/module_container_pull/pull/", { container: c.id, after: [first.id] }),
      201,
    );
    expect(pull.after).toEqual([first.id]);
    const second = await step(c.id, { title: "Second", after: [first.id, pull.id] });
    expect(second.after).toEqual([first.id, pull.id]);
    const elsewhere = await step(d.id);
    const foreign = await call("POST", PATH, {
      container: c.id,
      url: "https://owner.example/",
      after: [elsewhere.id],
    });
    expect(foreign.statusCode).toBe(422);
    expect((await call("PATCH", `${PATH}${first.id}/`, { after: [second.id] })).statusCode).toBe(422);
    expect((await call("PATCH", `${PATH}${first.id}/`, { after: [first.id] })).statusCode).toBe(422);
    expect((await call("DELETE", `${PATH}${first.id}/`)).statusCode).toBe(409);
    await sendContainer(call, c.id);
    expect((await call("POST", `${PATH}${second.id}/complete/`)).statusCode).toBe(409);
    expect((await call("POST", `/v1/sandbox/externalurl/${second.id}/return/`)).statusCode).toBe(409);
    expect((await call("POST", `/v1/sandbox/feature/${pull.id}/complete/`, { files: [] })).statusCode).toBe(
      409,
    );
    const done = expectJson(await call("POST", `${PATH}${first.id}/complete/`), 200);
    expect(done).toMatchObject({ state: "complete", status: "completed" });
    expect((await call("POST", `${PATH}${first.id}/complete/`)).statusCode).toBe(422);
    expectJson(await call("POST", `/v1/sandbox/feature/${pull.id}/complete/`, { files: [] }), 200);
    const back = expectJson(await call("POST", `/v1/sandbox/externalurl/${second.id}/return/`), 200);
    expect(back).toMatchObject({ state: "complete", status: "returned" });
    expect(back.returned_at).toBe(back.updated);
    expect(expectJson(await call("GET", `/v1/module_container/container/${c.id}/`), 200).state).toBe(
      "complete",
    );
    const feature = (await events(c.id)).map((e) => e.feature);
    const mine = feature.filter((f) => f.feature_attr === "externalurl");
    expect(mine.map((f) => [f.id, f.state, f.externalurl.status])).toEqual([
      [first.id, "complete", "completed"],
      [second.id, "complete", "returned"],
    ]);
    expect(mine[1].after).toEqual([first.id, pull.id]);
    expect(mine[1].externalurl).toMatchObject({
      id: second.id,
      url: "https://owner.example/kyc",
      feature_attr: "externalurl",
    });
  });

  it("expires a pending step with status expired", async () => {
    const c = await container();
    const s = await step(c.id, { expiration: new Date(t.clock.now().getTime() + 60_000).toISOString() });
    await sendContainer(call, c.id);
    t.clock.advance(61_000);
    await t.ferry.containers.lifecycle.expireDueFeatures();
    expect(expectJson(await call("GET", `${PATH}${s.id}/`), 200)).toMatchObject({
      state: "expired",
      status: "expired",
    });
    expect((await call("POST", `${PATH}${s.id}/complete/`)).statusCode).toBe(422);
  });
});
