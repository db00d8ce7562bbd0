/**
 * The esign step through HTTP: create with signers and fields per role, bad input refused with
 * nothing created, signer order, the sandbox helpers signing and declining as the signer whose turn
 * it is, the owner's void, `after` ordering with another step, and the `feature` callbacks with
 * `feature_attr: esign` and the nested `esign` object.
 */
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
  pushFile,
  sendContainer,
} from "../../../../../test/helpers/containers.js";
import { sealQueued } from "../../../../../test/helpers/esign.js";
import { textPdf } from "../../../../pdf/testing/fixtures.js";

const PATH = "/v1/module_container_esign/esign/";

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

describe("esign steps", () => {
  let t: TestApp;
  let owner: TestAccount;
  const call = apiCaller(
    () => t,
    () => owner,
  );

  beforeAll(async () => {
    t = await createTestApp({ FERRY_ALLOW_PRIVATE_CALLBACKS: "true" });
    owner = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  const setup = async () => {
    const c = await buildContainer(call, { callback_url: "http://127.0.0.1:9/hook" });
    const a = await addRecipient(call, c.id, { first_name: "Ada" });
    const b = await addRecipient(call, c.id, { first_name: "Bob" });
    const push = expectJson(await call("POST", "/v1/module_container_push/push/", { container: c.id }), 201);
    document = (await pushFile(call, push.id, "contract.pdf", Buffer.from(await textPdf(1)))).id;
    return { c, a, b };
  };
  let document = 0;
  const body = (containerId: number, a: number, b: number) => ({
    container: containerId,
    document,
    signers: [
      { recipient: b, role: "witness", order: 2 },
      { recipient: a, role: "buyer", order: 1 },
    ],
    fields: [
      box("buyer_sig", "buyer", "signature", 50),
      box("buyer_date", "buyer", "date", 200),
      box("witness_sig", "witness", "signature", 350),
    ],
  });
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
      .map((e) => (JSON.parse(e.payload) as Json).feature)
      .filter((f) => f.feature_attr === "esign");

  it("signs in order with the sandbox helpers and calls back with esign{...}", async () => {
    const { c, a, b } = await setup();
    const s = expectJson(await call("POST", PATH, body(c.id, a.id, b.id)), 201);
    expect(s).toMatchObject({
      feature_attr: "esign",
      status: "pending",
      state: "pending",
      provider: "local",
    });
    expect(s.signers.map((x: Json) => [x.recipient, x.role, x.status])).toEqual([
      [a.id, "buyer", "ready"],
      [b.id, "witness", "waiting"],
    ]);
    await sendContainer(call, c.id);
    const one = expectJson(await call("POST", `/v1/sandbox/esign/${s.id}/sign/`), 200);
    expect(one).toMatchObject({ status: "partially_signed", state: "pending" });
    expect(one.signers.map((x: Json) => x.status)).toEqual(["signed", "ready"]);
    const two = expectJson(await call("POST", `/v1/sandbox/esign/${s.id}/sign/`), 200);
    expect(two).toMatchObject({ status: "sealing", state: "pending", sealed_document: null });
    expect((await call("POST", `/v1/sandbox/esign/${s.id}/sign/`)).statusCode).toBe(409);
    expect((await call("POST", `${PATH}${s.id}/void/`, { reason: "late" })).statusCode).toBe(422);
    await sealQueued(t);
    const sealed = expectJson(await call("GET", `${PATH}${s.id}/`), 200);
    expect(sealed).toMatchObject({ status: "signed", state: "complete" });
    expect(sealed.sealed_document).toEqual(expect.any(Number));
    const cbs = await events(c.id);
    expect(cbs.at(-1)).toMatchObject({
      state: "complete",
      esign: { status: "signed", sealed_document: sealed.sealed_document },
    });
    expect(cbs.filter((f) => f.state === "complete")).toHaveLength(1);
    expect(cbs.at(-1).esign.signers.map((x: Json) => x.status)).toEqual(["signed", "signed"]);
  });

  it("declines with a reason and voids by the owner", async () => {
    const { c, a, b } = await setup();
    const s = expectJson(await call("POST", PATH, body(c.id, a.id, b.id)), 201);
    const v = expectJson(await call("POST", PATH, body(c.id, a.id, b.id)), 201);
    await sendContainer(call, c.id);
    expect((await call("POST", `/v1/sandbox/esign/${s.id}/decline/`, {})).statusCode).toBe(400);
    const d = expectJson(
      await call("POST", `/v1/sandbox/esign/${s.id}/decline/`, { reason: "Wrong price" }),
      200,
    );
    expect(d).toMatchObject({ status: "declined", state: "complete" });
    expect(d.signers[0]).toMatchObject({ status: "declined", declined_reason: "Wrong price" });
    expect((await call("POST", `${PATH}${v.id}/void/`, {})).statusCode).toBe(400);
    const voided = expectJson(await call("POST", `${PATH}${v.id}/void/`, { reason: "Replaced" }), 200);
    expect(voided).toMatchObject({ status: "voided", state: "complete", voided_reason: "Replaced" });
  });

  it("refuses bad signers and fields with clear errors and creates nothing", async () => {
    const { c, a, b } = await setup();
    const good = body(c.id, a.id, b.id);
    const cases: [Json, number][] = [
      [{ ...good, signers: [] }, 400],
      [{ ...good, signers: [{ recipient: a.id, role: "buyer", order: 1, extra: 1 }] }, 400],
      [
        {
          ...good,
          signers: [
            { recipient: a.id, role: "buyer" },
            { recipient: a.id, role: "witness" },
          ],
        },
        400,
      ],
      [{ ...good, fields: [box("x", "buyer", "stamp", 1)] }, 400],
      [{ ...good, fields: [{ ...box("x", "buyer", "signature", 1), page: 0 }] }, 400],
      [{ ...good, fields: [box("x", "nobody", "signature", 1)] }, 422],
      [
        {
          ...good,
          fields: [box("a", "buyer", "signature", 50), box("b", "witness", "signature", 60)],
        },
        422,
      ],
      [{ ...good, fields: [box("a", "buyer", "signature", 50)] }, 422],
      [{ ...good, template: 1, document: 2 }, 400],
      [{ ...good, signers: [{ recipient: 999999, role: "buyer", order: 1 }, good.signers[0]] }, 422],
      [{ ...good, colour: "red" }, 400],
    ];
    for (const [input, code] of cases) {
      const res = await call("POST", PATH, input);
      expect(res.statusCode, JSON.stringify(input)).toBe(code);
    }
    expect(expectJson(await call("GET", `${PATH}?container=${c.id}`), 200).count).toBe(0);
  });

  it("waits for an after prerequisite (409) before anyone signs", async () => {
    const { c, a, b } = await setup();
    const first = expectJson(
      await call("POST", "/v1/module_container_externalurl/externalurl/", {
        container: c.id,
        url: "https://owner.example/kyc",
      }),
      201,
    );
    const s = expectJson(await call("POST", PATH, { ...body(c.id, a.id, b.id), after: [first.id] }), 201);
    expect(s.after).toEqual([first.id]);
    await sendContainer(call, c.id);
    expect((await call("POST", `/v1/sandbox/esign/${s.id}/sign/`)).statusCode).toBe(409);
    expectJson(await call("POST", `/v1/module_container_externalurl/externalurl/${first.id}/complete/`), 200);
    expect(expectJson(await call("POST", `/v1/sandbox/esign/${s.id}/sign/`), 200).status).toBe(
      "partially_signed",
    );
  });
});
